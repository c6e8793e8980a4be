#pragma once
// The launch functions behind kernel_table() (fhd_kernels.cpp) and their
// heuristic defaults. Plain C++ declarations: included from .cpp and .cu.
#include <cstddef>

#include "cuda/gather/fhd_kernels.hpp"

namespace fhd::gpu {

void launch_scatter(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_gather(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_registers(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_constant(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_tiles(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_sfu(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_coarsened(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_separable_fp32(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
void launch_separable_tf32(const SampleSet&, const OutGrid&, float2*, TrigMode, const LaunchConfig&, cudaStream_t);
// Destroys the cuBLAS handle the separable kernels made for this stream on the
// current device, if any; call before destroying the stream.
void release_blas_handle(cudaStream_t st);

// The main kernel of the last launch on this host thread (the sample sweep;
// for separable variants the B product kernel, the GEMM being cuBLAS's), so
// bench can report its registers and occupancy without a second dispatch.
struct LaunchRecord {
  const void* fn = nullptr;
  int threads = 0;
  std::size_t shmem = 0;
};
LaunchRecord& last_launch();

// Heuristic defaults of the coarsened kernel (a LaunchConfig field of 0 takes
// these). Set from `fhdrecon tune` on the H100 (docs/tuning.md): 16 voxels per
// thread where the x axis is long enough to keep most lanes busy, else 4.
// (The first heuristic, 256/2/8/1024, ran 1.22x slower.)
struct CoarsenedDefaults {
  int threads = 512, unroll = 8, tile = 1024;
  int coarsen(int lx) const { return lx >= 64 ? 16 : 4; }
};
// Separable: samples per GEMM chunk (K). coarsen selects the GEMM: 1 = cublasCgemm
// (4 real products), 3 = cublasCgemm3m (Gauss, 3 real products; fp32 only).
struct SeparableDefaults {
  int tile = 4096, coarsen = 1;
};

}  // namespace fhd::gpu
