// The CPU NUFFT (see nufft_cpu.hpp and docs/cpu-backend.md, "NUFFT").
//
// Point m sits at fine-grid coordinate u = k_m nf / N (mod nf) on each axis:
// exp(+i 2 pi k x_j) with x_j = j/N is N-periodic in k, which is exactly the
// nf-periodicity of the fine grid, so any k is exact. The kernel covers the
// w cells i0 .. i0 + w - 1, i0 = ceil(u - w/2).
//
// Parallel structure (FINUFFT's): points are sorted into bins once, the sorted
// order is cut into chunks, each thread spreads a chunk into its own subgrid
// (the chunk's bounding box, no wrap, no atomics), then adds the subgrid into
// the fine grid row by row under a per-row lock. Interpolation reads the
// fine grid directly and needs no synchronization.
#include "recon/nufft/nufft_cpu.hpp"

#include <cstdint>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "recon/plan/toeplitz.hpp"

namespace fhd::nufft {

namespace {

const int kMaxChunk = 8192;  // points per subproblem

// exp(x) for x in [-80, 0] to ~1e-7 relative, in plain float arithmetic the
// compiler can vectorize: 2^n by the exponent bits, 2^f by a degree-7 Taylor
// polynomial of e^(f ln 2), |f| <= 1/2.
inline float exp_neg(float x) {
  float t = x * 1.44269504f;
  int n = int(t - 0.5f);  // t <= 0: rounds to nearest
  float y = (t - float(n)) * 0.693147181f;
  float p = 1.f + y * (1.f + y * (0.5f + y * (1.f / 6 + y * (1.f / 24 + y * (1.f / 120 +
            y * (1.f / 720 + y * (1.f / 5040)))))));
  int bits = (n + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

inline int wrap(int i, int n) {
  i %= n;
  return i < 0 ? i + n : i;
}

struct Chunk {
  std::size_t begin, end;  // range of the sorted order
  int lo[3], size[3];      // bounding box of the kernels' cells (unwrapped)
};

bool power_of_two(int m) { return m > 0 && (m & (m - 1)) == 0; }

// fine_size, except powers of two from 256 up: FFTW_ESTIMATE's plans for them
// thrash the cache (256^3 single precision: 3.2 s, against 0.41 s for 270^3
// and 0.185 s for a FFTW_MEASURE plan that itself takes 17 s to make; 2 cores,
// docs/cpu-backend.md, "NUFFT"). The next even 5-smooth size is both faster and more accurate.
int cpu_fine_size(int n, const KernelParams& kp) {
  int m = fine_size(n, kp);
  if (m < 256 || !power_of_two(m)) return m;
  KernelParams wider = kp;
  wider.sigma = double(m + 1) / n;
  return fine_size(n, wider);
}

// An in-place FFT of the fine grid in two FFTW_ESTIMATE steps, 2D planes then
// 1D columns along z: twice as fast as FFTW_ESTIMATE's 3D plan at 128^3 here.
class FineFft {
 public:
  FineFft(const ImageGrid& f, cfloat* data, int sign) {
    auto* b = reinterpret_cast<fftwf_complex*>(data);
    const int plane[2] = {f.ny, f.nx}, column[1] = {f.nz}, area = f.nx * f.ny;
    std::lock_guard<std::mutex> guard(fftw_planner_lock());
    planes_ = fftwf_plan_many_dft(2, plane, f.nz, b, nullptr, 1, area, b, nullptr, 1, area, sign, FFTW_ESTIMATE);
    if (f.nz > 1)
      columns_ = fftwf_plan_many_dft(1, column, area, b, nullptr, area, 1, b, nullptr, area, 1, sign, FFTW_ESTIMATE);
    if (!planes_ || (f.nz > 1 && !columns_)) throw std::runtime_error("FFTW could not make a plan");
  }
  ~FineFft() {
    std::lock_guard<std::mutex> guard(fftw_planner_lock());
    if (planes_) fftwf_destroy_plan(planes_);
    if (columns_) fftwf_destroy_plan(columns_);
  }
  FineFft(const FineFft&) = delete;
  FineFft& operator=(const FineFft&) = delete;
  void execute() {
    fftwf_execute(planes_);
    if (columns_) fftwf_execute(columns_);
  }

 private:
  fftwf_plan planes_ = nullptr, columns_ = nullptr;
};

}  // namespace

struct CpuPlan::Impl {
  KernelParams kp;
  ImageGrid modes, finegrid;
  int len[3], nf[3], width[3];  // mode length, fine length, kernel width (1 on an idle axis)
  float half_inv;               // 2 / w
  std::size_t m = 0;
  std::vector<std::uint32_t> perm;  // sorted position -> trajectory index
  std::vector<int> i0[3];           // first kernel cell per axis, sorted order
  std::vector<float> x1[3];         // i0 - u, in [-w/2, -w/2 + 1)
  std::vector<Chunk> chunks;
  std::vector<float> deapod[3];     // 1/phihat per mode, per axis
  std::vector<cfloat> grid;         // the fine grid, FFT in place
  std::unique_ptr<std::mutex[]> row_locks;
  std::unique_ptr<FineFft> forward, backward;

  void place_points(const Trajectory& traj, const ImageGrid& image);
  void make_chunks();
  // Kernel values of sorted point p along axis a into k[0 .. width[a]).
  void kernel_values(std::size_t p, int a, float* k) const;
  void spread_chunk(const Chunk& ch, const cfloat* c, std::vector<float>& sub) const;
  template <int W>
  void spread_w(const Chunk& ch, const cfloat* c, std::vector<float>& sub) const;
  template <int W>
  void interp_w(const Chunk& ch, cfloat* out) const;
  void add_subgrid(const Chunk& ch, const std::vector<float>& sub);
  void interp_chunk(const Chunk& ch, cfloat* out) const;
  std::size_t fine_index(int i, int a) const { return std::size_t(wrap(i - len[a] / 2, nf[a])); }
};

CpuPlan::CpuPlan(const Trajectory& traj, const ImageGrid& modes, const ImageGrid& image, const Options& opt)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.kp = kernel_for(opt.tol, opt.sigma);
  s.modes = modes;
  const int n_img[3] = {image.nx, image.ny, image.nz}, n_mod[3] = {modes.nx, modes.ny, modes.nz};
  for (int a = 0; a < 3; ++a) {
    if (n_img[a] == 1 && n_mod[a] != 1) throw std::invalid_argument("nufft: an idle image axis needs 1 mode");
    if (a < 2 && n_img[a] < 2) throw std::invalid_argument("nufft: x and y need at least 2 voxels");
    s.len[a] = n_mod[a];
    s.nf[a] = n_img[a] == 1 ? 1 : cpu_fine_size(n_mod[a], s.kp);
    s.width[a] = n_img[a] == 1 ? 1 : s.kp.width;
    std::vector<double> d = deapodization(n_mod[a], s.nf[a], s.kp);
    s.deapod[a].assign(d.begin(), d.end());
  }
  s.half_inv = float(2.0 / s.kp.width);
  s.finegrid = {s.nf[0], s.nf[1], s.nf[2]};
  s.place_points(traj, image);
  s.make_chunks();
  s.grid.assign(s.finegrid.voxels(), cfloat(0));
  s.row_locks = std::make_unique<std::mutex[]>(std::size_t(s.nf[1]) * s.nf[2]);
  s.forward = std::make_unique<FineFft>(s.finegrid, s.grid.data(), FFTW_FORWARD);
  s.backward = std::make_unique<FineFft>(s.finegrid, s.grid.data(), FFTW_BACKWARD);
}

CpuPlan::~CpuPlan() = default;

const KernelParams& CpuPlan::kernel() const { return impl_->kp; }
ImageGrid CpuPlan::fine() const { return impl_->finegrid; }
std::size_t CpuPlan::points() const { return impl_->m; }

void CpuPlan::Impl::place_points(const Trajectory& traj, const ImageGrid& image) {
  m = traj.size();
  if (m >= (std::size_t(1) << 32)) throw std::invalid_argument("nufft: too many points");
  const std::vector<float>* k[3] = {&traj.kx, &traj.ky, &traj.kz};
  const int n_img[3] = {image.nx, image.ny, image.nz};
  const int bin[3] = {16, 4, 4};
  int nbins[3];
  for (int a = 0; a < 3; ++a) nbins[a] = (nf[a] + bin[a] - 1) / bin[a];
  // Fine-grid coordinates and bin of every point (trajectory order).
  std::vector<int> start[3];
  std::vector<float> off[3];
  std::vector<std::uint32_t> bin_of(m);
  for (int a = 0; a < 3; ++a) {
    start[a].assign(m, 0);
    off[a].assign(m, 0.f);
  }
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < m; ++i) {
    std::size_t b = 0;
    for (int a = 2; a >= 0; --a) {
      int cell = 0;
      if (width[a] > 1) {
        double u = double((*k[a])[i]) * nf[a] / n_img[a];
        u -= nf[a] * std::floor(u / nf[a]);
        if (u >= nf[a]) u = 0;  // rounding of a tiny negative u
        int s0 = int(std::ceil(u - 0.5 * kp.width));
        start[a][i] = s0;
        off[a][i] = float(s0 - u);
        cell = int(u) / bin[a];
      }
      b = b * nbins[a] + cell;
    }
    bin_of[i] = std::uint32_t(b);
  }
  // Counting sort by bin (z slowest, x fastest).
  std::vector<std::size_t> count(std::size_t(nbins[0]) * nbins[1] * nbins[2] + 1, 0);
  for (std::size_t i = 0; i < m; ++i) ++count[bin_of[i] + 1];
  for (std::size_t b = 1; b < count.size(); ++b) count[b] += count[b - 1];
  perm.resize(m);
  for (std::size_t i = 0; i < m; ++i) perm[count[bin_of[i]]++] = std::uint32_t(i);
  for (int a = 0; a < 3; ++a) {
    i0[a].resize(m);
    x1[a].resize(m);
    for (std::size_t p = 0; p < m; ++p) {
      i0[a][p] = start[a][perm[p]];
      x1[a][p] = off[a][perm[p]];
    }
  }
}

void CpuPlan::Impl::make_chunks() {
  for (std::size_t b = 0; b < m; b += kMaxChunk) {
    Chunk ch{b, std::min(m, b + kMaxChunk), {0, 0, 0}, {1, 1, 1}};
    for (int a = 0; a < 3; ++a) {
      auto [lo, hi] = std::minmax_element(i0[a].begin() + b, i0[a].begin() + ch.end);
      ch.lo[a] = *lo;
      ch.size[a] = *hi - *lo + width[a];
    }
    chunks.push_back(ch);
  }
}

void CpuPlan::Impl::kernel_values(std::size_t p, int a, float* k) const {
  const int w = width[a];
  if (w == 1) {
    k[0] = 1.f;
    return;
  }
  const float x = x1[a][p], beta = float(kp.beta);
#pragma omp simd
  for (int i = 0; i < w; ++i) {
    float t = (x + float(i)) * half_inv;
    float s = 1.f - t * t;
    k[i] = s > 0.f ? exp_neg(beta * (std::sqrt(s) - 1.f)) : 0.f;
  }
}

// The x width W is a template parameter so that the innermost loops (the hot
// ones: w^3 complex multiply-adds per point) unroll and vectorize.
template <int W>
void CpuPlan::Impl::spread_w(const Chunk& ch, const cfloat* c, std::vector<float>& sub) const {
  const std::size_t sx = ch.size[0], sy = ch.size[1];
  sub.assign(2 * sx * sy * ch.size[2], 0.f);
  const int wy = width[1], wz = width[2];
  float kx[W], ky[16], kz[16], kx2[2 * W];
  for (std::size_t p = ch.begin; p < ch.end; ++p) {
    kernel_values(p, 0, kx);
    kernel_values(p, 1, ky);
    kernel_values(p, 2, kz);
    for (int i = 0; i < W; ++i) kx2[2 * i] = kx2[2 * i + 1] = kx[i];
    const cfloat v = c[perm[p]];
    const std::size_t ox = i0[0][p] - ch.lo[0], oy = i0[1][p] - ch.lo[1], oz = i0[2][p] - ch.lo[2];
    for (int dz = 0; dz < wz; ++dz)
      for (int dy = 0; dy < wy; ++dy) {
        const float f = ky[dy] * kz[dz], vr = v.real() * f, vi = v.imag() * f;
        float* row = sub.data() + 2 * (ox + sx * (oy + dy + sy * (oz + dz)));
        for (int j = 0; j < 2 * W; j += 2) {
          row[j] += vr * kx2[j];
          row[j + 1] += vi * kx2[j + 1];
        }
      }
  }
}

void CpuPlan::Impl::add_subgrid(const Chunk& ch, const std::vector<float>& sub) {
  const int sx = ch.size[0], sy = ch.size[1], sz = ch.size[2];
  std::vector<int> gx(sx);
  for (int x = 0; x < sx; ++x) gx[x] = wrap(ch.lo[0] + x, nf[0]);
  for (int z = 0; z < sz; ++z)
    for (int y = 0; y < sy; ++y) {
      const std::size_t row = std::size_t(wrap(ch.lo[1] + y, nf[1])) + std::size_t(nf[1]) * wrap(ch.lo[2] + z, nf[2]);
      const float* src = sub.data() + 2 * std::size_t(sx) * (y + std::size_t(sy) * z);
      cfloat* dst = grid.data() + row * nf[0];
      std::lock_guard<std::mutex> guard(row_locks[row]);
      for (int x = 0; x < sx; ++x) dst[gx[x]] += cfloat(src[2 * x], src[2 * x + 1]);
    }
}

template <int W>
void CpuPlan::Impl::interp_w(const Chunk& ch, cfloat* out) const {
  const int wy = width[1], wz = width[2];
  float kx[W], ky[16], kz[16];
  int gx[W];
  const float* g = reinterpret_cast<const float*>(grid.data());
  for (std::size_t p = ch.begin; p < ch.end; ++p) {
    kernel_values(p, 0, kx);
    kernel_values(p, 1, ky);
    kernel_values(p, 2, kz);
    const int x0 = i0[0][p];
    const bool inside = x0 >= 0 && x0 + W <= nf[0];
    for (int dx = 0; dx < W; ++dx) gx[dx] = inside ? x0 + dx : wrap(x0 + dx, nf[0]);
    float sr = 0.f, si = 0.f;
    for (int dz = 0; dz < wz; ++dz)
      for (int dy = 0; dy < wy; ++dy) {
        const std::size_t row = std::size_t(wrap(i0[1][p] + dy, nf[1])) + std::size_t(nf[1]) * wrap(i0[2][p] + dz, nf[2]);
        const float* r = g + 2 * row * nf[0];
        float tr = 0.f, ti = 0.f;
        if (inside) {
          const float* q = r + 2 * x0;
          for (int dx = 0; dx < W; ++dx) {
            tr += q[2 * dx] * kx[dx];
            ti += q[2 * dx + 1] * kx[dx];
          }
        } else {
          for (int dx = 0; dx < W; ++dx) {
            tr += r[2 * gx[dx]] * kx[dx];
            ti += r[2 * gx[dx] + 1] * kx[dx];
          }
        }
        const float f = ky[dy] * kz[dz];
        sr += tr * f;
        si += ti * f;
      }
    out[perm[p]] = cfloat(sr, si);
  }
}

void CpuPlan::Impl::spread_chunk(const Chunk& ch, const cfloat* c, std::vector<float>& sub) const {
  switch (width[0]) {
#define FHD_SPREAD_CASE(W) \
  case W:                  \
    return spread_w<W>(ch, c, sub);
    FHD_SPREAD_CASE(2) FHD_SPREAD_CASE(3) FHD_SPREAD_CASE(4) FHD_SPREAD_CASE(5) FHD_SPREAD_CASE(6)
    FHD_SPREAD_CASE(7) FHD_SPREAD_CASE(8) FHD_SPREAD_CASE(9) FHD_SPREAD_CASE(10) FHD_SPREAD_CASE(11)
    FHD_SPREAD_CASE(12) FHD_SPREAD_CASE(13) FHD_SPREAD_CASE(14) FHD_SPREAD_CASE(15) FHD_SPREAD_CASE(16)
#undef FHD_SPREAD_CASE
  }
  throw std::logic_error("nufft: kernel width outside 2..16");
}

void CpuPlan::Impl::interp_chunk(const Chunk& ch, cfloat* out) const {
  switch (width[0]) {
#define FHD_INTERP_CASE(W) \
  case W:                  \
    return interp_w<W>(ch, out);
    FHD_INTERP_CASE(2) FHD_INTERP_CASE(3) FHD_INTERP_CASE(4) FHD_INTERP_CASE(5) FHD_INTERP_CASE(6)
    FHD_INTERP_CASE(7) FHD_INTERP_CASE(8) FHD_INTERP_CASE(9) FHD_INTERP_CASE(10) FHD_INTERP_CASE(11)
    FHD_INTERP_CASE(12) FHD_INTERP_CASE(13) FHD_INTERP_CASE(14) FHD_INTERP_CASE(15) FHD_INTERP_CASE(16)
#undef FHD_INTERP_CASE
  }
  throw std::logic_error("nufft: kernel width outside 2..16");
}

std::vector<cfloat> CpuPlan::type1(const std::vector<cfloat>& c) {
  Impl& s = *impl_;
  if (c.size() != s.m) throw std::invalid_argument("nufft type 1: need one value per trajectory point");
  std::fill(s.grid.begin(), s.grid.end(), cfloat(0));
#pragma omp parallel
  {
    std::vector<float> sub;
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < s.chunks.size(); ++i) {
      s.spread_chunk(s.chunks[i], c.data(), sub);
      s.add_subgrid(s.chunks[i], sub);
    }
  }
  s.backward->execute();
  std::vector<cfloat> f(s.modes.voxels());
  const int lx = s.len[0], ly = s.len[1], lz = s.len[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < lz; ++z)
    for (int y = 0; y < ly; ++y) {
      const float dyz = s.deapod[1][y] * s.deapod[2][z];
      const cfloat* src = s.grid.data() + s.nf[0] * (s.fine_index(y, 1) + std::size_t(s.nf[1]) * s.fine_index(z, 2));
      cfloat* dst = f.data() + std::size_t(lx) * (y + std::size_t(ly) * z);
      for (int x = 0; x < lx; ++x) dst[x] = src[s.fine_index(x, 0)] * (dyz * s.deapod[0][x]);
    }
  return f;
}

std::vector<cfloat> CpuPlan::type2(const std::vector<cfloat>& f) {
  Impl& s = *impl_;
  if (f.size() != s.modes.voxels()) throw std::invalid_argument("nufft type 2: need one value per mode");
  std::fill(s.grid.begin(), s.grid.end(), cfloat(0));
  const int lx = s.len[0], ly = s.len[1], lz = s.len[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < lz; ++z)
    for (int y = 0; y < ly; ++y) {
      const float dyz = s.deapod[1][y] * s.deapod[2][z];
      cfloat* dst = s.grid.data() + s.nf[0] * (s.fine_index(y, 1) + std::size_t(s.nf[1]) * s.fine_index(z, 2));
      const cfloat* src = f.data() + std::size_t(lx) * (y + std::size_t(ly) * z);
      for (int x = 0; x < lx; ++x) dst[s.fine_index(x, 0)] = src[x] * (dyz * s.deapod[0][x]);
    }
  s.forward->execute();
  std::vector<cfloat> c(s.m);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t i = 0; i < s.chunks.size(); ++i) s.interp_chunk(s.chunks[i], c.data());
  return c;
}

std::vector<cfloat> q_by_nufft(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                               const Options& opt) {
  if (!w.empty() && w.size() != traj.size()) throw std::invalid_argument("nufft Q: need one weight per point");
  CpuPlan plan(traj, grid.doubled(), grid, opt);
  std::vector<cfloat> c(traj.size(), cfloat(1));
  for (std::size_t i = 0; i < w.size(); ++i) c[i] = w[i];
  return plan.type1(c);
}

}  // namespace fhd::nufft
