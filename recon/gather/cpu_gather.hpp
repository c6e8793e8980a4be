#pragma once
#include <memory>

#include "recon/gather/gather_kernels.hpp"

namespace fhd {

std::unique_ptr<GatherKernels> make_cpu_gather(Device& dev);

}  // namespace fhd
