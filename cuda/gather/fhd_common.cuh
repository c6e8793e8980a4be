#pragma once
// Device helpers shared by the cmpFhD kernel family (fhd_direct.cu,
// fhd_separable.cu): trig per TrigMode, output coordinates, launch sizing.
// Phases are in turns (cycles): t = k . x, and exp(i 2 pi t) is evaluated
// after reducing t to [-1/2, 1/2] so every trig mode sees a small argument.
#include <cuda_runtime.h>

#include <cstddef>

#include "cuda/device/blocks.hpp"
#include "cuda/device/check.hpp"
#include "cuda/gather/fhd_kernels.hpp"

namespace fhd::gpu {

// exp(i 2 pi t) = (c, s) for a phase t in turns.
template <TrigMode T>
__device__ __forceinline__ void turn_sincos(float t, float* s, float* c) {
  t -= rintf(t);  // exact in float: keeps the argument within one turn
  if constexpr (T == TrigMode::Sfu) {
    __sincosf(6.283185307179586f * t, s, c);  // MUFU.SIN/COS: abs err ~5e-7 on [-pi, pi]
  } else if constexpr (T == TrigMode::Single) {
    sincospif(2.0f * t, s, c);  // accurate (1-2 ulp), no large-argument reduction
  } else {
    double sd, cd;
    sincospi(2.0 * double(t), &sd, &cd);
    *s = float(sd);
    *c = float(cd);
  }
}

__device__ __forceinline__ void turn_sincos_d(double t, double* s, double* c) {
  t -= rint(t);
  sincospi(2.0 * t, s, c);
}

// Coordinate of index i on an axis of `len` points of an image of n voxels
// (recon/problem/scan.hpp axis_coord), computed in double then rounded once.
__device__ __forceinline__ double coord_d(int i, int len, int n) {
  return double(i - len / 2) / double(n);
}

// The (ix, iy, iz) of flat output index p (x fastest).
__device__ __forceinline__ void unflatten(std::size_t p, const OutGrid& g, int* ix, int* iy, int* iz) {
  *ix = int(p % std::size_t(g.lx));
  std::size_t r = p / std::size_t(g.lx);
  *iy = int(r % std::size_t(g.ly));
  *iz = int(r / std::size_t(g.ly));
}

// Points per launch: keeps each grid far below the 2^31-1 block limit and
// each launch's run time bounded (slabs of the output).
constexpr std::size_t kSlabPoints = std::size_t(1) << 24;

}  // namespace fhd::gpu
