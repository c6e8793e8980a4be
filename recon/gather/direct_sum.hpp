#pragma once
// Float64 direct sums: the references every FhD/Q kernel (CPU and GPU) is
// tested against. Deliberately plain: one loop over outputs, one over samples,
// sine and cosine in double of the phase reduced to one turn first (so large
// k.x lose no digits). O(M N): for test-sized problems only, or for a subset
// of the voxels (the at-points overload).
#include <cstddef>
#include <vector>

#include "recon/problem/scan.hpp"

namespace fhd {

// FhD_n = sum_m mu_m exp(+i 2 pi k_m . x_n) on the voxel centers of grid.
std::vector<cdouble> fhd_reference(const Trajectory& traj, const std::vector<cfloat>& mu,
                                   const ImageGrid& grid);

// The same FhD at the voxels `at` only (indices into grid, x fastest), in that
// order: the reference of `validate` and `bench`, whose grids are too large
// for every voxel. OpenMP-parallel over the voxels.
std::vector<cdouble> fhd_reference(const Trajectory& traj, const std::vector<cfloat>& mu,
                                   const ImageGrid& grid, const std::vector<std::size_t>& at);

// Q(y_j) = sum_m w_m exp(+i 2 pi k_m . y_j) on grid.doubled(), y_j = (j - N)/N
// (an axis of length 1 stays at 0). w empty means w_m = 1.
std::vector<cdouble> q_reference(const Trajectory& traj, const std::vector<float>& w,
                                 const ImageGrid& grid);

// The same Q at the doubled grid's points `at` only (indices into grid.doubled()).
std::vector<cdouble> q_reference(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                 const std::vector<std::size_t>& at);

// The forward model with Phi = 1: D_m = sum_n rho_n exp(-i 2 pi k_m . x_n).
std::vector<cdouble> forward_reference(const Trajectory& traj, const std::vector<cfloat>& rho,
                                       const ImageGrid& grid);

// The same at the samples `at` only, for grids too large for the full sum:
// the phase factors per axis (3 n turns, each reduced as above), then O(N)
// complex products in double per sample. OpenMP-parallel over the samples.
std::vector<cdouble> forward_reference(const Trajectory& traj, const std::vector<cfloat>& rho,
                                       const ImageGrid& grid, const std::vector<std::size_t>& at);

}  // namespace fhd
