#pragma once
// The GPU's implementations of the operator families (recon/device/kernels.hpp),
// each in the file of its family; cuda/ops/gpu_kernels.cu registers them.
#include <memory>

#include "recon/coils/sense.hpp"
#include "recon/field/field.hpp"
#include "recon/gather/gather_kernels.hpp"
#include "recon/gridding/gridding_kernels.hpp"
#include "recon/nufft/nufft_kernels.hpp"
#include "recon/ops/diff.hpp"
#include "recon/ops/fft.hpp"
#include "recon/ops/wavelet.hpp"
#include "recon/plan/toeplitz_kernels.hpp"
#include "recon/solvers/prox.hpp"

namespace fhd::gpu {

std::unique_ptr<GatherKernels> make_gpu_gather(Device& dev);      // cuda/gather/gpu_gather.cu
std::unique_ptr<NufftKernels> make_gpu_nufft(Device& dev);        // cuda/nufft/gpu_nufft_kernels.cu
std::unique_ptr<ToeplitzKernels> make_gpu_toeplitz(Device& dev);  // cuda/plan/toeplitz.cu
std::unique_ptr<DiffKernels> make_gpu_diff(Device& dev);          // cuda/ops/diff.cu
std::unique_ptr<ProxKernels> make_gpu_prox(Device& dev);          // cuda/ops/diff.cu
std::unique_ptr<FftKernels> make_gpu_fft(Device& dev);            // cuda/ops/fft.cu
std::unique_ptr<GriddingKernels> make_gpu_gridding(Device& dev);  // cuda/gridding/gridding.cu
std::unique_ptr<FieldKernels> make_gpu_field(Device& dev);        // cuda/field/field_gather.cu
std::unique_ptr<MapsKernels> make_gpu_maps(Device& dev);          // cuda/coils/coil_maps.cu
std::unique_ptr<WaveletKernels> make_gpu_wavelet(Device& dev);    // cuda/ops/wavelet.cu

// Registers them all, once per process (make_gpu_device calls it).
void install_gpu_kernels();

}  // namespace fhd::gpu
