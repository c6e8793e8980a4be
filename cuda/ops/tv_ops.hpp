#pragma once
// GPU pieces of issue 10's solvers (cuda/ops/tv_ops.cu): the circulant
// preconditioner and total variation's finite differences and shrinkage. They
// follow the host references in recon/plan/precond.hpp and recon/solvers/tv.hpp.
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "recon/device/device.hpp"

namespace fhd::gpu {

class GpuVector;

// y = IFFT(eig . FFT(x)) on `grid` (cuFFT at N, not at the doubled grid).
std::unique_ptr<NormalOperator> make_circulant_operator(const std::vector<float>& eig, const ImageGrid& grid,
                                                        cudaStream_t s);
// The circulant preconditioner of (T + lambda R^H R) made on the device from Q
// (count values on grid.doubled()): recon/plan/precond.hpp's fold, FFT and floor.
// The eigenvalues (FFT order) of T's smoothed circulant, without lambda, on the
// host: recon/plan/precond.hpp's circulant_eigenvalues(q, grid, 0) from a device Q.
std::vector<double> circulant_spectrum(const float2* q, std::size_t count, const ImageGrid& grid, cudaStream_t s);
std::unique_ptr<NormalOperator> make_circulant_preconditioner(const float2* q, std::size_t count, const ImageGrid& grid,
                                                              double lambda, cudaStream_t s);
void tv_gradient(const GpuVector& x, GpuVector& g, const ImageGrid& grid, cudaStream_t s);
void tv_gradient_adjoint(const GpuVector& g, GpuVector& x, const ImageGrid& grid, cudaStream_t s);
void tv_shrink(const GpuVector& g, GpuVector& z, GpuVector& u, const ImageGrid& grid, double t, cudaStream_t s);

}  // namespace fhd::gpu
