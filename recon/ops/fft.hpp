#pragma once
// The centred DFT of an image grid as an operator (the Cartesian MRI model,
// and the gridding baselines' inverse transform):
//   y_k = s sum_n x_n exp(-i 2 pi (k - N/2)(n - N/2) / N) per axis,
// s = 1/sqrt(voxels) (unitary: the adjoint is the inverse). CPU: FFTW;
// GPU: cuFFT (cuda/ops/fft.cu).
#include <vector>

#include "recon/ops/linop.hpp"

namespace fhd {

class FftKernels {
 public:
  virtual ~FftKernels() = default;
  // In place on a grid of `dims` (DC at n/2 in and out), unnormalized:
  // x_j = sum_k X_k exp(sign i 2 pi (k - n/2)(j - n/2) / n), sign -1 forward, +1 inverse.
  virtual void centered(DeviceVector& grid, const ImageGrid& dims, bool inverse) = 0;
};

OpPtr fft_op(Device& dev, const ImageGrid& grid);

// The host's centred transform (the CPU kernel; gridding's inverse DFT on the host).
void centered_dft_host(std::vector<cfloat>& grid, const ImageGrid& dims, bool inverse);
std::unique_ptr<FftKernels> make_cpu_fft(Device& dev);

}  // namespace fhd
