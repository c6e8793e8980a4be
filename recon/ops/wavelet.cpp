#include "recon/ops/wavelet.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "recon/device/cpu_device.hpp"
#include "recon/ops/wavelet_pass.hpp"

namespace fhd {
namespace {

// src -> dst pass by pass, ping-ponging between dst and a scratch grid, so
// that the last pass lands in dst.
void transform(const cfloat* src, cfloat* dst, const ImageGrid& grid, int levels, bool inverse) {
  const std::size_t n = grid.voxels();
  const std::vector<WaveletPass> ps = wavelet_passes(grid, levels, inverse);
  if (ps.empty()) {
    std::copy(src, src + n, dst);
    return;
  }
  std::vector<cfloat> scratch(n);
  // With an odd number of passes the first writes dst; else the scratch.
  cfloat* bufs[2] = {ps.size() % 2 ? dst : scratch.data(), ps.size() % 2 ? scratch.data() : dst};
  const cfloat* in = src;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    cfloat* out = bufs[i % 2];
    const WaveletPass& p = ps[i];
    const float* from = reinterpret_cast<const float*>(in);
#pragma omp parallel for
    for (std::ptrdiff_t v = 0; v < std::ptrdiff_t(n); ++v) {
      float re, im;
      wavelet_value(from, p, std::size_t(v), re, im);
      out[v] = cfloat(re, im);
    }
    in = out;
  }
}

class CpuWavelet : public WaveletKernels {
 public:
  void analysis(const DeviceVector& x, DeviceVector& c, const ImageGrid& grid, int levels) override {
    wavelet_analysis_host(host_data(x), host_data(c), grid, levels);
  }
  void synthesis(const DeviceVector& c, DeviceVector& x, const ImageGrid& grid, int levels) override {
    wavelet_synthesis_host(host_data(c), host_data(x), grid, levels);
  }
};

class WaveletOp : public LinOp {
 public:
  WaveletOp(Device& dev, const ImageGrid& grid, int levels)
      : LinOp(dev, image_shape(grid), image_shape(grid), "W"), grid_(grid), levels_(levels),
        k_(dev.kernels<WaveletKernels>()) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { k_.analysis(x, y, grid_, levels_); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { k_.synthesis(y, x, grid_, levels_); }
  OpPtr make_normal() override { return identity(device(), in()); }  // orthonormal

 private:
  ImageGrid grid_;
  int levels_;
  WaveletKernels& k_;
};

}  // namespace

int wavelet_levels(const ImageGrid& grid) {
  const int n[3] = {grid.nx, grid.ny, grid.nz};
  int levels = 0;
  for (int l = 1; l <= kMaxWaveletLevels; ++l) {
    for (int a = 0; a < 3; ++a)
      if (n[a] > 1 && (n[a] % (1 << l) != 0 || (n[a] >> (l - 1)) < 8)) return levels;
    levels = l;
  }
  return levels;
}

OpPtr wavelet_op(Device& dev, const ImageGrid& grid, int levels) {
  if (levels < 0 || levels > wavelet_levels(grid))
    throw std::invalid_argument("wavelet: " + std::to_string(levels) + " levels on " + dims_string(grid) +
                                ", at most " + std::to_string(wavelet_levels(grid)));
  return std::make_shared<WaveletOp>(dev, grid, levels == 0 ? wavelet_levels(grid) : levels);
}

void wavelet_analysis_host(const cfloat* x, cfloat* c, const ImageGrid& grid, int levels) {
  transform(x, c, grid, levels, false);
}

void wavelet_synthesis_host(const cfloat* c, cfloat* x, const ImageGrid& grid, int levels) {
  transform(c, x, grid, levels, true);
}

std::unique_ptr<WaveletKernels> make_cpu_wavelet(Device&) { return std::make_unique<CpuWavelet>(); }

}  // namespace fhd
