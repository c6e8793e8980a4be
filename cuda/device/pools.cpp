#include "cuda/device/pools.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>

#include "cuda/device/check.hpp"

namespace fhd::gpu {
namespace {

struct DevicePools {
  cudaMemPool_t own = nullptr;     // Reach::DeviceOnly
  cudaMemPool_t shared = nullptr;  // Reach::Peers
  cudaStream_t stream = nullptr;   // orders both pools' own allocations and frees
  std::set<int> peers;             // the devices noted to reach this one's memory
};

std::atomic<bool> g_on{false};
std::mutex g_mutex;
// Never destroyed (a buffer freed during static teardown still finds it);
// the pools go with the process, like the contexts.
std::map<int, DevicePools>& g_pools = *new std::map<int, DevicePools>;

void grant(cudaMemPool_t pool, int peer) {
  cudaMemAccessDesc access{};
  access.location.type = cudaMemLocationTypeDevice;
  access.location.id = peer;
  access.flags = cudaMemAccessFlagsProtReadWrite;
  CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));
}

// A pool on `device` that keeps what is freed, open to `peers`.
cudaMemPool_t make_pool(int device, const std::set<int>& peers) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  std::uint64_t keep = UINT64_MAX;
  CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  for (int peer : peers) grant(pool, peer);
  return pool;
}

// The pool for `reach` of `device` (the current one), made at first use; the
// pools' stream in *stream.
cudaMemPool_t pool_of(int device, Reach reach, cudaStream_t* stream) {
  std::lock_guard<std::mutex> lock(g_mutex);
  DevicePools& d = g_pools[device];
  if (!d.stream) CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  cudaMemPool_t& pool = reach == Reach::DeviceOnly ? d.own : d.shared;
  if (!pool) pool = make_pool(device, reach == Reach::Peers ? d.peers : std::set<int>{});
  *stream = d.stream;
  return pool;
}

cudaStream_t pool_stream(int device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = g_pools.find(device);
  return it == g_pools.end() ? nullptr : it->second.stream;
}

// The current device's pools: its own two (null until made) and the default one.
std::array<cudaMemPool_t, 3> pools_here() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::array<cudaMemPool_t, 3> pools{};
  CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pools[2], device));
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = g_pools.find(device);
  if (it != g_pools.end()) pools[0] = it->second.own, pools[1] = it->second.shared;
  return pools;
}

// alloc() once more after trim_pools() where it ran out of memory.
template <class Alloc>
cudaError_t with_trim(Alloc alloc) {
  const cudaError_t e = alloc();
  if (e != cudaErrorMemoryAllocation) return e;
  cudaGetLastError();  // not sticky: clear it for the retry
  trim_pools();
  return alloc();
}

cudaError_t try_malloc(void** p, std::size_t bytes, Reach reach, bool* pooled) {
  *pooled = g_on;
  if (!*pooled) return cudaMalloc(p, bytes);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaStream_t stream = nullptr;
  const cudaMemPool_t pool = pool_of(device, reach, &stream);
  const cudaError_t e = cudaMallocFromPoolAsync(p, bytes, pool, stream);
  if (e != cudaSuccess) return e;
  return cudaStreamSynchronize(stream);  // ready for any stream on return, as cudaMalloc's
}

}  // namespace

void note_peer_access(int device, int peer) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_on = true;
  if (device == peer) return;  // a device reaches its own pools
  DevicePools& d = g_pools[peer];
  if (d.peers.count(device)) return;
  if (d.shared) grant(d.shared, device);
  d.peers.insert(device);
}

void reserve_pools(std::size_t bytes) {
  if (!g_on) return;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  for (Reach r : {Reach::Peers, Reach::DeviceOnly}) {
    cudaStream_t stream = nullptr;
    const cudaMemPool_t pool = pool_of(device, r, &stream);
    void* p = nullptr;
    if (bytes == 0 || cudaMallocFromPoolAsync(&p, bytes, pool, stream) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    CUDA_CHECK(cudaFreeAsync(p, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

cudaError_t device_malloc(void** p, std::size_t bytes, Reach reach, bool* pooled) {
  return with_trim([&] { return try_malloc(p, bytes, reach, pooled); });
}

void pool_free(void* p, int device) noexcept {
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) return;
  if (cudaSetDevice(device) != cudaSuccess) return;
  try {
    const cudaStream_t stream = pool_stream(device);  // null after forget_pools: the memory went with the reset
    // The buffer's last users may be queued on any stream of the device (a
    // peer's copy of it is ordered into them, Device::copy), and the pool may
    // hand the memory out again at once: wait for them all, as cudaFree does.
    // A pool counts an ordered free as done only once the host has seen it
    // complete; until then the memory is reusable only by work ordered after
    // it, and trim_pools cannot release it. Waiting for the pools' stream
    // (idle by now, microseconds) makes it free for the next allocation
    // whatever its stream, and counted idle by free_device_bytes.
    if (stream && cudaDeviceSynchronize() == cudaSuccess && cudaFreeAsync(p, stream) == cudaSuccess)
      cudaStreamSynchronize(stream);
  } catch (...) {  // the lock failed: nothing to free then
  }
  cudaSetDevice(current);
}

cudaError_t malloc_async(void** p, std::size_t bytes, cudaStream_t s) {
  return with_trim([&] { return cudaMallocAsync(p, bytes, s); });
}

std::size_t idle_pool_bytes() {
  std::size_t idle = 0;
  for (cudaMemPool_t pool : pools_here()) {
    if (!pool) continue;
    std::uint64_t reserved = 0, used = 0;
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    if (reserved > used) idle += std::size_t(reserved - used);
  }
  return idle;
}

void trim_pools() {
  for (cudaMemPool_t pool : pools_here())
    if (pool) CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
}

void forget_pools(int device) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_pools.erase(device);
}

}  // namespace fhd::gpu
