#pragma once
// A circulant preconditioner for CG on the Toeplitz normal equations
// (T + lambda R^H R) x = FhD (docs/accuracy.md, "Preconditioned CG").
//
// T = FhF is a multilevel Toeplitz matrix whose lags are Q on the doubled grid.
// T. Chan's optimal circulant approximation (the circulant nearest to T in the
// Frobenius norm) has first column c[l] = sum over the 2^d wraps of
//   t[l'] * prod_axes (1 - |l'_a| / N_a),   l' = l or l - N per axis,
// i.e. Q windowed by a triangle and folded onto the N grid. Its eigenvalues
// FFT_N(c) are the sampling density smoothed by a Fejer kernel: the
// preconditioner is a density compensation applied in image space. The column
// is further windowed by a triangle of N/4 lags (density smoothed over about 4
// cells: undersampled data need it, docs/accuracy.md). R^H R adds
// the periodic Laplacian's eigenvalues sum_a (2 - 2 cos(2 pi f_a / N_a)).
// M = C^-1 is symmetric positive definite (eigenvalues floored at a fraction of
// the mean), so preconditioned CG converges to the same solution.
#include <memory>
#include <vector>

#include "recon/device/device.hpp"
#include "recon/plan/toeplitz.hpp"

namespace fhd {

// Eigenvalues (FFT order: index f per axis is frequency f mod N) of the
// (smoothed) T. Chan circulant of T plus lambda_abs times the periodic Laplacian.
// smooth > 0 also windows the column by a triangle of N / smooth lags per axis:
// the eigenvalues become the density smoothed over about `smooth` cells. On
// undersampled trajectories the 1-cell density of T. Chan's circulant is mostly
// empty cells between spokes, and inverting it amplified the aliasing: PCG's
// early iterates fell below plain CG's (docs/accuracy.md). 0 = T. Chan's own.
constexpr double kPrecondSmoothCells = 4.0;
std::vector<double> circulant_eigenvalues(const std::vector<cfloat>& q, const ImageGrid& grid, double lambda_abs,
                                          double smooth = kPrecondSmoothCells);

// Eigenvalues (FFT order) of R^H R, the periodic first-difference Laplacian:
// sum over axes of length > 1 of 2 - 2 cos(2 pi f_a / N_a).
std::vector<double> laplacian_eigenvalues(const ImageGrid& grid);

// The least roughness weight of the l2 CG's preconditioner on undersampled
// data, relative to Q(0) (as --lambda is): M ~ (T + max(lambda, kPrecondDamping
// Q(0)) R^H R)^-1 (recon/pipeline/pipeline.cpp, preconditioner_weight). A weight above
// the problem's lambda damps what the preconditioner does to the high
// frequencies, which radial data sample sparsely, between spokes; the solution
// is unchanged (M stays symmetric positive definite) but CG gets there along
// smoother iterates. H100, lambda 0.03: PCG at 30 iterations 26.03 dB against
// 25.98 undamped at 128^3, 21.77 against 21.76 at 64^3; weights of 10x to 100x
// lambda measured alike, 3x and below less (docs/accuracy.md). ADMM's inner
// solves keep their own rho: there the weight is the problem's.
constexpr double kPrecondDamping = 1.0;

// 1 / max(eig, floor * mean(eig)): the preconditioner's eigenvalues.
constexpr double kPrecondFloor = 1e-3;
std::vector<float> inverse_eigenvalues(const std::vector<double>& eig, double floor = kPrecondFloor);

// The CPU's circulant: y = IFFT(eig . FFT(x)).
class HostCirculant {
 public:
  HostCirculant(const std::vector<float>& eig, const ImageGrid& grid);
  void apply(const cfloat* x, cfloat* y);  // not re-entrant (one buffer); x may equal y

 private:
  ImageGrid grid_;
  std::vector<float> eig_;  // eigenvalues / voxels
  std::vector<cfloat> buffer_;
  FftwPlan forward_, backward_;
};

}  // namespace fhd
