#pragma once
// Device pieces of Q's Hermitian half (cuda/gather/q_hermitian.cu).
#include <cuda_runtime.h>

#include "cuda/gather/fhd_kernels.hpp"

namespace fhd::gpu {

// out_m = s.w_m * exp(i 2 pi (kx dx + ky dy + kz dz)).
void launch_phase_shift(const SampleSet& s, double dx, double dy, double dz, float2* out, cudaStream_t st);

// Builds Q on the doubled grid (lx, ly, lz) from the half box (mirror-axis
// slices 0..n, laid out like the grid), face0 (x = 0; 3D: [n-1][ly], 2D: [n-1])
// and face1 (3D only: y = 0, x = 1..lx-1: [n-1][lx-1]); the rest is conj of
// the mirrored point. Mirror axis: z in 3D, y in 2D.
void launch_assemble_q(const float2* half, const float2* face0, const float2* face1, int lx, int ly, int lz,
                       float2* q, cudaStream_t st);

}  // namespace fhd::gpu
