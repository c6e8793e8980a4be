#pragma once
// RAII device memory. Every allocation checks free memory first, so a request
// that cannot fit becomes one clear DeviceError
//   "out of GPU memory: need 2.00 GiB for the Toeplitz spectrum, 1.31 GiB free"
// instead of a crash or a bare cudaErrorMemoryAllocation later on.
// No managed memory: plain cudaMalloc, or the device's pools once peer access
// is on (cuda/device/pools.hpp; docs/gpu-backend.md, "Memory plan").
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "cuda/device/check.hpp"
#include "cuda/device/pools.hpp"

namespace fhd::gpu {

inline std::string format_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// Free for the next allocation: the device's free memory and what its pools
// hold unused (an allocation that needs it trims them).
inline std::size_t free_device_bytes() {
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free + idle_pool_bytes();
}

[[noreturn]] inline void out_of_memory(double bytes, const std::string& what, std::size_t free) {
  throw DeviceError("out of GPU memory: need " + format_gib(bytes) + " GiB for " + what + ", " +
                    format_gib(double(free)) + " GiB free");
}

// Headroom left for the CUDA context, cuFFT's internals and the kernels'
// own scratch: an allocation that leaves less than this would fail later, in
// a place that cannot say what the memory was for.
constexpr std::size_t kHeadroomBytes = std::size_t(64) << 20;

// Throws the out-of-memory DeviceError when `bytes` would not fit now.
inline void require_free(double bytes, const std::string& what) {
  const std::size_t free = free_device_bytes();
  if (bytes + double(kHeadroomBytes) > double(free)) out_of_memory(bytes, what, free);
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t n, const std::string& what, Reach reach = Reach::Peers) { allocate(n, what, reach); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), device_(std::exchange(o.device_, -1)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
      device_ = std::exchange(o.device_, -1);
    }
    return *this;
  }

  // Frees what it held, then takes n elements (contents undefined).
  void allocate(std::size_t n, const std::string& what, Reach reach = Reach::Peers) {
    release();
    if (n == 0) return;
    const double bytes = double(n) * sizeof(T);
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) out_of_memory(bytes, what, free_device_bytes());
    require_free(bytes, what);
    void* p = nullptr;
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));
    bool pooled = false;
    const cudaError_t e = device_malloc(&p, n * sizeof(T), reach, &pooled);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: clear it so later calls go on
      out_of_memory(bytes, what, free_device_bytes());
    }
    CUDA_CHECK(e);
    p_ = static_cast<T*>(p);
    n_ = n;
    device_ = pooled ? device : -1;
  }
  void release() noexcept {
    // No throw from a destructor; a failed free is reported by the next call.
    if (p_ && device_ >= 0)
      pool_free(p_, device_);
    else if (p_)
      cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
    device_ = -1;
  }

  T* get() { return p_; }
  const T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  // From one of the device's pools (once peer access is on), not cudaMalloc.
  bool pooled() const { return device_ >= 0; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
  int device_ = -1;  // the device of pooled memory; -1 for cudaMalloc's
};

// Host <-> device copies on a stream. Downloads synchronize the stream so the
// host data is ready on return.
template <class T>
void upload(const T* host, std::size_t n, T* dev, cudaStream_t s) {
  if (n) CUDA_CHECK(cudaMemcpyAsync(dev, host, n * sizeof(T), cudaMemcpyHostToDevice, s));
}
template <class T>
void download(const T* dev, std::size_t n, T* host, cudaStream_t s) {
  if (n) CUDA_CHECK(cudaMemcpyAsync(host, dev, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace fhd::gpu
