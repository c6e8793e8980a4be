#include "recon/gather/cpu_fhd.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <mutex>
#include <type_traits>
#include <stdexcept>

#include "core/error.hpp"
#include "recon/gather/fast_trig.hpp"

#include <omp.h>

#ifdef FHD_HAVE_CBLAS
#include <cblas.h>
#endif

namespace fhd {
namespace {

constexpr double kTwoPi = 6.283185307179586476925;

// t - rint(t) for floats without a libm call, so the simd loops vectorize with
// plain SSE2: adding 1.5 * 2^23 rounds to an integer (round-to-nearest mode).
// Exact for |t| < 2^22 cycles, far beyond any k.x of an image.
inline float reduce_phase(float t) {
  const float magic = 12582912.0f;  // without -ffast-math, (t + m) - m is not folded
  return t - ((t + magic) - magic);
}

// The same for double (1.5 * 2^52): std::rint is a libm call on plain x86-64.
inline double reduce_phase(double t) {
  const double magic = 6755399441055744.0;
  return t - ((t + magic) - magic);
}

// Trig mode policy: the real type of phases and sums, and sin/cos of 2 pi t.
template <TrigMode T>
struct Trig;

template <>
struct Trig<TrigMode::Double> {
  using real = double;
  static void sincos2pi(double t, double& s, double& c) {
    const double a = kTwoPi * reduce_phase(t);
    s = std::sin(a);
    c = std::cos(a);
  }
};

template <>
struct Trig<TrigMode::Single> {
  using real = float;
  static void sincos2pi(float t, float& s, float& c) {
    const float a = float(kTwoPi) * reduce_phase(t);
    s = std::sin(a);
    c = std::cos(a);
  }
};

template <>
struct Trig<TrigMode::Sfu> {
  using real = float;
  static void sincos2pi(float t, float& s, float& c) { fast_sincos2pi(reduce_phase(t), s, c); }
};

// Samples as separate real streams (what the inner loops read).
template <class Real>
struct Samples {
  std::vector<Real> kx, ky, kz, wr, wi;
  std::size_t size() const { return kx.size(); }
};

template <class Real>
Samples<Real> make_samples(const Trajectory& traj, const std::vector<cfloat>& w) {
  Samples<Real> s;
  s.kx.assign(traj.kx.begin(), traj.kx.end());
  s.ky.assign(traj.ky.begin(), traj.ky.end());
  s.kz.assign(traj.kz.begin(), traj.kz.end());
  s.wr.resize(w.size());
  s.wi.resize(w.size());
  for (std::size_t m = 0; m < w.size(); ++m) {
    s.wr[m] = w[m].real();
    s.wi[m] = w[m].imag();
  }
  return s;
}

// Output points: the grid `out` (x fastest) with coordinates for an image `img`.
template <class Real>
struct Axes {
  std::vector<Real> x, y, z;
};

template <class Real>
Axes<Real> make_axes(const ImageGrid& out, const ImageGrid& img) {
  Axes<Real> a;
  for (int i = 0; i < out.nx; ++i) a.x.push_back(Real(axis_coord(i, out.nx, img.nx)));
  for (int i = 0; i < out.ny; ++i) a.y.push_back(Real(axis_coord(i, out.ny, img.ny)));
  for (int i = 0; i < out.nz; ++i) a.z.push_back(Real(axis_coord(i, out.nz, img.nz)));
  return a;
}

// A block of computed points: rows [row0, row0 + rows) of columns
// col0 + stride * c, c < cols (a column is one (y, z) line of the output).
struct Job {
  int row0, rows;
  std::size_t col0, cols, stride;
};

// FhD: every point.
std::vector<Job> all_points(const ImageGrid& out) { return {{0, out.nx, 0, std::size_t(out.ny) * out.nz, 1}}; }

// Q: the points that Hermitian symmetry cannot supply (see fill_mirror).
// Mirror axis: z in 3D, y in 2D; planes up to index n on it are computed, and
// beyond it the lines through index 0 (whose mirror, lag +n, is off the grid).
std::vector<Job> q_half_points(const ImageGrid& dbl) {
  const std::size_t X = dbl.nx, Y = dbl.ny, Z = dbl.nz;
  std::vector<Job> jobs;
  if (Z > 1) {
    const std::size_t half = Z / 2;
    jobs.push_back({0, int(X), 0, Y * (half + 1), 1});
    jobs.push_back({0, int(X), Y * (half + 1), Z - half - 1, Y});  // jy = 0 lines
    for (std::size_t jz = half + 1; jz < Z; ++jz) jobs.push_back({0, 1, 1 + Y * jz, Y - 1, 1});  // jx = 0
  } else {
    const std::size_t half = Y / 2;
    jobs.push_back({0, int(X), 0, half + 1, 1});
    jobs.push_back({0, 1, half + 1, Y - half - 1, 1});  // jx = 0
  }
  return jobs;
}

// Q(-y) = conj(Q(y)): index j (lag j - n) mirrors to 2n - j on a doubled axis.
template <class Out>
void fill_mirror(std::vector<Out>& q, const ImageGrid& dbl) {
  const int X = dbl.nx, Y = dbl.ny, Z = dbl.nz;
  const bool three_d = Z > 1;
#pragma omp parallel for collapse(2)
  for (int jz = 0; jz < Z; ++jz)
    for (int jy = 0; jy < Y; ++jy) {
      const bool mirrored = three_d ? (jz > Z / 2 && jy > 0) : (jy > Y / 2);
      if (!mirrored) continue;
      const std::size_t dst = std::size_t(X) * (jy + std::size_t(Y) * jz);
      const std::size_t src = std::size_t(X) * ((Y - jy) + std::size_t(Y) * (three_d ? Z - jz : 0));
      for (int jx = 1; jx < X; ++jx) q[dst + jx] = std::conj(q[src + (X - jx)]);
    }
}

// ---------------------------------------------------------------- direct ----

constexpr std::size_t kTile = 1024;   // samples per tile: 5 streams x 4 KiB fit L1
constexpr int kBlockPoints = 16;      // output points that share one pass over a tile

struct Block {
  std::size_t col;
  int x0, x1;
};

std::vector<Block> make_blocks(const std::vector<Job>& jobs) {
  std::vector<Block> blocks;
  for (const Job& j : jobs)
    for (std::size_t c = 0; c < j.cols; ++c)
      for (int x = j.row0; x < j.row0 + j.rows; x += kBlockPoints)
        blocks.push_back({j.col0 + j.stride * c, x, std::min(x + kBlockPoints, j.row0 + j.rows)});
  return blocks;
}

// Sum of one tile for one point, in the trig mode's precision.
template <TrigMode T, class Real = typename Trig<T>::real>
inline void tile_sum(const Samples<Real>& s, std::size_t b0, std::size_t b1, Real x, Real y, Real z,
                     Real& re, Real& im) {
  const Real *kx = s.kx.data(), *ky = s.ky.data(), *kz = s.kz.data();
  const Real *wr = s.wr.data(), *wi = s.wi.data();
  Real sr = 0, si = 0;
#pragma omp simd reduction(+ : sr, si)
  for (std::size_t m = b0; m < b1; ++m) {
    Real sn, cs;
    Trig<T>::sincos2pi(kx[m] * x + ky[m] * y + kz[m] * z, sn, cs);
    sr += wr[m] * cs - wi[m] * sn;
    si += wr[m] * sn + wi[m] * cs;
  }
  re = sr;
  im = si;
}

// Tile sums are in the mode's precision; the sum over tiles is in double.
template <TrigMode T, class Out>
void direct_gather(const Trajectory& traj, const std::vector<cfloat>& w, const ImageGrid& out,
                   const ImageGrid& img, const std::vector<Job>& jobs, std::vector<Out>& result) {
  using Real = typename Trig<T>::real;
  const Samples<Real> s = make_samples<Real>(traj, w);
  const Axes<Real> ax = make_axes<Real>(out, img);
  const std::vector<Block> blocks = make_blocks(jobs);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::ptrdiff_t b = 0; b < std::ptrdiff_t(blocks.size()); ++b) {
    const Block& blk = blocks[std::size_t(b)];
    const Real y = ax.y[blk.col % out.ny], z = ax.z[blk.col / out.ny];
    cdouble acc[kBlockPoints] = {};
    for (std::size_t b0 = 0; b0 < s.size(); b0 += kTile) {
      const std::size_t b1 = std::min(s.size(), b0 + kTile);
      for (int ix = blk.x0; ix < blk.x1; ++ix) {
        Real re, im;
        tile_sum<T>(s, b0, b1, ax.x[ix], y, z, re, im);
        acc[ix - blk.x0] += cdouble(re, im);
      }
    }
    for (int ix = blk.x0; ix < blk.x1; ++ix) result[blk.col * out.nx + ix] = Out(acc[ix - blk.x0]);
  }
}

// ------------------------------------------------------------- separable ----

// Complex product written out: std::complex's operator* checks for NaN/inf
// through a libgcc call unless -ffast-math, which blocks vectorization.
template <class Real>
inline std::complex<Real> mul(std::complex<Real> a, std::complex<Real> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// E[i * ld + m] = exp(+i 2 pi k_m coord_i) for one axis and one chunk of samples.
template <TrigMode T, class Real = typename Trig<T>::real>
void axis_factors(const Real* k, std::size_t chunk, const std::vector<Real>& coord, std::size_t ld_point,
                  std::size_t ld_sample, std::complex<Real>* e) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(coord.size()); ++i) {
    Real sn[kTile], cs[kTile];
#pragma omp simd
    for (std::size_t m = 0; m < chunk; ++m) Trig<T>::sincos2pi(k[m] * coord[std::size_t(i)], sn[m], cs[m]);
    for (std::size_t m = 0; m < chunk; ++m) e[std::size_t(i) * ld_point + m * ld_sample] = {cs[m], sn[m]};
  }
}

// F[rows, cols] += A[rows, :] * B[:, cols], column major, for one job.
template <class Real>
void gemm_job(const Job& j, std::size_t chunk, const std::complex<Real>* A, std::size_t lda,
              const std::complex<Real>* B, std::size_t ldb_chunk, std::complex<Real>* F, std::size_t ldf) {
  if (j.cols == 0 || j.rows == 0 || chunk == 0) return;
  const std::complex<Real>* a = A + j.row0;
  const std::complex<Real>* b = B + ldb_chunk * j.col0;
  std::complex<Real>* f = F + j.row0 + ldf * j.col0;
  const std::size_t ldb = ldb_chunk * j.stride, ldc = ldf * j.stride;
#ifdef FHD_HAVE_CBLAS
  // One threading system: OpenBLAS runs single-threaded and each OpenMP thread
  // multiplies its own block of columns. Letting OpenBLAS's pthreads run beside
  // OpenMP's spin-waiting workers cost 2x on two cores (docs/performance.md).
  static std::once_flag blas_threads;
  std::call_once(blas_threads, [] { openblas_set_num_threads(1); });
  const std::complex<Real> one = 1;
#pragma omp parallel
  {
    const std::size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::size_t c0 = j.cols * t / nt, c1 = j.cols * (t + 1) / nt;
    if (c1 > c0) {
      if constexpr (std::is_same_v<Real, float>)
        cblas_cgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, j.rows, int(c1 - c0), int(chunk), &one, a, int(lda),
                    b + ldb * c0, int(ldb), &one, f + ldc * c0, int(ldc));
      else
        cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, j.rows, int(c1 - c0), int(chunk), &one, a, int(lda),
                    b + ldb * c0, int(ldb), &one, f + ldc * c0, int(ldc));
    }
  }
#else
  // Blocked fallback: each thread owns whole output columns.
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t c = 0; c < std::ptrdiff_t(j.cols); ++c)
    for (std::size_t m = 0; m < chunk; ++m) {
      const std::complex<Real> bm = b[m + ldb * std::size_t(c)];
      std::complex<Real>* fc = f + ldc * std::size_t(c);
      for (int r = 0; r < j.rows; ++r) fc[r] += mul(a[r + lda * m], bm);
    }
#endif
}

// Samples per chunk: B (chunk x columns) capped near 32 MiB of complex floats.
std::size_t chunk_size(std::size_t columns) {
  const std::size_t c = (std::size_t(1) << 22) / std::max<std::size_t>(columns, 1);
  return std::clamp<std::size_t>(c / 16 * 16, 32, 512);
}

template <TrigMode T, class Out>
void separable_gather(const Trajectory& traj, const std::vector<cfloat>& w, const ImageGrid& out,
                      const ImageGrid& img, const std::vector<Job>& jobs, std::vector<Out>& result) {
  using Real = typename Trig<T>::real;
  using Cx = std::complex<Real>;
  const Samples<Real> s = make_samples<Real>(traj, w);
  const Axes<Real> ax = make_axes<Real>(out, img);
  const std::size_t X = out.nx, Y = out.ny, Z = out.nz, cols = Y * Z;
  const std::size_t C = chunk_size(cols);
  std::vector<Cx> ex(X * C), ey(Y * C), wz(Z * C), bm(C * cols), f(X * cols);
  for (std::size_t m0 = 0; m0 < s.size(); m0 += C) {
    const std::size_t n = std::min(C, s.size() - m0);
    axis_factors<T>(s.kx.data() + m0, n, ax.x, 1, X, ex.data());  // Ex: X x C, column major
    axis_factors<T>(s.ky.data() + m0, n, ax.y, C, 1, ey.data());  // Ey: row jy is contiguous in m
    axis_factors<T>(s.kz.data() + m0, n, ax.z, C, 1, wz.data());
    for (std::size_t iz = 0; iz < Z; ++iz)  // fold the weights into the z factors
      for (std::size_t m = 0; m < n; ++m) wz[iz * C + m] = mul(wz[iz * C + m], Cx(s.wr[m0 + m], s.wi[m0 + m]));
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t c = 0; c < std::ptrdiff_t(cols); ++c) {
      const Cx* yrow = ey.data() + C * (std::size_t(c) % Y);
      const Cx* zrow = wz.data() + C * (std::size_t(c) / Y);
      Cx* bc = bm.data() + C * std::size_t(c);
#pragma omp simd
      for (std::size_t m = 0; m < n; ++m) bc[m] = mul(yrow[m], zrow[m]);
    }
    for (const Job& j : jobs) gemm_job<Real>(j, n, ex.data(), X, bm.data(), C, f.data(), X);
  }
  for (const Job& j : jobs)
    for (std::size_t c = 0; c < j.cols; ++c)
      for (int r = j.row0; r < j.row0 + j.rows; ++r) {
        const std::size_t i = r + X * (j.col0 + j.stride * c);
        result[i] = Out(f[i]);
      }
}

// ---------------------------------------------------------------- dispatch ----

template <TrigMode T, class Out>
void gather(const std::string& kernel, const Trajectory& traj, const std::vector<cfloat>& w,
            const ImageGrid& out, const ImageGrid& img, const std::vector<Job>& jobs,
            std::vector<Out>& result) {
  if (kernel == "direct")
    direct_gather<T>(traj, w, out, img, jobs, result);
  else
    separable_gather<T>(traj, w, out, img, jobs, result);
}

template <class Out>
void gather_any(const FhdOptions& opt, const Trajectory& traj, const std::vector<cfloat>& w,
                const ImageGrid& out, const ImageGrid& img, const std::vector<Job>& jobs,
                std::vector<Out>& result) {
  const std::string kernel = cpu_kernel_name(opt);
  switch (opt.trig) {
    case TrigMode::Double: return gather<TrigMode::Double>(kernel, traj, w, out, img, jobs, result);
    case TrigMode::Single: return gather<TrigMode::Single>(kernel, traj, w, out, img, jobs, result);
    case TrigMode::Sfu: return gather<TrigMode::Sfu>(kernel, traj, w, out, img, jobs, result);
  }
}

void check_trajectory(const Trajectory& traj) {
  if (traj.ky.size() != traj.size() || traj.kz.size() != traj.size())
    throw InputError("trajectory", "kx/ky/kz lengths", std::to_string(traj.size()), "must be equal");
}

}  // namespace

std::string cpu_kernel_name(const FhdOptions& opt) {
  if (opt.kernel.empty()) return "separable";
  if (opt.kernel == "direct" || opt.kernel == "separable") return opt.kernel;
  throw InputError("cpu backend", "kernel", opt.kernel, "unknown (use direct or separable)");
}

template <class Out>
std::vector<Out> fhd_any(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid,
                         const FhdOptions& opt) {
  check_trajectory(traj);
  if (mu.size() != traj.size())
    throw InputError("fhd", "mu length", std::to_string(mu.size()),
                     "must equal the trajectory length " + std::to_string(traj.size()));
  std::vector<Out> result(grid.voxels());
  gather_any(opt, traj, mu, grid, grid, all_points(grid), result);
  return result;
}

template <class Out>
std::vector<Out> q_any(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                       const FhdOptions& opt) {
  check_trajectory(traj);
  if (!w.empty() && w.size() != traj.size())
    throw InputError("q", "weights length", std::to_string(w.size()),
                     "must equal the trajectory length " + std::to_string(traj.size()));
  std::vector<cfloat> weights(traj.size(), 1.0f);
  for (std::size_t m = 0; m < w.size(); ++m) weights[m] = w[m];
  const ImageGrid dbl = grid.doubled();
  std::vector<Out> result(dbl.voxels());
  gather_any(opt, traj, weights, dbl, grid, q_half_points(dbl), result);
  fill_mirror(result, dbl);
  return result;
}

std::vector<cfloat> cpu_fhd(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid,
                            const FhdOptions& opt) {
  return fhd_any<cfloat>(traj, mu, grid, opt);
}

namespace {

// Columns (x lines) per slice of the last axis (z in 3D, y in 2D) of g.
std::size_t lines_per_slice(const ImageGrid& g) { return g.nz > 1 ? std::size_t(g.ny) : 1; }

// The columns [c0, c0 + n) of `full` (lines of out.nx values).
std::vector<cfloat> columns(const std::vector<cfloat>& full, const ImageGrid& out, std::size_t c0, std::size_t n) {
  const auto first = full.begin() + std::ptrdiff_t(c0 * std::size_t(out.nx));
  return std::vector<cfloat>(first, first + std::ptrdiff_t(n * std::size_t(out.nx)));
}

}  // namespace

std::vector<cfloat> cpu_fhd_slab(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid, int a0,
                                 int h, const FhdOptions& opt) {
  check_trajectory(traj);
  const std::size_t per = lines_per_slice(grid), c0 = per * std::size_t(a0), n = per * std::size_t(h);
  std::vector<cfloat> full(grid.voxels());
  gather_any(opt, traj, mu, grid, grid, {{0, grid.nx, c0, n, 1}}, full);
  return columns(full, grid, c0, n);
}

std::vector<cfloat> cpu_q_half_slab(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                    int a0, int h, const FhdOptions& opt) {
  check_trajectory(traj);
  std::vector<cfloat> weights(traj.size(), 1.0f);
  for (std::size_t m = 0; m < w.size(); ++m) weights[m] = w[m];
  const ImageGrid dbl = grid.doubled();
  const std::size_t per = dbl.nz > 1 ? std::size_t(dbl.ny) : 1, c0 = per * std::size_t(a0), n = per * std::size_t(h);
  std::vector<cfloat> full(dbl.voxels());
  gather_any(opt, traj, weights, dbl, grid, {{0, dbl.nx, c0, n, 1}}, full);
  return columns(full, dbl, c0, n);
}

std::vector<cfloat> cpu_q_from_half(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                    const FhdOptions& opt, const std::vector<cfloat>& half) {
  check_trajectory(traj);
  std::vector<cfloat> weights(traj.size(), 1.0f);
  for (std::size_t m = 0; m < w.size(); ++m) weights[m] = w[m];
  const ImageGrid dbl = grid.doubled();
  std::vector<Job> jobs = q_half_points(dbl);
  const std::size_t box = std::size_t(jobs[0].rows) * jobs[0].cols;  // the half box: a prefix of Q
  if (half.size() != box)
    throw std::invalid_argument("cpu q_from_half: " + std::to_string(half.size()) + " values, the half box has " +
                                std::to_string(box));
  std::vector<cfloat> q(dbl.voxels());
  std::copy(half.begin(), half.end(), q.begin());
  jobs.erase(jobs.begin());
  gather_any(opt, traj, weights, dbl, grid, jobs, q);
  fill_mirror(q, dbl);
  return q;
}
std::vector<cdouble> cpu_fhd_wide(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid,
                                  const FhdOptions& opt) {
  return fhd_any<cdouble>(traj, mu, grid, opt);
}
std::vector<cfloat> cpu_q(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                          const FhdOptions& opt) {
  return q_any<cfloat>(traj, w, grid, opt);
}
std::vector<cdouble> cpu_q_wide(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                const FhdOptions& opt) {
  return q_any<cdouble>(traj, w, grid, opt);
}

}  // namespace fhd
