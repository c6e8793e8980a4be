#pragma once
// The CPU device: vectors in host memory, OpenMP loops. Its operator families
// (FFTW, BLAS, the CPU NUFFT) register in recon/ops/cpu_kernels.cpp.
#include "recon/device/device.hpp"

namespace fhd {

// The host pointer behind a vector of a CPU device (std::invalid_argument for another device's).
cfloat* host_data(DeviceVector& v);
const cfloat* host_data(const DeviceVector& v);

// OpenMP threads this process uses.
int cpu_threads();

}  // namespace fhd
