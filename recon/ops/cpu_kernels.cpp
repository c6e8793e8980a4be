// Every operator family's CPU implementation, registered once per process
// (recon/device/kernels.hpp). A new family with CPU code adds its line here.
#include <mutex>

#include "recon/coils/sense.hpp"
#include "recon/device/kernels.hpp"
#include "recon/field/field.hpp"
#include "recon/gather/cpu_gather.hpp"
#include "recon/gridding/gridding_cpu.hpp"
#include "recon/nufft/cpu_nufft_kernels.hpp"
#include "recon/ops/diff.hpp"
#include "recon/ops/fft.hpp"
#include "recon/ops/wavelet.hpp"
#include "recon/plan/toeplitz.hpp"
#include "recon/solvers/prox.hpp"

namespace fhd {

void install_cpu_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    const DeviceKind cpu = DeviceKind::Cpu;
    register_kernels<GatherKernels>(cpu, make_cpu_gather);
    register_kernels<NufftKernels>(cpu, make_cpu_nufft);
    register_kernels<ToeplitzKernels>(cpu, make_cpu_toeplitz);
    register_kernels<DiffKernels>(cpu, make_cpu_diff);
    register_kernels<ProxKernels>(cpu, make_cpu_prox);
    register_kernels<FftKernels>(cpu, make_cpu_fft);
    register_kernels<GriddingKernels>(cpu, make_cpu_gridding);
    register_kernels<FieldKernels>(cpu, make_cpu_field);
    register_kernels<MapsKernels>(cpu, make_cpu_maps);
    register_kernels<WaveletKernels>(cpu, make_cpu_wavelet);
  });
}

}  // namespace fhd
