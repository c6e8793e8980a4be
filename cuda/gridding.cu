// Placeholder until the gridding kernels land (next commit).
#include "cuda/gpu_internal.hpp"

namespace fhd::gpu {
std::vector<cfloat> grid_scatter(const DeviceTrajectory&, const std::vector<cfloat>&, const ImageGrid&,
                                 const ImageGrid&, const GridKernel&, ScatterMethod, cudaStream_t) {
  throw DeviceError("gpu grid_scatter: not implemented yet");
}
}  // namespace fhd::gpu
