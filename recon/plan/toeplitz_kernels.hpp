#pragma once
// The Toeplitz embedding on a device: a trajectory's normal operator
// T = F^H W F from Q on the doubled grid (W the Q's weights, |Phi|^2), its
// circulant preconditioner, and the circulant's spectrum (--lambda auto's
// model). T is what makes CG cheap: one FFT pair on the doubled grid per apply
// instead of a gather over every sample. CPU: recon/plan/toeplitz.cpp (FFTW);
// GPU: cuda/plan/toeplitz.cu (cuFFT).
#include <memory>
#include <vector>

#include "recon/ops/linop.hpp"

namespace fhd {

// A normal operator T that also applies SENSE's normal with the coils batched:
//   y = sum_c conj(S_c) . T (S_c . x)
// (maps S_c on T's device, T's grid's voxels each), the same as the per-coil
// sum but with the coils' FFT pairs in batched transforms (issue 25). The
// GPU's T implements it; recon/coils/sense.cpp falls back to the per-coil sum
// for a T that does not.
class CoilBatchedNormal {
 public:
  virtual ~CoilBatchedNormal() = default;
  virtual void apply_coils(const DeviceVector& x, const std::vector<std::shared_ptr<DeviceVector>>& maps,
                           DeviceVector& y) = 0;
  // Makes what apply_coils for `coils` coils needs (the batched FFT plans and
  // their buffer) now, not at the first apply: a solver's first iteration
  // then costs what the others do.
  virtual void prepare_coils(int coils) = 0;
};

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
