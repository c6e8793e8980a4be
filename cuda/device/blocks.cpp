#include "cuda/device/blocks.hpp"

#include <array>
#include <atomic>

#include "cuda/device/check.hpp"

namespace fhd::gpu {

int sm_count() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  // Every launch asks, so the answer is kept per device (lock-free reads).
  static std::array<std::atomic<int>, 64> cached{};
  const bool cacheable = dev >= 0 && dev < int(cached.size());
  int n = cacheable ? cached[dev].load(std::memory_order_relaxed) : 0;
  if (n > 0) return n;
  CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (cacheable) cached[dev].store(n, std::memory_order_relaxed);
  return n;
}

}  // namespace fhd::gpu
