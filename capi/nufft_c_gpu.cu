// The GPU half of the C NUFFT interface (capi/nufft_c.cpp): cuda/nufft/nufft.hpp's
// NufftPlan on the caller's device arrays. Points in radians are converted to
// cycles/FOV on the device (no trip through the host); data are used in place.
#include <cmath>

#include "capi/nufft_c_internal.hpp"
#include "core/error.hpp"
#include "cuda/device/check.hpp"
#include "cuda/device/device_buffer.hpp"
#include "cuda/nufft/nufft.hpp"

namespace fhd::capi {

namespace {

// Makes `device` current for one scope and restores the caller's.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    CUDA_CHECK(cudaGetDevice(&old_));
    if (old_ != device) CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceScope() { cudaSetDevice(old_); }  // no throw from a destructor
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int old_ = 0;
};

// k = wrap(sign x) * scale, wrap to [-pi, pi) in double (as the CPU side does).
// The first point that is not finite is kept in *bad (its index; m or more
// when none), for setpts to refuse: its grid index would be undefined.
__global__ void radians_to_cycles(const float* x, float* k, std::size_t m, double sign, double scale,
                                  unsigned long long* bad) {
  const std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  if (!isfinite(x[j])) atomicMin(bad, static_cast<unsigned long long>(j));
  constexpr double two_pi = 6.283185307179586476925286766559;
  const double v = sign * double(x[j]);
  k[j] = float((v - two_pi * floor((v + two_pi / 2) / two_pi)) * scale);
}

}  // namespace

struct GpuNufft {
  int device = 0;
  cudaStream_t stream = nullptr;
  ImageGrid modes;
  std::unique_ptr<gpu::NufftPlan> plan;
  gpu::DeviceBuffer<float> k[3];
  std::size_t m = 0;
};

void gpu_check_device(int device) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError("device = " + std::to_string(device) + ": no usable GPU (" + cudaGetErrorString(e) + ")");
  }
  if (device >= count)
    throw InputError("nufft", "device", std::to_string(device),
                     "this host has " + std::to_string(count) + " GPU(s)");
}

GpuNufft* gpu_make(int device, const ImageGrid& modes, double tol, double sigma, void* stream) {
  DeviceScope scope(device);
  auto p = std::make_unique<GpuNufft>();
  p->device = device;
  p->stream = static_cast<cudaStream_t>(stream);
  p->modes = modes;
  gpu::NufftOptions opt;
  opt.tol = tol;
  opt.sigma = sigma;
  p->plan = std::make_unique<gpu::NufftPlan>(modes, modes, opt, p->stream);
  return p.release();
}

void gpu_setpts(GpuNufft* p, std::size_t m, const float* const src[3], const char* names, double sign,
                const double scale[3]) {
  DeviceScope scope(p->device);
  const char* what[3] = {"NUFFT points kx", "NUFFT points ky", "NUFFT points kz"};
  gpu::DeviceBuffer<unsigned long long> bad(3, "NUFFT points' first non-finite index");
  CUDA_CHECK(cudaMemsetAsync(bad.get(), 0xff, bad.bytes(), p->stream));
  p->m = 0;  // no points until these are checked
  for (int a = 0; a < 3; ++a) {
    if (!src[a]) {
      p->k[a].release();
      continue;
    }
    p->k[a].allocate(m, what[a]);
    if (m == 0) continue;
    constexpr int threads = 256;
    radians_to_cycles<<<unsigned((m + threads - 1) / threads), threads, 0, p->stream>>>(src[a], p->k[a].get(), m,
                                                                                        sign, scale[a], bad.get() + a);
    CUDA_CHECK_LAUNCH();
  }
  unsigned long long first[3];
  CUDA_CHECK(cudaMemcpyAsync(first, bad.get(), sizeof first, cudaMemcpyDeviceToHost, p->stream));
  CUDA_CHECK(cudaStreamSynchronize(p->stream));
  for (int a = 0; a < 3; ++a)
    if (src[a] && first[a] < m)
      throw InputError("nufft", std::string(1, names[a]) + "[" + std::to_string(first[a]) + "]", "not finite",
                       "points must be finite");
  p->m = m;
  p->plan->set_points(p->k[0].get(), p->k[1].get(), p->k[2].get(), m);
}

void gpu_execute(GpuNufft* p, int type, int n_trans, float* c, float* f) {
  DeviceScope scope(p->device);
  auto* cc = reinterpret_cast<float2*>(c);
  auto* ff = reinterpret_cast<float2*>(f);
  // One batched call: the n_trans transforms share the sorted points and go
  // through one spread/interpolation launch and one batched cuFFT.
  if (type == 1)
    p->plan->type1(cc, ff, n_trans);
  else
    p->plan->type2(ff, cc, n_trans);
}

void gpu_destroy(GpuNufft* p) noexcept {
  if (!p) return;
  try {
    DeviceScope scope(p->device);  // the plan's buffers belong to its device
    delete p;
    return;
  } catch (...) {
    // the device could not be made current: free what the host holds anyway
  }
  delete p;
}

}  // namespace fhd::capi
