#include "cuda/device/device_only.hpp"

#include <atomic>
#include <map>
#include <mutex>

#include "cuda/device/check.hpp"

namespace fhd::gpu {
namespace {

struct DevicePool {
  cudaMemPool_t pool = nullptr;
  cudaStream_t stream = nullptr;  // orders the pool's own allocations and frees
};

std::atomic<bool> g_peers{false};
std::mutex g_mutex;
// Never destroyed (a buffer freed during static teardown still finds it);
// the pools go with the process, like the contexts.
std::map<int, DevicePool>& g_pools = *new std::map<int, DevicePool>;

DevicePool pool_of(int device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  DevicePool& p = g_pools[device];
  if (!p.pool) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    CUDA_CHECK(cudaMemPoolCreate(&p.pool, &props));
    CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
  }
  return p;
}

}  // namespace

void note_peer_access() { g_peers = true; }

cudaError_t device_only_malloc(void** p, std::size_t bytes, bool* pooled) {
  *pooled = g_peers;
  if (!*pooled) return cudaMalloc(p, bytes);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const DevicePool pool = pool_of(device);
  const cudaError_t e = cudaMallocFromPoolAsync(p, bytes, pool.pool, pool.stream);
  if (e != cudaSuccess) return e;
  return cudaStreamSynchronize(pool.stream);  // ready for any stream on return, as cudaMalloc's
}

void device_only_free(void* p, int device) noexcept {
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) return;
  if (cudaSetDevice(device) != cudaSuccess) return;
  try {
    const DevicePool pool = pool_of(device);
    // cudaFree waits for the device: the buffer's last users may be queued on any stream.
    if (cudaDeviceSynchronize() == cudaSuccess && cudaFreeAsync(p, pool.stream) == cudaSuccess)
      cudaStreamSynchronize(pool.stream);  // the memory goes back to the device now
  } catch (...) {  // pool_of's checks: nothing to free then
  }
  cudaSetDevice(current);
}

}  // namespace fhd::gpu
