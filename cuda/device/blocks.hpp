#pragma once
// How many blocks a launch gets. One rule for every kernel of cuda/: the
// chip's size comes from the device, never from a constant of one GPU model.
#include <cstddef>

namespace fhd::gpu {

// One thread per element: ceil(n / threads), at least 1.
inline unsigned blocks_covering(std::size_t n, unsigned threads) {
  const std::size_t want = (n + threads - 1) / threads;
  return unsigned(want < 1 ? 1 : want);
}

// Streaming multiprocessors of the current device: queried once per device
// (cudaDeviceGetAttribute, checked) and cached.
int sm_count();

// A grid-stride loop: enough blocks to fill the chip (32 per SM saturate
// it), never more than the elements need.
inline unsigned blocks_for(std::size_t n, unsigned threads) {
  const unsigned want = blocks_covering(n, threads);
  const unsigned cap = 32u * unsigned(sm_count());
  return want < cap ? want : cap;
}

}  // namespace fhd::gpu

// The loop blocks_for's launches run: element i of n, striding by the grid.
#define GRID_STRIDE(i, n)                                                   \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; \
       i < (n); i += std::size_t(gridDim.x) * blockDim.x)
