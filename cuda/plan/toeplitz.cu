// The Toeplitz normal operator T = F^H W F on cuFFT (the GPU's
// ToeplitzKernels, recon/plan/toeplitz_kernels.hpp), and the centered DFT.
// Definitions follow docs/conventions.md and the CPU operator:
//   T x = crop( IFFT( FFT(h) * FFT(pad(x)) ) ) / L,   L = doubled voxel count,
// where h is Q rearranged so lag 0 sits at index 0 (Q index j holds lag j - n
// per axis: h[(j - n) mod 2n] = Q[j]), pad(x) puts x at the low corner of the
// doubled grid and crop takes that corner back. The regularizer's D^H D is
// its own operator (recon/ops/diff.hpp), added in one pass after the crop.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda/device/complex.cuh"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "cuda/plan/precond.hpp"
#include "cuda/plan/toeplitz_lines.hpp"
#include "recon/plan/toeplitz_kernels.hpp"

namespace fhd::gpu {
namespace {

constexpr unsigned kThreads = 256;

// cuFFT's dimension list: slowest axis first, axes of length 1 dropped
// (x fastest storage makes the dropped axis invisible to the layout).
std::vector<long long> fft_dims(const ImageGrid& g) {
  std::vector<long long> d;
  if (g.nz > 1) d.push_back(g.nz);
  if (g.ny > 1) d.push_back(g.ny);
  if (g.nx > 1) d.push_back(g.nx);
  return d;
}

struct Dims3 {
  int x, y, z;
};

// Grid coordinates of flat index i (x fastest) on a grid of `len`.
__device__ inline Dims3 coords(std::size_t i, Dims3 len) {
  return {int(i % len.x), int((i / len.x) % len.y), int(i / (std::size_t(len.x) * len.y))};
}

// out[i] = scale * in[(i + off) mod in_len] per axis, for an output of `len`
// (at most in_len): the (i)fftshifts, the Toeplitz rearrangement of Q, and a
// centered inverse DFT's final fftshift fused with its crop are all this gather.
__global__ void window_kernel(const float2* __restrict__ in, Dims3 in_len, float2* __restrict__ out, Dims3 len,
                              Dims3 off, float scale) {
  const std::size_t total = std::size_t(len.x) * len.y * len.z;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const Dims3 c = coords(i, len);
    const int sx = (c.x + off.x) % in_len.x, sy = (c.y + off.y) % in_len.y, sz = (c.z + off.z) % in_len.z;
    const float2 v = in[sx + std::size_t(in_len.x) * (sy + std::size_t(in_len.y) * sz)];
    out[i] = make_float2(scale * v.x, scale * v.y);
  }
}

// pad = x on the low corner of the doubled grid, zero elsewhere (one pass,
// no separate memset).
__global__ void embed_kernel(const float2* __restrict__ x, float2* __restrict__ pad, Dims3 n, Dims3 len) {
  const std::size_t total = std::size_t(len.x) * len.y * len.z;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const Dims3 c = coords(i, len);
    float2 v = make_float2(0.f, 0.f);
    if (c.x < n.x && c.y < n.y && c.z < n.z) v = x[c.x + std::size_t(n.x) * (c.y + std::size_t(n.y) * c.z)];
    pad[i] = v;
  }
}

__global__ void multiply_kernel(float2* __restrict__ a, const float2* __restrict__ b, std::size_t total) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x)
    a[i] = cmul(a[i], b[i]);
}

// y = crop(pad).
__global__ void crop_kernel(const float2* __restrict__ pad, float2* __restrict__ y, Dims3 n, Dims3 len) {
  const std::size_t total = std::size_t(n.x) * n.y * n.z;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const Dims3 p = coords(i, n);
    y[i] = pad[p.x + std::size_t(len.x) * (p.y + std::size_t(len.y) * p.z)];
  }
}

Dims3 dims3(const ImageGrid& g) { return {g.nx, g.ny, g.nz}; }

// Zeroes h at lag -n on any axis (index n of the doubled length): no product
// reads that lag (i - k lies in (-n, n)), and without it a Hermitian Q gives
// a Hermitian h, whose spectrum is real.
__global__ void drop_lag_n_kernel(float2* h, Dims3 n, Dims3 len) {
  GRID_STRIDE(i, std::size_t(len.x) * len.y * len.z) {
    const Dims3 c = coords(i, len);
    if (c.x == n.x || c.y == n.y || (len.z > 1 && c.z == n.z)) h[i] = make_float2(0.f, 0.f);
  }
}

// re = Re(s); energy[0] += sum |s|^2, energy[1] += sum Im(s)^2.
__global__ void real_part_kernel(const float2* __restrict__ s, float* __restrict__ re, std::size_t n, double* energy) {
  double all = 0, imag = 0;
  GRID_STRIDE(i, n) {
    const float2 v = s[i];
    re[i] = v.x;
    all += double(v.x) * v.x + double(v.y) * v.y;
    imag += double(v.y) * v.y;
  }
  for (int o = 16; o > 0; o >>= 1) {
    all += __shfl_down_sync(0xffffffffu, all, o);
    imag += __shfl_down_sync(0xffffffffu, imag, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(energy, all);
    atomicAdd(energy + 1, imag);
  }
}

void launch_shift(const float2* in, float2* out, const ImageGrid& len, Dims3 off, float scale, cudaStream_t s) {
  window_kernel<<<blocks_for(len.voxels(), kThreads), kThreads, 0, s>>>(in, dims3(len), out, dims3(len), off, scale);
  CUDA_CHECK_LAUNCH();
}

// The doubled grid's FFT pair with pad(x)'s zero half skipped. pad(x) is zero
// on every slab of the slowest axis at or past n (its upper half), so the
// forward transform runs the fast axes over the n lower slabs only, then the
// slowest axis over the whole grid; the inverse runs them in reverse, the fast
// axes again over the lower slabs only, which are all the crop reads. About
// 2/3 of a full transform's passes (issue 9; docs/performance.md).
//
// `batch` grids (SENSE's coils, issue 25) are interleaved slab by slab:
// element r of slab s of grid t sits at (s * batch + t) * slab + r, so the
// lower slabs of all grids are one contiguous run (one fast-axes plan over
// lower * batch slabs) and the slowest axis is one plan of stride
// batch * slab. batch = 1 is the plain x-fastest layout.
class PaddedFft {
 public:
  PaddedFft(const ImageGrid& n, const ImageGrid& len, cudaStream_t s, const std::string& what, int batch = 1) {
    const bool volume = len.nz > 1, plane = !volume && len.ny > 1;
    slab_ = volume ? (long long)len.nx * len.ny : plane ? len.nx : 1;
    const long long slow_len = volume ? len.nz : plane ? len.ny : len.nx, b = batch;
    if (volume || plane) {
      ImageGrid fast{len.nx, volume ? len.ny : 1, 1};
      const long long lower = volume ? n.nz : n.ny;
      upper_ = std::size_t(lower * slab_);
      fast_ = std::make_unique<CufftPlan>(FftLayout{fft_dims(fast), 1, slab_, lower * b}, s, what);
    }
    // 1D, batch 1: stride 1, dist 1, one transform (the basic layout).
    slow_ = std::make_unique<CufftPlan>(FftLayout{{slow_len}, b * slab_, 1, b * slab_}, s, what);
  }
  long long slab() const { return slab_; }
  void forward(float2* pad) {
    if (fast_) fast_->exec(pad, CUFFT_FORWARD);
    slow_->exec(pad, CUFFT_FORWARD);
  }
  // The whole grid's forward transform (K's, whose h fills it), by the same
  // plans: the fast axes over the lower slabs and then the upper ones (as
  // many: the grid is doubled), then the slowest axis. Batch 1 only.
  void forward_full(float2* grid) {
    if (fast_) {
      fast_->exec(grid, CUFFT_FORWARD);
      fast_->exec(grid + upper_, CUFFT_FORWARD);
    }
    slow_->exec(grid, CUFFT_FORWARD);
  }
  // The lower slabs (those the crop reads) hold the inverse; the upper ones do not.
  void inverse(float2* pad) {
    slow_->exec(pad, CUFFT_INVERSE);
    if (fast_) fast_->exec(pad, CUFFT_INVERSE);
  }

 private:
  std::unique_ptr<CufftPlan> fast_, slow_;
  long long slab_ = 1;
  std::size_t upper_ = 0;  // elements before the first upper slab
};

// SENSE's coils on the interleaved layout of PaddedFft (batch grids): at most
// kCoilGroup maps per pass, passed by value.
constexpr int kCoilGroup = 8;
struct CoilMaps {
  const float2* map[kCoilGroup];
  int count;
};

// buf = pad(S_t x) for every coil t of the group (zero outside the low corner).
__global__ void embed_coils_kernel(const float2* __restrict__ x, CoilMaps maps, float2* __restrict__ buf, Dims3 n,
                                   Dims3 len, long long slab) {
  const std::size_t total = std::size_t(len.x) * len.y * len.z * maps.count;
  const std::size_t run = std::size_t(maps.count) * slab;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int t = int((i / slab) % maps.count);
    const Dims3 c = coords(i / run * slab + i % slab, len);
    float2 v = make_float2(0.f, 0.f);
    if (c.x < n.x && c.y < n.y && c.z < n.z) {
      const std::size_t j = c.x + std::size_t(n.x) * (c.y + std::size_t(n.y) * c.z);
      v = cmul(maps.map[t][j], x[j]);
    }
    buf[i] = v;
  }
}

// Every grid of the group times the one spectrum.
__global__ void multiply_coils_kernel(float2* __restrict__ buf, const float2* __restrict__ spectrum, std::size_t total,
                                      int count, long long slab) {
  const std::size_t run = std::size_t(count) * slab;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x)
    buf[i] = cmul(buf[i], spectrum[i / run * slab + i % slab]);
}

// y (+)= sum_t conj(S_t) crop(buf_t): `accumulate` false for the first group.
__global__ void crop_coils_kernel(const float2* __restrict__ buf, CoilMaps maps, float2* __restrict__ y, Dims3 n,
                                  Dims3 len, long long slab, bool accumulate) {
  const std::size_t total = std::size_t(n.x) * n.y * n.z;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const Dims3 p = coords(i, n);
    const std::size_t d = p.x + std::size_t(len.x) * (p.y + std::size_t(len.y) * p.z);
    const std::size_t base = d / slab * maps.count * slab + d % slab;
    float2 acc = accumulate ? y[i] : make_float2(0.f, 0.f);
    for (int t = 0; t < maps.count; ++t) {
      const float2 v = cmulc(maps.map[t][i], buf[base + std::size_t(t) * slab]);
      acc.x += v.x;
      acc.y += v.y;
    }
    y[i] = acc;
  }
}

// The spectrum K = FFT(h) / L of Q on the doubled grid: h[(j - n) mod 2n] =
// Q[j], i.e. h[i] = Q[(i + n) mod 2n], and the 1/L of the inverse FFT folded
// in once, transformed by `fft` (n's pair). `drop_lag_n` zeroes the lag no
// product reads (the line passes: a Hermitian Q then gives a real spectrum).
DeviceBuffer<float2> make_spectrum(const float2* q, const ImageGrid& n, bool drop_lag_n, PaddedFft& fft, cudaStream_t s,
                                   const std::string& what) {
  const ImageGrid len = n.doubled();
  DeviceBuffer<float2> spectrum(len.voxels(), what + " (spectrum)", Reach::DeviceOnly);
  const Dims3 off{n.nx % len.nx, n.ny % len.ny, n.nz % len.nz};
  launch_shift(q, spectrum.get(), len, off, float(1.0 / double(len.voxels())), s);
  if (drop_lag_n) {
    drop_lag_n_kernel<<<blocks_for(len.voxels(), kThreads), kThreads, 0, s>>>(spectrum.get(), dims3(n), dims3(len));
    CUDA_CHECK_LAUNCH();
  }
  fft.forward_full(spectrum.get());      // h fills the grid: no slab to skip
  CUDA_CHECK(cudaStreamSynchronize(s));  // the caller's Q may go after return (segmented models' own Q's)
  return spectrum;
}

// What both forms of T share: the shape, the stream, and the checks of
// SENSE's coil arguments.
class GpuNormalBase : public HermitianOp, public CoilBatchedNormal {
 protected:
  GpuNormalBase(Device& dev, const ImageGrid& grid)
      : HermitianOp(dev, image_shape(grid), "T"), n_(grid), len_(grid.doubled()), s_(stream_of(dev)) {}

  void check_coils(const DeviceVector& x, const std::vector<std::shared_ptr<DeviceVector>>& maps,
                   const DeviceVector& y) {
    if (x.size() != n_.voxels() || y.size() != n_.voxels())
      throw std::invalid_argument("toeplitz coils: x and y must hold the grid's " + std::to_string(n_.voxels()) +
                                  " voxels");
    // Coils after the first read x again after y holds the first's sum.
    if (&x == &y) throw std::invalid_argument("toeplitz coils: x and y must be different vectors");
    for (std::size_t c = 0; c < maps.size(); ++c) {
      require_gpu(device(), *maps[c], "sense coil map");
      if (maps[c]->size() != n_.voxels())
        throw std::invalid_argument("toeplitz coils: map " + std::to_string(c) + " has " +
                                    std::to_string(maps[c]->size()) + " voxels");
    }
  }

  ImageGrid n_, len_;
  cudaStream_t s_;
};

// T on our line passes (power-of-two 2D and 3D grids,
// cuda/plan/toeplitz_lines.hpp): each coil's map, pad, FFT pair, multiply and
// crop in five passes, nothing per coil to prepare.
class LineNormal final : public GpuNormalBase {
 public:
  LineNormal(Device& dev, const float2* q, const ImageGrid& grid, const std::string& what)
      : GpuNormalBase(dev, grid),
        spectrum_([&] {
          PaddedFft fft(grid, grid.doubled(), s_, what);  // cuFFT only for the spectrum
          return make_spectrum(q, grid, true, fft, s_, what);
        }()),
        lines_(grid, s_, what) {
    keep_real_part_if_hermitian(what);
  }

  void apply_coils(const DeviceVector& x, const std::vector<std::shared_ptr<DeviceVector>>& maps,
                   DeviceVector& y) override {
    DeviceScope scope(device());
    check_coils(x, maps, y);
    for (std::size_t c = 0; c < maps.size(); ++c)
      lines_.apply(dptr(x), dptr(*maps[c]), line_spectrum(), dptr(y), c > 0);
  }
  void prepare_coils(int) override {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    DeviceScope scope(device());
    lines_.apply(dptr(x), nullptr, line_spectrum(), dptr(y), false);
  }

 private:
  // Every Q the recon's gathers and NUFFTs make is Hermitian in exact
  // arithmetic, so its spectrum is real up to rounding: the line passes then read floats,
  // half the z pass's spectrum bytes. A Q that is not (a segmented field
  // model's cross terms) keeps the complex spectrum. The bound, 1e-4 of the
  // spectrum's norm in its imaginary part, is far above float rounding.
  void keep_real_part_if_hermitian(const std::string& what) {
    const std::size_t total = len_.voxels();
    if (double(free_device_bytes()) < double(total) * sizeof(float) + double(kHeadroomBytes)) return;
    DeviceBuffer<float> re(total, what + " (real spectrum)", Reach::DeviceOnly);
    DeviceBuffer<double> energy(2, what + " (spectrum's energy)", Reach::DeviceOnly);
    CUDA_CHECK(cudaMemsetAsync(energy.get(), 0, 2 * sizeof(double), s_));
    real_part_kernel<<<blocks_for(total, kThreads), kThreads, 0, s_>>>(spectrum_.get(), re.get(), total, energy.get());
    CUDA_CHECK_LAUNCH();
    double e[2] = {0, 0};
    CUDA_CHECK(cudaMemcpyAsync(e, energy.get(), sizeof e, cudaMemcpyDeviceToHost, s_));
    CUDA_CHECK(cudaStreamSynchronize(s_));
    if (e[1] > 1e-8 * e[0]) return;
    real_spectrum_ = std::move(re);
    spectrum_.release();
  }
  Spectrum line_spectrum() const {
    Spectrum s;
    if (real_spectrum_.get())
      s.real = real_spectrum_.get();
    else
      s.complex = spectrum_.get();
    return s;
  }

  DeviceBuffer<float2> spectrum_;
  LineToeplitz lines_;
  DeviceBuffer<float> real_spectrum_;  // a Hermitian Q's spectrum
};

// T on cuFFT's pair over a padded buffer (every other grid): pad, forward,
// multiply, inverse, crop; SENSE's coils in groups through batched plans.
class PaddedNormal final : public GpuNormalBase {
 public:
  PaddedNormal(Device& dev, const float2* q, const ImageGrid& grid, const std::string& what)
      : GpuNormalBase(dev, grid),
        fft_(grid, grid.doubled(), s_, what),
        spectrum_(make_spectrum(q, grid, false, fft_, s_, what)),
        pad_(grid.doubled().voxels(), what + " (padded buffer)", Reach::DeviceOnly) {}

  // SENSE's normal, groups of up to kCoilGroup coils (fewer where the card
  // lacks the memory) through one batched FFT pair each: embed S_t x for the
  // group, forward, one multiply, inverse, and the conj(S_t)-weighted sum of
  // the crops, fused into y.
  void apply_coils(const DeviceVector& x, const std::vector<std::shared_ptr<DeviceVector>>& maps,
                   DeviceVector& y) override {
    DeviceScope scope(device());
    check_coils(x, maps, y);
    const int coils = int(maps.size());
    const int group = coil_group(coils);
    for (int c0 = 0; c0 < coils; c0 += group) {
      CoilMaps m{};
      m.count = std::min(group, coils - c0);
      for (int t = 0; t < m.count; ++t) m.map[t] = dptr(*maps[c0 + t]);
      PaddedFft& fft = batch_fft(m.count);
      float2* buf = coil_buf_.get();
      const std::size_t total = len_.voxels() * std::size_t(m.count);
      embed_coils_kernel<<<blocks_for(total, kThreads), kThreads, 0, s_>>>(dptr(x), m, buf, dims3(n_), dims3(len_),
                                                                           fft.slab());
      CUDA_CHECK_LAUNCH();
      fft.forward(buf);
      multiply_coils_kernel<<<blocks_for(total, kThreads), kThreads, 0, s_>>>(buf, spectrum_.get(), total, m.count,
                                                                              fft.slab());
      CUDA_CHECK_LAUNCH();
      fft.inverse(buf);
      crop_coils_kernel<<<blocks_for(n_.voxels(), kThreads), kThreads, 0, s_>>>(buf, m, dptr(y), dims3(n_), dims3(len_),
                                                                                fft.slab(), c0 > 0);
      CUDA_CHECK_LAUNCH();
    }
  }

  void prepare_coils(int coils) override {
    DeviceScope scope(device());
    const int group = coil_group(coils);
    batch_fft(group);
    if (coils % group) batch_fft(coils % group);
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    DeviceScope scope(device());
    const std::size_t total = len_.voxels();
    embed_kernel<<<blocks_for(total, kThreads), kThreads, 0, s_>>>(dptr(x), pad_.get(), dims3(n_), dims3(len_));
    CUDA_CHECK_LAUNCH();
    fft_.forward(pad_.get());
    multiply_kernel<<<blocks_for(total, kThreads), kThreads, 0, s_>>>(pad_.get(), spectrum_.get(), total);
    CUDA_CHECK_LAUNCH();
    fft_.inverse(pad_.get());
    crop_kernel<<<blocks_for(n_.voxels(), kThreads), kThreads, 0, s_>>>(pad_.get(), dptr(y), dims3(n_), dims3(len_));
    CUDA_CHECK_LAUNCH();
  }

 private:
  // Coils per pass: kCoilGroup, or as many doubled grids as half the free
  // memory holds (at least 1), decided at the first call and kept.
  int coil_group(int coils) {
    if (group_ == 0) {
      const double grid = double(len_.voxels()) * sizeof(float2);
      const double fit = std::floor(0.5 * double(free_device_bytes()) / grid);
      group_ = int(std::max(1.0, std::min(double(kCoilGroup), fit)));
    }
    return std::min(group_, coils);
  }
  // The interleaved buffer for `count` grids and its FFT pair, made at the
  // first call with that count (a last, smaller group makes a second pair).
  PaddedFft& batch_fft(int count) {
    const std::string what = "SENSE's batched Toeplitz normal on " + std::to_string(count) + " x " + dims_string(len_);
    if (coil_buf_.size() < len_.voxels() * std::size_t(count)) {
      coil_buf_.release();
      coil_buf_.allocate(len_.voxels() * std::size_t(count), what, Reach::DeviceOnly);
    }
    std::unique_ptr<PaddedFft>& f = coil_fft_[count];
    if (!f) f = std::make_unique<PaddedFft>(n_, len_, s_, what, count);
    return *f;
  }

  PaddedFft fft_;  // before the spectrum, which it makes
  DeviceBuffer<float2> spectrum_;
  DeviceBuffer<float2> pad_;
  int group_ = 0;
  DeviceBuffer<float2> coil_buf_;
  std::map<int, std::unique_ptr<PaddedFft>> coil_fft_;
};

// T for Q (q_count values on the doubled grid): the line passes where they
// apply, else cuFFT's pair. One message for the whole operator, before any
// allocation.
OpPtr make_normal(Device& dev, const float2* q, std::size_t q_count, const ImageGrid& grid) {
  const ImageGrid len = grid.doubled();
  if (q_count != len.voxels())
    throw InputError("gpu normal operator", "q size", std::to_string(q_count),
                     "expected " + std::to_string(len.voxels()) + " (the doubled grid " + dims_string(len) + ")");
  const std::string what = "the Toeplitz normal operator on " + dims_string(len);
  const bool lines = LineToeplitz::supports(grid);
  const double grid_bytes = double(len.voxels()) * sizeof(float2);
  require_free(grid_bytes + (lines ? LineToeplitz::scratch_bytes(grid) : grid_bytes),
               what + (lines ? " (spectrum, line passes)" : " (spectrum, padded buffer)"));
  if (lines) return std::make_shared<LineNormal>(dev, q, grid, what);
  return std::make_shared<PaddedNormal>(dev, q, grid, what);
}

class GpuToeplitz : public ToeplitzKernels {
 public:
  explicit GpuToeplitz(Device& dev) : dev_(dev) {}
  OpPtr normal(const DeviceVector& q, const ImageGrid& grid) override {
    DeviceScope scope(dev_);
    require_gpu(dev_, q, "toeplitz");
    return make_normal(dev_, dptr(q), q.size(), grid);
  }
  OpPtr preconditioner(const DeviceVector& q, const ImageGrid& grid, double lambda) override {
    DeviceScope scope(dev_);
    require_gpu(dev_, q, "preconditioner");
    return make_circulant_preconditioner(dev_, dptr(q), q.size(), grid, lambda);
  }
  std::vector<double> spectrum(const DeviceVector& q, const ImageGrid& grid) override {
    DeviceScope scope(dev_);
    require_gpu(dev_, q, "circulant spectrum");
    return circulant_spectrum(dptr(q), q.size(), grid, stream_of(dev_));
  }

 private:
  Device& dev_;
};

// A handle whose work area is ours (a DeviceBuffer), not cuFFT's.
cufftHandle new_handle() {
  cufftHandle h = 0;
  CUDA_CHECK(cufftCreate(&h));
  try {
    CUDA_CHECK(cufftSetAutoAllocation(h, 0));
  } catch (...) {
    cufftDestroy(h);
    throw;
  }
  return h;
}

}  // namespace

CufftPlan::CufftPlan(const ImageGrid& dims, cudaStream_t s, const std::string& what)
    : CufftPlan(FftLayout{fft_dims(dims), 1, 0, 1}, s, what) {}

CufftPlan::CufftPlan(const FftLayout& layout, cudaStream_t s, const std::string& what) {
  std::vector<long long> d = layout.n;
  if (d.empty()) {
    identity_ = true;  // a one-point DFT is the identity
    return;
  }
  h_ = new_handle();
  try {
    std::size_t ws = 0;
    // Embedding lengths equal to the transform's own: no padding between rows;
    // nullptr (the basic layout) for one contiguous transform.
    long long* embed = layout.stride == 1 && layout.batch == 1 ? nullptr : d.data();
    auto make = [&] {
      return cufftMakePlanMany64(h_, int(d.size()), d.data(), embed, layout.stride, layout.dist, embed, layout.stride,
                                 layout.dist, CUFFT_C2C, layout.batch, &ws);
    };
    cufftResult r = make();
    if (r == CUFFT_ALLOC_FAILED) {  // the pools' idle memory may be what cuFFT lacks: once more, on a fresh handle
      CUDA_CHECK(cufftDestroy(std::exchange(h_, 0)));
      trim_pools();
      h_ = new_handle();
      r = make();
    }
    if (r == CUFFT_ALLOC_FAILED) out_of_memory(double(ws), what + " (cuFFT plan)", free_device_bytes());
    CUDA_CHECK(r);
    work_.allocate(ws, what + " (cuFFT work area)", Reach::DeviceOnly);
    if (ws) CUDA_CHECK(cufftSetWorkArea(h_, work_.get()));
    CUDA_CHECK(cufftSetStream(h_, s));
  } catch (...) {
    if (h_) cufftDestroy(h_);
    throw;
  }
}

CufftPlan::~CufftPlan() {
  if (h_) cufftDestroy(h_);
}

void CufftPlan::exec(float2* data, int direction) {
  if (identity_) return;
  CUDA_CHECK(cufftExecC2C(h_, reinterpret_cast<cufftComplex*>(data), reinterpret_cast<cufftComplex*>(data), direction));
}

void centered_dft_window(const float2* in, float2* work, const ImageGrid& dims, const ImageGrid& window, float2* out,
                         bool inverse, cudaStream_t s) {
  CufftPlan plan(dims, s, "the centered DFT of " + dims_string(dims));
  // ifftshift (index n/2 -> 0), unnormalized FFT, then fftshift (0 -> n/2)
  // fused with taking the central window: right for odd lengths too, since
  // the shifts are plain modular gathers.
  launch_shift(in, work, dims, Dims3{dims.nx / 2, dims.ny / 2, dims.nz / 2}, 1.f, s);
  plan.exec(work, inverse ? CUFFT_INVERSE : CUFFT_FORWARD);
  const Dims3 off{dims.nx - dims.nx / 2 - window.nx / 2 + dims.nx / 2,
                  dims.ny - dims.ny / 2 - window.ny / 2 + dims.ny / 2,
                  dims.nz - dims.nz / 2 - window.nz / 2 + dims.nz / 2};
  window_kernel<<<blocks_for(window.voxels(), kThreads), kThreads, 0, s>>>(work, dims3(dims), out, dims3(window), off,
                                                                           1.f);
  CUDA_CHECK_LAUNCH();
}

std::unique_ptr<ToeplitzKernels> make_gpu_toeplitz(Device& dev) { return std::make_unique<GpuToeplitz>(dev); }

}  // namespace fhd::gpu
