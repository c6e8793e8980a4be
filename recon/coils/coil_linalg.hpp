#pragma once
// Small dense complex linear algebra for coil processing (coils x coils
// matrices, ESPIRiT's calibration Gram matrix). Row-major, float64.
#include <vector>

#include "recon/problem/scan.hpp"

namespace fhd {

// A row-major rows x cols complex matrix.
struct CMatrix {
  int rows = 0, cols = 0;
  std::vector<cdouble> v;
  CMatrix() = default;
  CMatrix(int r, int c) : rows(r), cols(c), v(std::size_t(r) * c) {}
  cdouble& operator()(int i, int j) { return v[std::size_t(i) * cols + j]; }
  cdouble operator()(int i, int j) const { return v[std::size_t(i) * cols + j]; }
  static CMatrix identity(int n);
};

CMatrix multiply(const CMatrix& a, const CMatrix& b);
// G(i, j) = sum_k x_i[k] conj(x_j[k]) over rows x_i of equal length (the noise
// covariance's and coil compression's Gram matrix): one pass over the samples,
// OpenMP over them, a private G per thread (each sample read once for every pair).
CMatrix row_gram(const std::vector<std::vector<cfloat>>& rows);
CMatrix adjoint(const CMatrix& a);  // conjugate transpose

// Lower-triangular L with A = L L^H. Throws std::domain_error when A is not
// (numerically) Hermitian positive definite.
CMatrix cholesky(const CMatrix& a);
// The inverse of a lower-triangular matrix with a non-zero diagonal.
CMatrix lower_inverse(const CMatrix& l);

// The dominant eigenpair of a Hermitian positive semi-definite matrix by power
// iteration from its strongest column: at most `iters` steps, fewer once
// ||A v - lambda v|| <= tol lambda. Returns the Rayleigh quotient lambda (never
// above the largest eigenvalue); v becomes the unit vector.
double power_iteration(const CMatrix& a, std::vector<cdouble>& v, int iters, double tol);

// Eigen-decomposition of a Hermitian matrix, eigenvalues descending;
// vectors' column j belongs to values[j].
struct Eigen {
  std::vector<double> values;
  CMatrix vectors;
};
// Cyclic Jacobi rotations: any size, O(n^3) per sweep; best for n up to ~200.
Eigen hermitian_eigen_jacobi(const CMatrix& a);
// LAPACK's zheevd where the build has it (OpenBLAS), else Jacobi.
Eigen hermitian_eigen(const CMatrix& a);
// The eigenpairs of a positive semi-definite matrix whose values are at least
// `ratio` (> 0) times the largest, descending (ESPIRiT's signal subspace).
Eigen hermitian_eigen_top(const CMatrix& a, double ratio);

}  // namespace fhd
