#include "recon/coils/coil_linalg.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <numeric>
#include <stdexcept>

#ifdef FHD_HAVE_CBLAS
#include <cblas.h>
// LAPACK's complex Hermitian eigensolver (divide and conquer), shipped inside
// Debian's OpenBLAS.
extern "C" void zheevd_(const char* jobz, const char* uplo, const int* n, std::complex<double>* a, const int* lda,
                        double* w, std::complex<double>* work, const int* lwork, double* rwork, const int* lrwork,
                        int* iwork, const int* liwork, int* info);
#endif

namespace fhd {

double power_iteration(const CMatrix& a, std::vector<cdouble>& v, int iters, double tol) {
  const int n = a.rows;
  int start = 0;
  for (int i = 1; i < n; ++i)
    if (a(i, i).real() > a(start, start).real()) start = i;
  v.resize(n);
  for (int i = 0; i < n; ++i) v[i] = a(i, start);
  std::vector<cdouble> next(n);
  double lambda = 0;
  for (int it = 0; it < iters; ++it) {
    double norm = 0;
    for (const cdouble& x : v) norm += std::norm(x);
    if (norm == 0) return 0;
    for (cdouble& x : v) x /= std::sqrt(norm);
    for (int i = 0; i < n; ++i) {
      cdouble s = 0;
      for (int j = 0; j < n; ++j) s += a(i, j) * v[j];
      next[i] = s;
    }
    lambda = 0;
    for (int i = 0; i < n; ++i) lambda += (std::conj(v[i]) * next[i]).real();
    double residual = 0;  // ||A v - lambda v||^2
    for (int i = 0; i < n; ++i) residual += std::norm(next[i] - lambda * v[i]);
    std::swap(v, next);
    if (residual <= tol * tol * lambda * lambda) break;
  }
  double norm = 0;
  for (const cdouble& x : v) norm += std::norm(x);
  if (norm > 0)
    for (cdouble& x : v) x /= std::sqrt(norm);
  return lambda;
}

CMatrix CMatrix::identity(int n) {
  CMatrix m(n, n);
  for (int i = 0; i < n; ++i) m(i, i) = 1.0;
  return m;
}

CMatrix row_gram(const std::vector<std::vector<cfloat>>& rows) {
  const int n = int(rows.size());
  const std::int64_t m = rows.empty() ? 0 : std::int64_t(rows[0].size());
  CMatrix g(n, n);
#pragma omp parallel
  {
    std::vector<cdouble> part(std::size_t(n) * n), col(n);
#pragma omp for schedule(static) nowait
    for (std::int64_t k = 0; k < m; ++k) {
      for (int i = 0; i < n; ++i) col[i] = cdouble(rows[i][k]);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j <= i; ++j) part[std::size_t(i) * n + j] += col[i] * std::conj(col[j]);
    }
#pragma omp critical
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) g(i, j) += part[std::size_t(i) * n + j];
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) g(j, i) = std::conj(g(i, j));
  return g;
}

CMatrix multiply(const CMatrix& a, const CMatrix& b) {
  if (a.cols != b.rows) throw std::invalid_argument("multiply: inner sizes differ");
  CMatrix c(a.rows, b.cols);
#ifdef FHD_HAVE_CBLAS
  // ESPIRiT's projector W W^H is (C k^3)^2 = 1728^2 at 8 coils: BLAS, not three loops.
  const cdouble one = 1.0, zero = 0.0;
  if (a.rows && b.cols && a.cols)
    cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, a.rows, b.cols, a.cols, &one, a.v.data(), a.cols,
                b.v.data(), b.cols, &zero, c.v.data(), c.cols);
#else
  for (int i = 0; i < a.rows; ++i)
    for (int k = 0; k < a.cols; ++k) {
      const cdouble aik = a(i, k);
      for (int j = 0; j < b.cols; ++j) c(i, j) += aik * b(k, j);
    }
#endif
  return c;
}

CMatrix adjoint(const CMatrix& a) {
  CMatrix t(a.cols, a.rows);
  for (int i = 0; i < a.rows; ++i)
    for (int j = 0; j < a.cols; ++j) t(j, i) = std::conj(a(i, j));
  return t;
}

CMatrix cholesky(const CMatrix& a) {
  const int n = a.rows;
  CMatrix l(n, n);
  double largest = 0;
  for (int j = 0; j < n; ++j) largest = std::max(largest, a(j, j).real());
  for (int j = 0; j < n; ++j) {
    double d = a(j, j).real();
    for (int k = 0; k < j; ++k) d -= std::norm(l(j, k));
    // A pivot at rounding level means a (numerically) dependent row.
    if (!(d > 1e-12 * largest) || !std::isfinite(d))
      throw std::domain_error("cholesky: matrix is not positive definite (pivot " + std::to_string(j) + ")");
    l(j, j) = std::sqrt(d);
    for (int i = j + 1; i < n; ++i) {
      cdouble s = a(i, j);
      for (int k = 0; k < j; ++k) s -= l(i, k) * std::conj(l(j, k));
      l(i, j) = s / l(j, j).real();
    }
  }
  return l;
}

CMatrix lower_inverse(const CMatrix& l) {
  const int n = l.rows;
  CMatrix inv(n, n);
  for (int j = 0; j < n; ++j) {  // column j of the inverse: forward substitution on e_j
    inv(j, j) = 1.0 / l(j, j);
    for (int i = j + 1; i < n; ++i) {
      cdouble s = 0;
      for (int k = j; k < i; ++k) s += l(i, k) * inv(k, j);
      inv(i, j) = -s / l(i, i);
    }
  }
  return inv;
}

namespace {

double off_norm2(const CMatrix& a) {
  double s = 0;
  for (int i = 0; i < a.rows; ++i)
    for (int j = 0; j < a.cols; ++j)
      if (i != j) s += std::norm(a(i, j));
  return s;
}

// Zeroes a(p,q) by V = P R, P = diag(1, e^{-i phi}) making the 2x2 block real,
// R the real Jacobi rotation; A <- V^H A V, E <- E V.
void rotate(CMatrix& a, CMatrix& e, int p, int q) {
  const cdouble apq = a(p, q);
  const double b = std::abs(apq);
  if (b == 0) return;
  const cdouble ph = std::conj(apq) / b;  // e^{-i phi}
  const double theta = 0.5 * std::atan2(2 * b, a(q, q).real() - a(p, p).real());
  const double c = std::cos(theta), s = std::sin(theta);
  const cdouble vpp = c, vpq = s, vqp = -s * ph, vqq = c * ph;
  const int n = a.rows;
  for (int k = 0; k < n; ++k) {
    const cdouble akp = a(k, p), akq = a(k, q);
    a(k, p) = akp * vpp + akq * vqp;
    a(k, q) = akp * vpq + akq * vqq;
    const cdouble ekp = e(k, p), ekq = e(k, q);
    e(k, p) = ekp * vpp + ekq * vqp;
    e(k, q) = ekp * vpq + ekq * vqq;
  }
  for (int k = 0; k < n; ++k) {
    const cdouble apk = a(p, k), aqk = a(q, k);
    a(p, k) = std::conj(vpp) * apk + std::conj(vqp) * aqk;
    a(q, k) = std::conj(vpq) * apk + std::conj(vqq) * aqk;
  }
  a(p, q) = a(q, p) = 0;
}

Eigen sorted(std::vector<double> values, const CMatrix& vectors) {
  const int n = int(values.size());
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return values[i] > values[j]; });
  Eigen out{std::vector<double>(n), CMatrix(vectors.rows, n)};
  for (int j = 0; j < n; ++j) {
    out.values[j] = values[order[j]];
    for (int i = 0; i < vectors.rows; ++i) out.vectors(i, j) = vectors(i, order[j]);
  }
  return out;
}

}  // namespace

Eigen hermitian_eigen_jacobi(const CMatrix& m) {
  if (m.rows != m.cols) throw std::invalid_argument("hermitian_eigen: matrix is not square");
  CMatrix a = m, e = CMatrix::identity(m.rows);
  double total = 0;
  for (const cdouble& x : a.v) total += std::norm(x);
  for (int sweep = 0; sweep < 60 && off_norm2(a) > 1e-30 * total; ++sweep)
    for (int p = 0; p < a.rows; ++p)
      for (int q = p + 1; q < a.rows; ++q) rotate(a, e, p, q);
  std::vector<double> values(a.rows);
  for (int i = 0; i < a.rows; ++i) values[i] = a(i, i).real();
  return sorted(values, e);
}

Eigen hermitian_eigen(const CMatrix& m) {
#ifdef FHD_HAVE_CBLAS
  if (m.rows != m.cols) throw std::invalid_argument("hermitian_eigen: matrix is not square");
  const int n = m.rows;
  // LAPACK is column-major: row-major conj(A) read column-major is A^H = A.
  std::vector<cdouble> a(m.v.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::conj(m.v[i]);
  // Divide and conquer: at ESPIRiT's 1728 x 1728 (8 coils, kernel 6^3) the QR
  // iteration of zheev spent most of the maps' time accumulating eigenvectors.
  std::vector<double> w(n);
  int lwork = -1, lrwork = -1, liwork = -1, info = 0, iquery = 0;
  cdouble query;
  double rquery = 0;
  zheevd_("V", "L", &n, a.data(), &n, w.data(), &query, &lwork, &rquery, &lrwork, &iquery, &liwork, &info);
  // Room past the queried size for a blocked back-transformation (zunmtr):
  // with only the minimum it runs unblocked, a fifth of ESPIRiT's maps' time.
  lwork = std::max(1, int(query.real())) + 64 * n;
  lrwork = std::max(1, int(rquery));
  liwork = std::max(1, iquery);
  std::vector<cdouble> work(lwork);
  std::vector<double> rwork(lrwork);
  std::vector<int> iwork(liwork);
  zheevd_("V", "L", &n, a.data(), &n, w.data(), work.data(), &lwork, rwork.data(), &lrwork, iwork.data(), &liwork,
          &info);
  if (info != 0) throw std::runtime_error("zheevd failed: info = " + std::to_string(info));
  CMatrix vec(n, n);  // eigenvector j is a[j*n .. j*n+n) (column-major)
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) vec(i, j) = a[std::size_t(j) * n + i];
  return sorted(w, vec);
#else
  return hermitian_eigen_jacobi(m);
#endif
}

Eigen hermitian_eigen_top(const CMatrix& m, double ratio) {
  if (!(ratio > 0)) throw std::invalid_argument("hermitian_eigen_top: ratio must be positive");
  // All pairs, then cut: LAPACK's partial solvers (zheevr or zheevx for a
  // range) fall back to inverse iteration, which took 45 s on ESPIRiT's
  // 1728^2 (its noise eigenvalues cluster); divide and conquer takes seconds.
  Eigen e = hermitian_eigen(m);
  int keep = 0;
  while (keep < int(e.values.size()) && e.values[keep] >= ratio * e.values[0]) ++keep;
  CMatrix kept(e.vectors.rows, keep);
  for (int i = 0; i < kept.rows; ++i)
    for (int j = 0; j < keep; ++j) kept(i, j) = e.vectors(i, j);
  e.values.resize(keep);
  e.vectors = std::move(kept);
  return e;
}

}  // namespace fhd
