// Every operator family's GPU implementation, registered once per process
// (recon/device/kernels.hpp). A new family with GPU code adds its line here.
#include <mutex>

#include "cuda/ops/gpu_kernels.hpp"
#include "recon/device/kernels.hpp"

namespace fhd::gpu {

void install_gpu_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    const DeviceKind gpu = DeviceKind::Gpu;
    register_kernels<GatherKernels>(gpu, make_gpu_gather);
    register_kernels<NufftKernels>(gpu, make_gpu_nufft);
    register_kernels<ToeplitzKernels>(gpu, make_gpu_toeplitz);
    register_kernels<DiffKernels>(gpu, make_gpu_diff);
    register_kernels<ProxKernels>(gpu, make_gpu_prox);
    register_kernels<FftKernels>(gpu, make_gpu_fft);
    register_kernels<GriddingKernels>(gpu, make_gpu_gridding);
    register_kernels<FieldKernels>(gpu, make_gpu_field);
    register_kernels<MapsKernels>(gpu, make_gpu_maps);
    register_kernels<WaveletKernels>(gpu, make_gpu_wavelet);
  });
}

}  // namespace fhd::gpu
