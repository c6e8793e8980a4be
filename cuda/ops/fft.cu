// The centred DFT on the GPU (recon/ops/fft.hpp's FftKernels): cuFFT with the
// shifts as modular gathers (cuda/plan/toeplitz.cu's centered_dft_window).
#include "cuda/device/gpu_internal.hpp"
#include "cuda/ops/gpu_kernels.hpp"

namespace fhd::gpu {
namespace {

class GpuFft : public FftKernels {
 public:
  explicit GpuFft(Device& dev) : dev_(dev) {}
  void centered(DeviceVector& grid, const ImageGrid& dims, bool inverse) override {
    DeviceScope scope(dev_);
    require_gpu(dev_, grid, "centered DFT");
    if (grid.size() != dims.voxels())
      throw std::invalid_argument("gpu centered DFT: the grid's size is not its dims'");
    const std::string what = "the centered DFT of " + dims_string(dims);
    require_free(double(dims.voxels()) * sizeof(float2), what);
    DeviceBuffer<float2> work(dims.voxels(), what);
    centered_dft_window(dptr(grid), work.get(), dims, dims, dptr(grid), inverse, stream_of(dev_));
    CUDA_CHECK(cudaStreamSynchronize(stream_of(dev_)));  // work goes at scope end
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<FftKernels> make_gpu_fft(Device& dev) { return std::make_unique<GpuFft>(dev); }

}  // namespace fhd::gpu
