#pragma once
// An orthonormal wavelet transform as an operator: Daubechies' db4 (8 taps,
// 4 vanishing moments) with periodic boundaries, separable over the axes of
// length > 1, decomposed as Mallat's pyramid (each level transforms the
// previous level's low-pass block along every axis). Periodic boundaries keep
// it square and orthonormal, W^H W = I, so the l1-wavelet prior's prox is
// W^H soft(W v) exactly and ADMM's x-step is A^H A + rho I.
// CPU: here (OpenMP over lines); GPU: cuda/ops/wavelet.cu.
#include <memory>

#include "recon/ops/linop.hpp"

namespace fhd {

class WaveletKernels {
 public:
  virtual ~WaveletKernels() = default;
  // c = W x and x = W^H c on `grid` with `levels` levels (x and c distinct).
  virtual void analysis(const DeviceVector& x, DeviceVector& c, const ImageGrid& grid, int levels) = 0;
  virtual void synthesis(const DeviceVector& c, DeviceVector& x, const ImageGrid& grid, int levels) = 0;
};

// The most levels (at most kMaxWaveletLevels) for which every axis of length
// > 1 halves evenly and keeps at least the filter's 8 samples before its last
// halving; 0 (the identity) when none does.
constexpr int kMaxWaveletLevels = 4;
int wavelet_levels(const ImageGrid& grid);

// W on `grid`: image -> coefficients of the same size; levels 0 = wavelet_levels(grid).
OpPtr wavelet_op(Device& dev, const ImageGrid& grid, int levels = 0);

// The host transforms (the CPU's kernels, and the reference the GPU's follow).
void wavelet_analysis_host(const cfloat* x, cfloat* c, const ImageGrid& grid, int levels);
void wavelet_synthesis_host(const cfloat* c, cfloat* x, const ImageGrid& grid, int levels);
std::unique_ptr<WaveletKernels> make_cpu_wavelet(Device& dev);

}  // namespace fhd
