#pragma once
// The Toeplitz embedding on a device: a trajectory's normal operator
// T = F^H W F from Q on the doubled grid (W the Q's weights, |Phi|^2), its
// circulant preconditioner, and the circulant's spectrum (--lambda auto's
// model). T is what makes CG cheap: one FFT pair on the doubled grid per apply
// instead of a gather over every sample. CPU: recon/plan/toeplitz.cpp (FFTW);
// GPU: cuda/plan/toeplitz.cu (cuFFT).
#include <vector>

#include "recon/ops/linop.hpp"

namespace fhd {

class ToeplitzKernels {
 public:
  virtual ~ToeplitzKernels() = default;
  // T x = crop(IFFT(K . FFT(pad x))), K = FFT of Q (q: grid.doubled().voxels() values).
  virtual OpPtr normal(const DeviceVector& q, const ImageGrid& grid) = 0;
  // M ~ (T + lambda R^H R)^-1, the smoothed circulant of recon/plan/precond.hpp (lambda absolute).
  virtual OpPtr preconditioner(const DeviceVector& q, const ImageGrid& grid, double lambda) = 0;
  // The eigenvalues (FFT order, on the host) of T's smoothed circulant without lambda.
  virtual std::vector<double> spectrum(const DeviceVector& q, const ImageGrid& grid) = 0;
};

}  // namespace fhd
