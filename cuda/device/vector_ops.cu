// The BLAS-1 operations CG needs, on device vectors of complex float.
// Scalars arrive in double and each element is updated in double before the
// store (bandwidth-bound anyway: the double arithmetic is free on Hopper).
// The dot product accumulates in double in a fixed two-pass shape, so the
// same inputs give the same bits on every run (CG's iterates are reproducible).
#include "cuda/device/gpu_internal.hpp"

namespace fhd::gpu {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kDotBlocks = 1024;  // partial sums of pass one (fixed: determinism)

__global__ void axpy_kernel(double2 a, const float2* __restrict__ x, float2* __restrict__ y, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float2 xi = x[i], yi = y[i];
    y[i] = make_float2(float(a.x * xi.x - a.y * xi.y + yi.x), float(a.x * xi.y + a.y * xi.x + yi.y));
  }
}

__global__ void xpay_kernel(const float2* __restrict__ x, double2 a, float2* __restrict__ y, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float2 xi = x[i], yi = y[i];
    y[i] = make_float2(float(xi.x + a.x * yi.x - a.y * yi.y), float(xi.y + a.x * yi.y + a.y * yi.x));
  }
}

__global__ void axpby_kernel(double2 a, const float2* x, double2 b, float2* y, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float2 xi = x[i], yi = y[i];
    y[i] = make_float2(float(a.x * xi.x - a.y * xi.y + b.x * yi.x - b.y * yi.y),
                       float(a.x * xi.y + a.y * xi.x + b.x * yi.y + b.y * yi.x));
  }
}

__global__ void scale_kernel(double2 b, float2* __restrict__ y, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float2 yi = y[i];
    y[i] = make_float2(float(b.x * yi.x - b.y * yi.y), float(b.x * yi.y + b.y * yi.x));
  }
}

__global__ void multiply_kernel(const float2* __restrict__ s, const float2* x, float2* y, float sign, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float2 a = s[i], b = x[i];
    const float ai = sign * a.y;  // conj(s) when sign = -1
    y[i] = make_float2(a.x * b.x - ai * b.y, a.x * b.y + ai * b.x);
  }
}

__global__ void real_to_complex_kernel(const float* __restrict__ w, float2* __restrict__ out, std::size_t n) {
  GRID_STRIDE(i, n) { out[i] = make_float2(w[i], 0.f); }
}

__global__ void fill_kernel(float2 v, float2* __restrict__ out, std::size_t n) {
  GRID_STRIDE(i, n) { out[i] = v; }
}

// Block sum of a double2 in shared memory (blockDim.x == kThreads, a power of 2).
__device__ double2 block_sum(double2 v) {
  __shared__ double2 s[kThreads];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      s[threadIdx.x].x += s[threadIdx.x + half].x;
      s[threadIdx.x].y += s[threadIdx.x + half].y;
    }
    __syncthreads();
  }
  return s[0];
}

// Pass one: each block sums conj(x) y over its grid-stride share.
__global__ void dot_partial_kernel(const float2* __restrict__ x, const float2* __restrict__ y, std::size_t n,
                                   double2* __restrict__ partial) {
  double re = 0, im = 0;
  GRID_STRIDE(i, n) {
    const float2 a = x[i], b = y[i];
    re += double(a.x) * b.x + double(a.y) * b.y;
    im += double(a.x) * b.y - double(a.y) * b.x;
  }
  const double2 t = block_sum(make_double2(re, im));
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

// Pass one of dot2: the same for conj(a) b into partial[block] and conj(c) d
// into partial[kDotBlocks + block].
__global__ void dot2_partial_kernel(const float2* __restrict__ a, const float2* __restrict__ b,
                                    const float2* __restrict__ c, const float2* __restrict__ d, std::size_t n,
                                    double2* __restrict__ partial) {
  double re0 = 0, im0 = 0, re1 = 0, im1 = 0;
  GRID_STRIDE(i, n) {
    const float2 x = a[i], y = b[i], u = c[i], v = d[i];
    re0 += double(x.x) * y.x + double(x.y) * y.y;
    im0 += double(x.x) * y.y - double(x.y) * y.x;
    re1 += double(u.x) * v.x + double(u.y) * v.y;
    im1 += double(u.x) * v.y - double(u.y) * v.x;
  }
  const double2 t0 = block_sum(make_double2(re0, im0));
  __syncthreads();  // block_sum's shared array is reused
  const double2 t1 = block_sum(make_double2(re1, im1));
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = t0;
    partial[kDotBlocks + blockIdx.x] = t1;
  }
}

// Pass one of magnitude_sse: each block sums (|x| - Re ref)^2 over its share.
__global__ void sse_partial_kernel(const float2* __restrict__ x, const float2* __restrict__ ref, std::size_t n,
                                   double2* __restrict__ partial) {
  double sse = 0;
  GRID_STRIDE(i, n) {
    const float2 a = x[i];
    const double d = sqrt(double(a.x) * a.x + double(a.y) * a.y) - double(ref[i].x);
    sse += d * d;
  }
  const double2 t = block_sum(make_double2(sse, 0.0));
  if (threadIdx.x == 0) partial[blockIdx.x] = t;
}

// Pass two: block k sums the k-th run of `count` partials into its first.
__global__ void dot_final_kernel(double2* partial, unsigned count) {
  double2* run = partial + std::size_t(blockIdx.x) * count;
  double re = 0, im = 0;
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
    re += run[i].x;
    im += run[i].y;
  }
  const double2 t = block_sum(make_double2(re, im));
  if (threadIdx.x == 0) run[0] = t;
}

}  // namespace

void launch_axpy(double2 a, const float2* x, float2* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  axpy_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(a, x, y, n);
  CUDA_CHECK_LAUNCH();
}

void launch_xpay(const float2* x, double2 a, float2* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  xpay_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x, a, y, n);
  CUDA_CHECK_LAUNCH();
}

void launch_axpby(double2 a, const float2* x, double2 b, float2* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  axpby_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(a, x, b, y, n);
  CUDA_CHECK_LAUNCH();
}

void launch_scale(double2 b, float2* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  scale_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(b, y, n);
  CUDA_CHECK_LAUNCH();
}

void launch_multiply(const float2* s, const float2* x, float2* y, bool conjugate, std::size_t n, cudaStream_t st) {
  if (n == 0) return;
  multiply_kernel<<<blocks_for(n, kThreads), kThreads, 0, st>>>(s, x, y, conjugate ? -1.f : 1.f, n);
  CUDA_CHECK_LAUNCH();
}

void launch_real_to_complex(const float* w, float2* out, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  real_to_complex_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(w, out, n);
  CUDA_CHECK_LAUNCH();
}

void launch_fill(float2 value, float2* out, std::size_t n, cudaStream_t s) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(value, out, n);
  CUDA_CHECK_LAUNCH();
}

DeviceBuffer<float2> complex_weights(const std::vector<float>& w, std::size_t m, cudaStream_t s) {
  if (!w.empty() && w.size() != m)
    throw InputError("q", "weights size", std::to_string(w.size()),
                     "must equal the trajectory's " + std::to_string(m) + " samples");
  const std::string what = "cmpQ weights (" + std::to_string(m) + " samples)";
  DeviceBuffer<float2> wc(m, what);
  if (w.empty()) {
    launch_fill(make_float2(1.f, 0.f), wc.get(), m, s);
  } else {
    DeviceBuffer<float> wr(m, what);
    upload(w.data(), m, wr.get(), s);
    launch_real_to_complex(wr.get(), wc.get(), m, s);
    CUDA_CHECK(cudaStreamSynchronize(s));  // wr is freed at scope end
  }
  return wc;
}

DotReducer::DotReducer() : partial_(2 * kDotBlocks, "dot-product partial sums") {
  CUDA_CHECK(cudaMallocHost(&host_, 2 * sizeof(double2)));
}

DotReducer::~DotReducer() {
  if (host_) cudaFreeHost(host_);
}

cdouble DotReducer::dot(const float2* x, const float2* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return {0.0, 0.0};
  dot_partial_kernel<<<kDotBlocks, kThreads, 0, s>>>(x, y, n, partial_.get());
  CUDA_CHECK_LAUNCH();
  return finish(s);
}

std::pair<cdouble, cdouble> DotReducer::dot2(const float2* a, const float2* b, const float2* c, const float2* d,
                                             std::size_t n, cudaStream_t s) {
  if (n == 0) return {};
  dot2_partial_kernel<<<kDotBlocks, kThreads, 0, s>>>(a, b, c, d, n, partial_.get());
  CUDA_CHECK_LAUNCH();
  dot_final_kernel<<<2, kThreads, 0, s>>>(partial_.get(), kDotBlocks);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(host_, partial_.get(), sizeof(double2), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaMemcpyAsync(host_ + 1, partial_.get() + kDotBlocks, sizeof(double2), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return {{host_[0].x, host_[0].y}, {host_[1].x, host_[1].y}};
}

double DotReducer::magnitude_sse(const float2* x, const float2* ref, std::size_t n, cudaStream_t s) {
  if (n == 0) return 0.0;
  sse_partial_kernel<<<kDotBlocks, kThreads, 0, s>>>(x, ref, n, partial_.get());
  CUDA_CHECK_LAUNCH();
  return finish(s).real();
}

cdouble DotReducer::finish(cudaStream_t s) {
  dot_final_kernel<<<1, kThreads, 0, s>>>(partial_.get(), kDotBlocks);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpyAsync(host_, partial_.get(), sizeof(double2), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return {host_->x, host_->y};
}

}  // namespace fhd::gpu
