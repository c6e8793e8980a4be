#pragma once
// The circulant preconditioner on the device (cuda/plan/precond.cu), after
// recon/plan/precond.hpp's host reference.
#include <vector>

#include "cuda/device/gpu_internal.hpp"
#include "recon/ops/linop.hpp"

namespace fhd::gpu {

// y = IFFT(eig . FFT(x)) on `grid` (cuFFT at N, not at the doubled grid).
OpPtr make_circulant_operator(Device& dev, const std::vector<float>& eig, const ImageGrid& grid);
// The circulant preconditioner of (T + lambda D^H D) made on the device from Q
// (count values on grid.doubled()): recon/plan/precond.hpp's fold, FFT and floor.
OpPtr make_circulant_preconditioner(Device& dev, const float2* q, std::size_t count, const ImageGrid& grid,
                                    double lambda);
// The eigenvalues (FFT order) of T's smoothed circulant, without lambda, on the
// host: recon/plan/precond.hpp's circulant_eigenvalues(q, grid, 0) from a device Q.
std::vector<double> circulant_spectrum(const float2* q, std::size_t count, const ImageGrid& grid, cudaStream_t s);

}  // namespace fhd::gpu
