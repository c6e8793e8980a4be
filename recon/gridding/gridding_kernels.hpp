#pragma once
// Gridding's heavy part on a device: scatter the weighted samples onto an
// oversampled grid (sum_m w_m D_m C(u - u_m), u_m = k_m over.n / N + over.n / 2
// per axis), its centred inverse DFT, and the central image window (x_i =
// (i - N/2)/N as for voxels). CPU: recon/gridding/gridding_cpu.cpp; GPU:
// cuda/gridding/gridding.cu (only the window crosses to the host).
#include <vector>

#include "recon/device/device.hpp"
#include "recon/gridding/grid_kernel.hpp"

namespace fhd {

class GriddingKernels {
 public:
  virtual ~GriddingKernels() = default;
  virtual std::vector<cfloat> grid_to_image(const Points& k, const std::vector<cfloat>& weighted_data,
                                            const ImageGrid& image, const ImageGrid& over,
                                            const GridKernel& kernel) = 0;
};

// The central `image` window of a grid of size `over` whose index over.n/2 is the origin.
std::vector<cfloat> center_window(const std::vector<cfloat>& grid, const ImageGrid& over, const ImageGrid& image);

}  // namespace fhd
