#pragma once
// Device memory from pools of each GPU's own once peer access is on (--gpus
// with several GPUs). Then every cudaMalloc also maps its memory into each
// peer, and every cudaFree unmaps it, at a cost that grows with the peers:
// 8-coil SENSE's Q stage at 128^3 took 11 ms on 1 GPU of an H200 host, 20 ms
// with 2 GPUs and 39 ms with 4 (docs/performance.md); on 2 GPUs 16.5 ms of one
// stage was cudaFree of per-coil temporaries. Two pools a device: DeviceOnly's,
// which no peer maps (scratch), and Peers', mapped only into the devices noted
// to reach this one (vectors, results copied to another GPU).
// The pools keep what is freed: a pool that gives its pages back maps them
// again at every allocation (1.0 ms a GiB on an H100; 11.9 ms of SENSE's
// coil-maps stage on 2 GPUs), one that keeps them hands them out in
// microseconds. Idle pool memory still counts as free (free_device_bytes),
// and an allocation that finds too little (outside the pools, or in the other
// pool) trims the pools and tries once more.
// Until peer access is on, plain cudaMalloc maps into no peer either and
// holds nothing back, so the pools serve only after note_peer_access().
#include <cuda_runtime.h>

#include <cstddef>

namespace fhd::gpu {

// Who reaches a buffer: every GPU with peer access (vectors, results that may
// be copied to another GPU), or its own GPU only (scratch).
enum class Reach { Peers, DeviceOnly };

// `device` has peer access to `peer`'s memory (cudaDeviceEnablePeerAccess):
// allocations from now on take the pools, and `peer`'s Peers pool lets
// `device` in (the pool made already, or made later). device == peer only
// turns the pools on.
void note_peer_access(int device, int peer);

// On the current device: from its pool for `reach` once peer access is on,
// else cudaMalloc; *pooled says which (free with pool_free, or cudaFree).
// Out of memory, it trims the pools and tries once more; then
// cudaErrorMemoryAllocation.
cudaError_t device_malloc(void** p, std::size_t bytes, Reach reach, bool* pooled);
// Pooled memory device_malloc gave on `device`; errors are left for the next call.
void pool_free(void* p, int device) noexcept;

// cudaMallocAsync from the current device's default pool (the gather's
// scratch), once more after trim_pools() when out of memory.
cudaError_t malloc_async(void** p, std::size_t bytes, cudaStream_t s);

// Bytes the current device's pools (the default one too) hold unused, which
// cudaMemGetInfo counts as taken. No allocation.
std::size_t idle_pool_bytes();
// Gives that memory back to the current device, for an allocation that found
// too little.
void trim_pools();
// Makes the current device's two pools (once peer access is on) and grows
// each by `bytes` (allocated and freed: kept), so that the first allocations
// of a run find their memory mapped (docs/gpu-backend.md). A reserve that
// does not fit is skipped.
void reserve_pools(std::size_t bytes);
// cudaDeviceReset destroys the device's pools (reset_devices): forget them.
void forget_pools(int device);

}  // namespace fhd::gpu
