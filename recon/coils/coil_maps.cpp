// Coil sensitivity estimation (recon/coils/coil_maps.hpp, docs/coils.md).
#include "recon/coils/coil_maps.hpp"

#include <cstdint>
#include <fftw3.h>

#include <algorithm>
#include <array>
#include <memory>
#include <cmath>
#include <complex>
#include <mutex>

#include <spdlog/spdlog.h>

#include "recon/gridding/dcf.hpp"
#include "core/error.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/nufft/nufft_kernels.hpp"
#include "recon/plan/toeplitz.hpp"
#include "recon/coils/grid_index.hpp"

namespace fhd {
namespace {

using grid_index::for_each_index;
using grid_index::linear;

constexpr double kPi = 3.14159265358979323846;

// Position of centred index c (frequency or position c - n/2) in FFTW's order.
std::size_t unshift(int c, int n) { return std::size_t(((c - n / 2) % n + n) % n); }

// Index on `big` of index q on the centred `small` grid (same frequency).
std::size_t embed(int qx, int qy, int qz, const ImageGrid& small, const ImageGrid& big) {
  return linear(big.nx / 2 - small.nx / 2 + qx, big.ny / 2 - small.ny / 2 + qy, big.nz / 2 - small.nz / 2 + qz, big);
}

// 0.5 (1 + cos(2 pi (q - n/2) / n)): 1 at k = 0, 0 at the lowest frequency; 1 on an axis of 1.
double hann(int q, int n) { return n == 1 ? 1.0 : 0.5 * (1 + std::cos(2 * kPi * (q - n / 2) / n)); }

std::vector<cdouble> to_double(const std::vector<cfloat>& v) { return std::vector<cdouble>(v.begin(), v.end()); }

}  // namespace

void centered_dft(std::vector<cdouble>& v, const ImageGrid& g, int sign) {
  const std::size_t nv = g.voxels();
  fftw_complex* buf = fftw_alloc_complex(nv);
  for_each_index(g, [&](int x, int y, int z) {
    const cdouble a = v[linear(x, y, z, g)];
    const std::size_t at = unshift(x, g.nx) + std::size_t(g.nx) * (unshift(y, g.ny) + std::size_t(g.ny) * unshift(z, g.nz));
    buf[at][0] = a.real();
    buf[at][1] = a.imag();
  });
  fftw_plan plan;
  {
    std::lock_guard<std::mutex> lock(fftw_planner_lock());
    plan = fftw_plan_dft_3d(g.nz, g.ny, g.nx, buf, buf, sign < 0 ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
  }
  fftw_execute(plan);
  {
    std::lock_guard<std::mutex> lock(fftw_planner_lock());
    fftw_destroy_plan(plan);
  }
  for_each_index(g, [&](int x, int y, int z) {
    const std::size_t at = unshift(x, g.nx) + std::size_t(g.nx) * (unshift(y, g.ny) + std::size_t(g.ny) * unshift(z, g.nz));
    v[linear(x, y, z, g)] = cdouble(buf[at][0], buf[at][1]);
  });
  fftw_free(buf);
}

ImageGrid calibration_size(const ImageGrid& grid, int cal) {
  if (cal < 4) throw InputError("coil maps", "calibration size", std::to_string(cal), "must be >= 4");
  auto axis = [cal](int n) { return n == 1 ? 1 : std::min(cal, n); };
  return {axis(grid.nx), axis(grid.ny), axis(grid.nz)};
}

Calibration calibration_from_images(const CoilData& images, const ImageGrid& grid, int cal) {
  Calibration out{calibration_size(grid, cal), CoilData(images.size())};
  for (const auto& img : images)
    if (img.size() != grid.voxels())
      throw std::invalid_argument("calibration_from_images: an image has " + std::to_string(img.size()) + " voxels");
  // Coils in parallel: one after another they took 6-8 ms of the coil maps
  // stage at 8 coils of 32^3 on the GPU host.
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t c = 0; c < std::ptrdiff_t(images.size()); ++c) {
    std::vector<cdouble> k = to_double(images[c]);
    centered_dft(k, grid, -1);
    std::vector<cfloat>& centre = out.kspace[c];
    centre.resize(out.size.voxels());
    for_each_index(out.size, [&](int x, int y, int z) {
      centre[linear(x, y, z, out.size)] = cfloat(k[embed(x, y, z, out.size, grid)]);
    });
  }
  return out;
}

namespace {

// The calibration's images (docs/coils.md): the low-resolution grid holds the
// calibration region plus a margin of kCalibrationMargin cycles/FOV per side.
// Only samples inside it less a gridding kernel's reach (1 cycle/FOV for width
// 4 at oversampling 2; chosen when these images were gridded, kept since) are
// used: a fifth of a 3D radial scan at 128^3 instead of all of it.
constexpr int kCalibrationMargin = 4;

// The calibration images come from one batched type 1 NUFFT of every coil
// (calibration_images) accurate to this: far below the maps' own error (their
// smoothing, the noise), and a kernel of width 6 on a grid of 32^3.
constexpr double kCalibrationTol = 1e-5;

ImageGrid calibration_grid(const ImageGrid& full, const ImageGrid& cal) {
  auto axis = [](int c, int n) { return c == 1 ? 1 : std::min(n, c + 2 * kCalibrationMargin); };
  return {axis(cal.nx, full.nx), axis(cal.ny, full.ny), axis(cal.nz, full.nz)};
}

// Half the extent each axis keeps (infinite where the low grid is the full one:
// every sample is kept, as full-resolution gridding would).
std::array<double, 3> kept_extent(const ImageGrid& low, const ImageGrid& full, const GridKernel& kernel) {
  const double reach = 0.5 * kernel.width / kernel.oversampling;
  auto axis = [reach](int l, int n) { return l == n ? HUGE_VAL : 0.5 * l - reach; };
  return {axis(low.nx, full.nx), axis(low.ny, full.ny), axis(low.nz, full.nz)};
}

// Indices of the samples with |k| inside `half` on every axis, or inside the
// ball of radius `radius` (when finite).
std::vector<std::size_t> samples_within(const Trajectory& t, const std::array<double, 3>& half, double radius) {
  std::vector<std::size_t> kept;
  for (std::size_t m = 0; m < t.size(); ++m) {
    const double x = t.kx[m], y = t.ky[m], z = t.kz[m];
    if (std::isfinite(radius) ? x * x + y * y + z * z <= radius * radius
                              : std::fabs(x) <= half[0] && std::fabs(y) <= half[1] && std::fabs(z) <= half[2])
      kept.push_back(m);
  }
  return kept;
}

template <class T>
std::vector<T> pick(const std::vector<T>& v, const std::vector<std::size_t>& at) {
  std::vector<T> out(at.size());
  for (std::size_t i = 0; i < at.size(); ++i) out[i] = v[at[i]];
  return out;
}

Trajectory pick(const Trajectory& t, const std::vector<std::size_t>& at) {
  Trajectory out;
  out.kx = pick(t.kx, at);
  out.ky = pick(t.ky, at);
  out.kz = pick(t.kz, at);
  return out;
}

// Density weights of the kept samples. Computed on a ball around the kept box
// (radius: its corner plus one cycle/FOV), not on the whole scan: radial
// weights per shell are then exact inside the box (only the ball's outermost
// shell is off), and Pipe-Menon's iteration settles locally.
std::vector<float> calibration_weights(const Scan& s, const std::array<double, 3>& half,
                                       const std::vector<std::size_t>& kept, const std::string& method) {
  if (!s.dcf.empty()) return pick(s.dcf, kept);
  auto named = s.provenance.find("trajectory");
  std::string kind = effective_kind(s.traj, named == s.provenance.end() ? "" : named->second);
  if (kind.empty()) kind = "an imported trajectory (not radial)";
  double corner = 0;
  for (double h : half) corner += std::isfinite(h) && h > 0 ? h * h : 0.0;
  const bool boxed = std::isfinite(half[0]) && std::isfinite(half[1]) && std::isfinite(half[2]);
  if (!boxed) return pick(density_weights(s.traj, s.grid, method, kind), kept);
  const std::vector<std::size_t> ball = samples_within(s.traj, half, std::sqrt(corner) + 1.0);
  const std::vector<float> w = density_weights(pick(s.traj, ball), s.grid, method, kind);
  std::vector<float> out;
  out.reserve(kept.size());
  for (std::size_t i = 0, j = 0; i < kept.size(); ++i) {  // kept is a subset of ball, both ascending
    while (ball[j] != kept[i]) ++j;
    out.push_back(w[j]);
  }
  return out;
}

}  // namespace

CalibrationSamples calibration_samples(const std::vector<const Scan*>& coils, int cal, const std::string& dcf_method) {
  if (coils.empty()) throw InputError("coil maps: no coils");
  const Scan& s = *coils[0];
  CalibrationSamples out;
  out.low = calibration_grid(s.grid, calibration_size(s.grid, cal));
  const std::array<double, 3> half = kept_extent(out.low, s.grid, GridKernel{});
  const std::vector<std::size_t> kept = samples_within(s.traj, half, HUGE_VAL);
  // Maps from no data would be zero everywhere, and SENSE with them nothing.
  if (kept.empty())
    throw InputError("coil maps", "samples near the centre", "0",
                     "no sample lies in the calibration region (" + dims_string(out.low) +
                         " cycles/FOV around k = 0): give a larger --calibration, or combine by rss");
  const std::vector<float> dcf = calibration_weights(s, half, kept, dcf_method);
  out.traj = pick(s.traj, kept);
  // Weighted here, beside the GPU's start, not in the coil maps stage.
  const std::size_t m = kept.size();
  out.coils = coils.size();
  out.weighted.resize(m * coils.size());
  for (std::size_t c = 0; c < coils.size(); ++c) {
    if (coils[c]->data.size() != s.traj.size())
      throw InputError("coil maps", "coil " + std::to_string(c) + " samples", std::to_string(coils[c]->data.size()),
                       "differs from the trajectory's " + std::to_string(s.traj.size()));
    for (std::size_t j = 0; j < m; ++j) out.weighted[c * m + j] = coils[c]->data[kept[j]] * dcf[j];
  }
  spdlog::debug("coil maps: {} samples near the centre, their density weights made", kept.size());
  return out;
}

CoilData calibration_images(Device& dev, const CalibrationSamples& s) {
  const std::size_t m = s.traj.size(), coils = s.coils, v = s.low.voxels();
  if (s.weighted.size() != m * coils)
    throw InputError("coil maps", "calibration data", std::to_string(s.weighted.size()),
                     "is not " + std::to_string(coils) + " coils of " + std::to_string(m) + " samples");
  const std::unique_ptr<Points> points = dev.upload_points(s.traj);
  const std::unique_ptr<NufftPlan> plan = dev.kernels<NufftKernels>().plan(*points, s.low, s.low, kCalibrationTol);
  const VecPtr c = dev.upload(s.weighted);
  const VecPtr f = dev.zeros(v * coils);
  plan->type1_batch(*c, *f, int(coils));
  dev.scale(1.0 / double(v), *f);
  const std::vector<cfloat> all = dev.download(*f);
  CoilData images(coils);
  for (std::size_t k = 0; k < coils; ++k)
    images[k].assign(all.begin() + std::ptrdiff_t(k * v), all.begin() + std::ptrdiff_t((k + 1) * v));
  return images;
}

Calibration calibration_from_samples(Device& dev, const CalibrationSamples& s, int cal) {
  // The image on `low` is the object times (full voxels / low voxels), and
  // its DFT sums over low voxels only: the calibration data come out on the
  // full-resolution scale.
  const CoilData images = calibration_images(dev, s);
  spdlog::debug("coil maps: {} coils' calibration images made on {}", s.coils, dims_string(s.low));
  return calibration_from_images(images, s.low, cal);
}

Calibration calibration_from_scans(Device& dev, const std::vector<const Scan*>& coils, int cal,
                                   const std::string& dcf_method) {
  return calibration_from_samples(dev, calibration_samples(coils, cal, dcf_method), cal);
}

Calibration calibration_from_scans(Device& dev, const std::vector<Scan>& coils, int cal,
                                   const std::string& dcf_method) {
  std::vector<const Scan*> ptrs;
  for (const Scan& c : coils) ptrs.push_back(&c);
  return calibration_from_scans(dev, ptrs, cal, dcf_method);
}

namespace {

// The zero-padded inverse centred DFT, pruned: data on the centred `small`
// grid go to `big` one axis at a time, and each pass transforms only the lines
// that hold data (x: small.ny * small.nz lines; y: big.nx * small.nz; z: all
// big.nx * big.ny). In float, lines in parallel: at 128^3 with a 24^3 centre
// about 1.3 full FFT passes instead of 3, and no float64 buffers.
class PaddedInverse {
 public:
  PaddedInverse(const ImageGrid& small, const ImageGrid& big) : small_(small), big_(big) {
    const int c[3] = {small.nx, small.ny, small.nz}, n[3] = {big.nx, big.ny, big.nz};
    for (int a = 0; a < 3; ++a) {
      for (int i = 0; i < 3; ++i) dims_[a][i] = i < a ? n[i] : c[i];  // array shape before pass a
      dims_[a][a] = n[a];                                              // (after placing: axis a full)
    }
    scratch_ = fftwf_alloc_complex(std::max(volume(dims_[0]), volume(dims_[1])));
    for (int a = 0; a < 3; ++a) plans_[a] = make_pass_plan(a);
  }
  ~PaddedInverse() {
    std::lock_guard<std::mutex> lock(fftw_planner_lock());
    for (fftwf_plan p : plans_) fftwf_destroy_plan(p);
    fftwf_free(scratch_);
  }
  PaddedInverse(const PaddedInverse&) = delete;
  PaddedInverse& operator=(const PaddedInverse&) = delete;

  // out (big.voxels() values, fftwf-allocated) = the centred inverse DFT on `big` of `in`
  // placed at its centre: out_x = sum_q in_q e^{+i 2 pi (q - c/2) . (x - n/2) / n}.
  void run(const std::vector<std::complex<float>>& in, fftwf_complex* out) {
    fftwf_complex* a = scratch_;
    fftwf_complex* b = fftwf_alloc_complex(volume(dims_[1]));
    place(reinterpret_cast<const fftwf_complex*>(in.data()), 0, a);
    pass(0, a);
    place(a, 1, b);
    pass(1, b);
    place(b, 2, out);
    pass(2, out);
    fftwf_free(b);
  }

 private:
  static std::size_t volume(const std::array<int, 3>& d) { return std::size_t(d[0]) * d[1] * d[2]; }
  int size(int a, const ImageGrid& g) const { return a == 0 ? g.nx : a == 1 ? g.ny : g.nz; }
  std::size_t stride(int a) const {  // of axis a in pass a's array
    std::size_t s = 1;
    for (int i = 0; i < a; ++i) s *= std::size_t(dims_[a][i]);
    return s;
  }
  // Lines per task: one line for x; a row of x for y and z (tasks in parallel).
  int chunk(int a) const { return a == 0 ? 1 : dims_[a][0]; }

  fftwf_plan make_pass_plan(int a) {
    const int n = dims_[a][a];
    const std::size_t s = stride(a);
    const int howmany = chunk(a);
    // Tasks start at block * (s n) + j * chunk elements: the plan may run on
    // all of them only if they share the planned buffer's alignment (64 bytes
    // covers FFTW's widest SIMD), else it is made UNALIGNED.
    const std::size_t blocks = volume(dims_[a]) / (s * n), per_block = s / std::size_t(howmany);
    const bool aligned = (blocks == 1 || (s * n) % 8 == 0) && (per_block == 1 || howmany % 8 == 0);
    fftwf_complex* buf = fftwf_alloc_complex(std::max<std::size_t>(s * n, 1));
    std::lock_guard<std::mutex> lock(fftw_planner_lock());
    fftwf_plan p = fftwf_plan_many_dft(1, &n, howmany, buf, nullptr, int(s), 1, buf, nullptr, int(s), 1,
                                       FFTW_BACKWARD, FFTW_ESTIMATE | (aligned ? 0 : FFTW_UNALIGNED));
    fftwf_free(buf);
    if (!p) throw std::runtime_error("FFTW could not make a plan");
    return p;
  }

  // dst (pass a's array, zeroed) gets src's lines along axis a at their
  // frequencies' FFT positions, times the phase that centres the output:
  // sum_f X_f e^{i 2 pi f (x - n/2) / n} = sum_f (X_f e^{-i 2 pi f (n/2) / n}) e^{i 2 pi f x / n}.
  void place(const fftwf_complex* src, int a, fftwf_complex* dst) const {
    const std::array<int, 3>& d = dims_[a];
    const int c = size(a, small_), n = d[a];
    std::array<int, 3> sd = d;  // src's shape: axis a not yet expanded
    sd[a] = c;
    std::vector<int> to(c);
    std::vector<std::complex<float>> phase(c);
    for (int q = 0; q < c; ++q) {
      const int f = q - c / 2;
      to[q] = ((f % n) + n) % n;
      phase[q] = std::polar(1.0f, float(-2 * kPi * double(f) * (n / 2) / n));
    }
    const std::int64_t total = std::int64_t(volume(d));
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < total; ++i) dst[i][0] = dst[i][1] = 0.0f;
#pragma omp parallel for schedule(static)
    for (int z = 0; z < sd[2]; ++z)
      for (int y = 0; y < sd[1]; ++y)
        for (int x = 0; x < sd[0]; ++x) {
          std::array<int, 3> o = {x, y, z};
          const int q = o[a];
          o[a] = to[q];
          const std::size_t from = x + std::size_t(sd[0]) * (y + std::size_t(sd[1]) * z);
          const std::size_t at = o[0] + std::size_t(d[0]) * (o[1] + std::size_t(d[1]) * o[2]);
          const std::complex<float> v = std::complex<float>(src[from][0], src[from][1]) * phase[q];
          dst[at][0] = v.real();
          dst[at][1] = v.imag();
        }
  }

  void pass(int a, fftwf_complex* data) const {
    const std::size_t s = stride(a), n = std::size_t(dims_[a][a]);
    const std::size_t per_block = s / std::size_t(chunk(a));
    const std::int64_t tasks = std::int64_t(volume(dims_[a]) / (s * n) * per_block);
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < tasks; ++t) {
      fftwf_complex* p = data + std::size_t(t) / per_block * s * n + std::size_t(t) % per_block * chunk(a);
      fftwf_execute_dft(plans_[a], p, p);
    }
  }

  ImageGrid small_, big_;
  std::array<std::array<int, 3>, 3> dims_{};
  fftwf_complex* scratch_ = nullptr;
  std::array<fftwf_plan, 3> plans_{};
};

}  // namespace

CoilData windowed_calibration(const Calibration& cal) {
  const ImageGrid& c = cal.size;
  CoilData out;
  for (const std::vector<cfloat>& k : cal.kspace) {
    std::vector<cfloat> windowed(c.voxels());
    for_each_index(c, [&](int x, int y, int z) {
      windowed[linear(x, y, z, c)] = k[linear(x, y, z, c)] * float(hann(x, c.nx) * hann(y, c.ny) * hann(z, c.nz));
    });
    out.push_back(std::move(windowed));
  }
  return out;
}

namespace {

// Each coil's smooth low-resolution image on the full grid (its calibration
// data times a Hann window, zero-padded, transformed back), and their root sum
// of squares with its peak.
struct LowresImages {
  std::vector<fftwf_complex*> low;
  std::vector<float> rss;
  float peak = 0;
  LowresImages() = default;
  LowresImages(const LowresImages&) = delete;
  LowresImages& operator=(const LowresImages&) = delete;
  ~LowresImages() {
    for (fftwf_complex* l : low) fftwf_free(l);
  }
  // Where the maps are kept: the root sum of squares at least crop times its
  // peak, and not zero (all-zero calibration data gave 0/0: maps of NaN).
  bool kept(std::size_t v, double crop) const { return rss[v] >= float(crop) * peak && rss[v] > 0; }
};

void lowres_images(const Calibration& cal, const ImageGrid& grid, LowresImages& out) {
  PaddedInverse up(cal.size, grid);
  const std::size_t nv = grid.voxels();
  for (const std::vector<cfloat>& windowed : windowed_calibration(cal)) {
    out.low.push_back(fftwf_alloc_complex(nv));
    up.run(windowed, out.low.back());
  }
  out.rss.assign(nv, 0.0f);
  float peak = 0;
  const std::int64_t n = std::int64_t(nv);
#pragma omp parallel for schedule(static) reduction(max : peak)
  for (std::int64_t v = 0; v < n; ++v) {
    float sum = 0;
    for (const fftwf_complex* l : out.low) sum += l[v][0] * l[v][0] + l[v][1] * l[v][1];
    out.rss[v] = std::sqrt(sum);
    peak = std::max(peak, out.rss[v]);
  }
  out.peak = peak;
}

}  // namespace

CoilData maps_lowres(const Calibration& cal, const ImageGrid& grid, double crop) {
  LowresImages li;
  lowres_images(cal, grid, li);
  const std::int64_t n = std::int64_t(grid.voxels());
  const float floor = 1e-9f * li.peak;
  CoilData maps(li.low.size());
  for (std::size_t coil = 0; coil < li.low.size(); ++coil) {
    maps[coil].resize(std::size_t(n));
    cfloat* m = maps[coil].data();
    const fftwf_complex* l = li.low[coil];
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < n; ++v)
      m[v] = li.kept(std::size_t(v), crop) ? cfloat(l[v][0], l[v][1]) / std::max(li.rss[v], floor) : cfloat(0);
  }
  return maps;
}

std::vector<bool> lowres_support(const Calibration& cal, const ImageGrid& grid, double crop) {
  LowresImages li;
  lowres_images(cal, grid, li);
  std::vector<bool> keep(grid.voxels());
  for (std::size_t v = 0; v < keep.size(); ++v) keep[v] = li.kept(v, crop);
  return keep;
}

double map_difference(const CoilData& est, const CoilData& truth, const std::vector<bool>& mask) {
  if (est.size() != truth.size() || est.empty()) throw std::invalid_argument("map_difference: coil counts differ");
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t v = 0; v < mask.size(); ++v) {
    if (!mask[v]) continue;
    double tt = 0, ee = 0;
    cdouble inner = 0;
    for (std::size_t c = 0; c < truth.size(); ++c) {
      tt += std::norm(cdouble(truth[c][v]));
      ee += std::norm(cdouble(est[c][v]));
      inner += std::conj(cdouble(est[c][v])) * cdouble(truth[c][v]);
    }
    if (tt == 0) continue;
    // ||e - t/|t| e^{-i phi}||^2 minimized over phi: |e|^2 + 1 - 2 |<e, t>| / |t|.
    sum += std::max(0.0, ee + 1 - 2 * std::abs(inner) / std::sqrt(tt));
    ++count;
  }
  return count ? std::sqrt(sum / double(count)) : 0.0;
}

}  // namespace fhd
