#pragma once
// The CPU gridding scatter, a free function so the CPU backend's grid_scatter
// can delegate to it (owned by the gridding code, recon/gridding*.cpp).
#include <memory>
#include <vector>

#include "recon/gridding/gridding_kernels.hpp"

namespace fhd {

// The CPU scatter of GriddingKernels (recon/gridding/gridding_kernels.hpp).
std::vector<cfloat> cpu_grid_scatter(const Trajectory& traj, const std::vector<cfloat>& weighted_data,
                                     const ImageGrid& image, const ImageGrid& over,
                                     const GridKernel& kernel);

std::unique_ptr<GriddingKernels> make_cpu_gridding(Device& dev);

}  // namespace fhd
