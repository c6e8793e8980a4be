#pragma once
// The exact signal model with off-resonance, on the GPU: the pairs of the
// cmpFhD gather with one more term in the phase (docs/field-maps.md),
//   adjoint: out_n = sum_m d_m exp(+i 2 pi (k_m . x_n + f_n t_m)),
//   forward: out_m = sum_n x_n exp(-i 2 pi (k_m . x_n + f_n t_m)),
// x_n the voxel centres of `grid` (core/types.hpp axis_coord: k in cycles/FOV),
// f_n the field map in Hz at voxel n, t_m sample m's time in seconds. No
// Toeplitz structure survives the f_n t_m term, so an exact reconstruction
// applies both every iteration; this is where an exact gather beats any plain
// NUFFT (time segmentation only approximates it).
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/trajectory.hpp"
#include "cuda/device/device_buffer.hpp"
#include "core/types.hpp"

namespace fhd::gpu {

// Device arrays of m samples (kz ignored on a 2D grid).
struct FieldSamples {
  const float* kx;
  const float* ky;
  const float* kz;
  const float* t;
  std::size_t m;
};

// Made once per trajectory, times and field map (the points of both sides,
// packed as (x, y, z, f) per voxel and (kx, ky, kz, t) per sample, stay on the
// device), applied every iteration. Device pointers, asynchronous on st; the
// inputs must outlive the constructor only.
class FieldGather {
 public:
  // fmap: grid.voxels() values (x fastest).
  FieldGather(const FieldSamples& s, const ImageGrid& grid, const float* fmap, cudaStream_t st);
  // d: m values in, grid.voxels() out.
  void adjoint(const float2* d, float2* out) const;
  // x: grid.voxels() values in, m out.
  void forward(const float2* x, float2* out) const;
  std::size_t samples() const { return samples_.size(); }
  std::size_t voxels() const { return voxels_.size(); }

 private:
  DeviceBuffer<float4> samples_, voxels_;
  cudaStream_t st_;
};

// Host conveniences (tests): upload, run on a stream of their own, download.
// Throws InputError when a length does not match.
std::vector<cfloat> field_adjoint(const Trajectory& traj, const std::vector<float>& times,
                                  const std::vector<cfloat>& d, const ImageGrid& grid, const std::vector<float>& fmap);
std::vector<cfloat> field_forward(const Trajectory& traj, const std::vector<float>& times,
                                  const std::vector<cfloat>& x, const ImageGrid& grid, const std::vector<float>& fmap);

}  // namespace fhd::gpu
