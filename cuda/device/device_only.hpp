#pragma once
// Memory only its own GPU reaches, for scratch that never crosses devices (the
// NUFFT's fine grids and sort buffers, the Toeplitz spectra and batched FFT
// buffers, cuFFT's work areas). Once peer access is on (--gpus with several
// GPUs), every cudaMalloc also maps the memory into each peer, and the cost
// grows with the peers: 8-coil SENSE's Q stage at 128^3 took 11 ms on 1 GPU
// of an H200 host, 20 ms with 2 GPUs and 39 ms with 4, and 11 ms at 4 with
// peer access off (docs/performance.md). A memory pool of the device's own
// (cudaMemPoolCreate) is mapped only there: peer access does not reach it.
// It keeps nothing: freed memory goes back at once, so free-memory checks
// stay true. The calls keep cudaMalloc's and cudaFree's waits: memory is
// ready on return, and a free first waits for the device to finish.
// Until peer access is on, plain cudaMalloc maps into no peer either and
// costs less: the pool maps and unmaps its pages at each allocation and free
// (an H100: 1.0 and 1.4 ms a GiB against cudaMalloc's 0.13 and 0.39), which
// was most of the NUFFT's set_points at 16.8M points. So the pool serves only
// once note_peer_access() has been called.
#include <cuda_runtime.h>

#include <cstddef>

namespace fhd::gpu {

// Peer access is on between some GPUs of the process: allocations from now
// on take the pool.
void note_peer_access();

// On the current device; cudaErrorMemoryAllocation where it does not fit.
// *pooled: whether it came from the pool (free it with device_only_free) or
// from cudaMalloc (cudaFree).
cudaError_t device_only_malloc(void** p, std::size_t bytes, bool* pooled);
// Pooled memory device_only_malloc gave on `device`; errors are left for the next call.
void device_only_free(void* p, int device) noexcept;

}  // namespace fhd::gpu
