#pragma once
// The CPU gridding scatter, a free function so the CPU backend's grid_scatter
// can delegate to it (owned by the gridding code, recon/gridding*.cpp).
#include <vector>

#include "recon/device/device.hpp"

namespace fhd {

// Same contract as Backend::grid_scatter, with the trajectory passed in.
std::vector<cfloat> cpu_grid_scatter(const Trajectory& traj, const std::vector<cfloat>& weighted_data,
                                     const ImageGrid& image, const ImageGrid& over,
                                     const GridKernel& kernel);

}  // namespace fhd
