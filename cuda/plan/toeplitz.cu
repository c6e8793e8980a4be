// The Toeplitz normal operator T = F^H W F on cuFFT (the GPU's
// ToeplitzKernels, recon/plan/toeplitz_kernels.hpp), and the centered DFT.
// Definitions follow docs/conventions.md and the CPU operator:
//   T x = crop( IFFT( FFT(h) * FFT(pad(x)) ) ) / L,   L = doubled voxel count,
// where h is Q rearranged so lag 0 sits at index 0 (Q index j holds lag j - n
// per axis: h[(j - n) mod 2n] = Q[j]), pad(x) puts x at the low corner of the
// doubled grid and crop takes that corner back. The regularizer's D^H D is
// its own operator (recon/ops/diff.hpp), added in one pass after the crop.
#include <stdexcept>
#include <string>

#include "cuda/device/gpu_internal.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "cuda/plan/precond.hpp"
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
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float2 u = a[i], v = b[i];
    a[i] = make_float2(u.x * v.x - u.y * v.y, u.x * v.y + u.y * v.x);
  }
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
class PaddedFft {
 public:
  PaddedFft(const ImageGrid& n, const ImageGrid& len, cudaStream_t s, const std::string& what) {
    const bool volume = len.nz > 1, plane = !volume && len.ny > 1;
    if (!volume && !plane) {  // 1D: no slab to skip
      slow_ = std::make_unique<CufftPlan>(len, s, what);
      return;
    }
    const long long slab = volume ? (long long)len.nx * len.ny : len.nx;
    ImageGrid fast{len.nx, volume ? len.ny : 1, 1};
    const long long lower = volume ? n.nz : n.ny;
    upper_ = std::size_t(lower * slab);
    fast_ = std::make_unique<CufftPlan>(FftLayout{fft_dims(fast), 1, slab, lower}, s, what);
    slow_ = std::make_unique<CufftPlan>(FftLayout{{volume ? len.nz : len.ny}, slab, 1, slab}, s, what);
  }
  void forward(float2* pad) {
    if (fast_) fast_->exec(pad, CUFFT_FORWARD);
    slow_->exec(pad, CUFFT_FORWARD);
  }
  // The whole grid's forward transform (K's, whose h fills it), by the same
  // plans: the fast axes over the lower slabs and then the upper ones (as
  // many: the grid is doubled), then the slowest axis.
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
  std::size_t upper_ = 0;  // elements before the first upper slab
};

class GpuNormalOperator : public HermitianOp {
 public:
  // q: device memory, q_count values on the doubled grid.
  GpuNormalOperator(Device& dev, const float2* q, std::size_t q_count, const ImageGrid& grid)
      : HermitianOp(dev, image_shape(grid), "T"), n_(grid), len_(grid.doubled()), s_(stream_of(dev)) {
    if (q_count != len_.voxels())
      throw InputError("gpu normal operator", "q size", std::to_string(q_count),
                       "expected " + std::to_string(len_.voxels()) + " (the doubled grid " + dims_string(len_) + ")");
    const std::string what = "the Toeplitz normal operator on " + dims_string(len_);
    // One message for the whole operator, before any allocation.
    require_free(2.0 * len_.voxels() * sizeof(float2), what + " (spectrum, padded buffer)");
    spectrum_.allocate(len_.voxels(), what + " (spectrum)");
    pad_.allocate(len_.voxels(), what + " (padded buffer)");
    fft_ = std::make_unique<PaddedFft>(n_, len_, s_, what);
    // h[(j - n) mod 2n] = Q[j], i.e. h[i] = Q[(i + n) mod 2n]; the 1/L of the
    // inverse FFT is folded into the spectrum once.
    const Dims3 off{n_.nx % len_.nx, n_.ny % len_.ny, n_.nz % len_.nz};
    launch_shift(q, spectrum_.get(), len_, off, float(1.0 / double(len_.voxels())), s_);
    fft_->forward_full(spectrum_.get());  // h fills the grid: no slab to skip
    CUDA_CHECK(cudaStreamSynchronize(s_));  // the caller's Q may go after return (segmented models' own Q's)
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    DeviceScope scope(device());
    const std::size_t total = len_.voxels();
    embed_kernel<<<blocks_for(total, kThreads), kThreads, 0, s_>>>(dptr(x), pad_.get(), dims3(n_), dims3(len_));
    CUDA_CHECK_LAUNCH();
    fft_->forward(pad_.get());
    multiply_kernel<<<blocks_for(total, kThreads), kThreads, 0, s_>>>(pad_.get(), spectrum_.get(), total);
    CUDA_CHECK_LAUNCH();
    fft_->inverse(pad_.get());
    crop_kernel<<<blocks_for(n_.voxels(), kThreads), kThreads, 0, s_>>>(pad_.get(), dptr(y), dims3(n_), dims3(len_));
    CUDA_CHECK_LAUNCH();
  }

 private:
  ImageGrid n_, len_;
  cudaStream_t s_;
  DeviceBuffer<float2> spectrum_, pad_;
  std::unique_ptr<PaddedFft> fft_;
};

class GpuToeplitz : public ToeplitzKernels {
 public:
  explicit GpuToeplitz(Device& dev) : dev_(dev) {}
  OpPtr normal(const DeviceVector& q, const ImageGrid& grid) override {
    DeviceScope scope(dev_);
    require_gpu(dev_, q, "toeplitz");
    return std::make_shared<GpuNormalOperator>(dev_, dptr(q), q.size(), grid);
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

}  // namespace

CufftPlan::CufftPlan(const ImageGrid& dims, cudaStream_t s, const std::string& what)
    : CufftPlan(FftLayout{fft_dims(dims), 1, 0, 1}, s, what) {}

CufftPlan::CufftPlan(const FftLayout& layout, cudaStream_t s, const std::string& what) {
  std::vector<long long> d = layout.n;
  if (d.empty()) {
    identity_ = true;  // a one-point DFT is the identity
    return;
  }
  CUDA_CHECK(cufftCreate(&h_));
  try {
    CUDA_CHECK(cufftSetAutoAllocation(h_, 0));
    std::size_t ws = 0;
    // The embedding lengths are the transform's own (no padding between rows).
    // Embedding lengths equal to the transform's own: no padding between rows;
    // nullptr (the basic layout) for one contiguous transform.
    long long* embed = layout.stride == 1 && layout.batch == 1 ? nullptr : d.data();
    const cufftResult r = cufftMakePlanMany64(h_, int(d.size()), d.data(), embed, layout.stride, layout.dist,
                                              embed, layout.stride, layout.dist, CUFFT_C2C, layout.batch, &ws);
    if (r == CUFFT_ALLOC_FAILED) out_of_memory(double(ws), what + " (cuFFT plan)", free_device_bytes());
    CUDA_CHECK(r);
    work_.allocate(ws, what + " (cuFFT work area)");
    if (ws) CUDA_CHECK(cufftSetWorkArea(h_, work_.get()));
    CUDA_CHECK(cufftSetStream(h_, s));
  } catch (...) {
    cufftDestroy(h_);
    throw;
  }
}

CufftPlan::~CufftPlan() {
  if (h_) cufftDestroy(h_);
}

void CufftPlan::exec(float2* data, int direction) {
  if (identity_) return;
  CUDA_CHECK(cufftExecC2C(h_, reinterpret_cast<cufftComplex*>(data), reinterpret_cast<cufftComplex*>(data),
                          direction));
}

void centered_dft_window(const float2* in, float2* work, const ImageGrid& dims, const ImageGrid& window,
                         float2* out, bool inverse, cudaStream_t s) {
  CufftPlan plan(dims, s, "the centered DFT of " + dims_string(dims));
  // ifftshift (index n/2 -> 0), unnormalized FFT, then fftshift (0 -> n/2)
  // fused with taking the central window: right for odd lengths too, since
  // the shifts are plain modular gathers.
  launch_shift(in, work, dims, Dims3{dims.nx / 2, dims.ny / 2, dims.nz / 2}, 1.f, s);
  plan.exec(work, inverse ? CUFFT_INVERSE : CUFFT_FORWARD);
  const Dims3 off{dims.nx - dims.nx / 2 - window.nx / 2 + dims.nx / 2, dims.ny - dims.ny / 2 - window.ny / 2 + dims.ny / 2,
                  dims.nz - dims.nz / 2 - window.nz / 2 + dims.nz / 2};
  window_kernel<<<blocks_for(window.voxels(), kThreads), kThreads, 0, s>>>(work, dims3(dims), out, dims3(window), off,
                                                                           1.f);
  CUDA_CHECK_LAUNCH();
}

std::unique_ptr<ToeplitzKernels> make_gpu_toeplitz(Device& dev) { return std::make_unique<GpuToeplitz>(dev); }

}  // namespace fhd::gpu
