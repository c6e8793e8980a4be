// The db4 wavelet on the GPU (recon/ops/wavelet.hpp's WaveletKernels): the
// host's per-element pass (recon/ops/wavelet_pass.hpp), one kernel per pass,
// ping-ponging between the output and a scratch grid.
#include <algorithm>
#include <vector>

#include "cuda/device/gpu_internal.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "recon/ops/wavelet.hpp"
#include "recon/ops/wavelet_pass.hpp"

namespace fhd::gpu {
namespace {

constexpr unsigned kThreads = 256;

__global__ void wavelet_pass_kernel(const float2* __restrict__ in, float2* __restrict__ out, WaveletPass p,
                                    std::size_t n) {
  GRID_STRIDE(v, n) {
    float re, im;
    wavelet_value(reinterpret_cast<const float*>(in), p, v, re, im);
    out[v] = make_float2(re, im);
  }
}

class GpuWavelet : public WaveletKernels {
 public:
  explicit GpuWavelet(Device& dev) : dev_(dev) {}
  void analysis(const DeviceVector& x, DeviceVector& c, const ImageGrid& grid, int levels) override {
    run(x, c, grid, levels, false);
  }
  void synthesis(const DeviceVector& c, DeviceVector& x, const ImageGrid& grid, int levels) override {
    run(c, x, grid, levels, true);
  }

 private:
  void run(const DeviceVector& src, DeviceVector& dst, const ImageGrid& grid, int levels, bool inverse) {
    DeviceScope scope(dev_);
    require_gpu(dev_, src, "wavelet");
    require_gpu(dev_, dst, "wavelet");
    const std::size_t n = grid.voxels();
    if (src.size() != n || dst.size() != n) throw std::invalid_argument("gpu wavelet: vector sizes differ from the grid's");
    const cudaStream_t s = stream_of(dev_);
    const std::vector<WaveletPass> ps = wavelet_passes(grid, levels, inverse);
    if (ps.empty()) {
      if (src.data() != dst.data())
        CUDA_CHECK(cudaMemcpyAsync(dptr(dst), dptr(src), n * sizeof(float2), cudaMemcpyDeviceToDevice, s));
      return;
    }
    if (scratch_.size() != n) scratch_ = DeviceBuffer<float2>(n, "the wavelet's scratch grid");
    // With an odd number of passes the first writes dst; else the scratch.
    float2* bufs[2] = {ps.size() % 2 ? dptr(dst) : scratch_.get(), ps.size() % 2 ? scratch_.get() : dptr(dst)};
    const float2* in = dptr(src);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      wavelet_pass_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(in, bufs[i % 2], ps[i], n);
      CUDA_CHECK_LAUNCH();
      in = bufs[i % 2];
    }
  }

  Device& dev_;
  DeviceBuffer<float2> scratch_;
};

}  // namespace

std::unique_ptr<WaveletKernels> make_gpu_wavelet(Device& dev) { return std::make_unique<GpuWavelet>(dev); }

}  // namespace fhd::gpu
