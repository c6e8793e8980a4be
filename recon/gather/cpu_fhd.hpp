#pragma once
// CPU cmpFhD and cmpQ (OpenMP, BLAS). Both are the same gather
//   out(p) = sum_m w_m exp(+i 2 pi k_m . p)
// over a Cartesian set of points p; they differ only in the weights and grid.
// Kernels (FhdOptions::kernel):
//   "direct"    per-pair sum, OpenMP over output points, samples in tiles
//   "separable" per-axis factors exp(i2pi kx x) exp(i2pi ky y) exp(i2pi kz z),
//               one complex GEMM per chunk of samples (cgemm, zgemm for double)
//   ""          the default: separable (see docs/cpu-backend.md for rates)
#include <string>
#include <vector>

#include "core/trajectory.hpp"
#include "recon/gather/fhd_options.hpp"

namespace fhd {

// FhD_n = sum_m mu_m exp(+i 2 pi k_m . x_n) on grid's voxel centers.
std::vector<cfloat> cpu_fhd(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid,
                            const FhdOptions& opt);

// Q on grid.doubled(), w empty = 1. Computes about half the points and fills
// the rest from Q(-y) = conj(Q(y)).
std::vector<cfloat> cpu_q(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                          const FhdOptions& opt);

// The same with the sums returned in double before rounding to float: lets
// tests see the float64 accuracy of trig = double (~1e-14, not float's 6e-8).
std::vector<cdouble> cpu_fhd_wide(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid,
                                  const FhdOptions& opt);
std::vector<cdouble> cpu_q_wide(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                const FhdOptions& opt);

// The kernel name "" resolves to; throws InputError for an unknown name.
std::string cpu_kernel_name(const FhdOptions& opt);

// Parts for a partition over devices (recon/gather/gather_kernels.hpp): FhD on
// slices [a0, a0 + h) of the last axis; slices of Q's Hermitian half box; Q
// from the whole half box (the rest gathered here, the mirror filled).
std::vector<cfloat> cpu_fhd_slab(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid, int a0,
                                 int h, const FhdOptions& opt);
std::vector<cfloat> cpu_q_half_slab(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                    int a0, int h, const FhdOptions& opt);
std::vector<cfloat> cpu_q_from_half(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                    const FhdOptions& opt, const std::vector<cfloat>& half);

}  // namespace fhd
