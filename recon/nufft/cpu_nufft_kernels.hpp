#pragma once
#include <memory>

#include "recon/nufft/nufft_kernels.hpp"

namespace fhd {

std::unique_ptr<NufftKernels> make_cpu_nufft(Device& dev);

}  // namespace fhd
