#include "recon/precond.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "recon/toeplitz.hpp"

namespace fhd {
namespace {

const double kPi = 3.14159265358979323846;


// Per axis of length n (doubled length len = 2n, or 1): the folded index of
// doubled-grid index j (lag j - n) and its T. Chan weight 1 - |lag| / n.
struct Fold {
  int index;
  double weight;
};
Fold fold(int j, int len, int n, double smooth) {
  if (len == 1) return {0, 1.0};
  const int lag = j - n;
  double w = 1.0 - std::abs(double(lag)) / n;  // T. Chan's
  if (smooth > 0.0) w *= std::max(0.0, 1.0 - std::abs(double(lag)) / std::max(1.0, n / smooth));
  return {((lag % n) + n) % n, w};
}

}  // namespace

std::vector<double> circulant_eigenvalues(const std::vector<cfloat>& q, const ImageGrid& grid, double lambda_abs,
                                          double smooth) {
  const ImageGrid dbl = grid.doubled();
  if (q.size() != dbl.voxels()) throw std::invalid_argument("preconditioner: Q must have grid.doubled() points");
  std::vector<cdouble> c(grid.voxels());
  for (int jz = 0; jz < dbl.nz; ++jz) {
    const Fold fz = fold(jz, dbl.nz, grid.nz, smooth);
    for (int jy = 0; jy < dbl.ny; ++jy) {
      const Fold fy = fold(jy, dbl.ny, grid.ny, smooth);
      for (int jx = 0; jx < dbl.nx; ++jx) {
        const Fold fx = fold(jx, dbl.nx, grid.nx, smooth);
        const double w = fx.weight * fy.weight * fz.weight;
        if (w <= 0.0) continue;
        c[fx.index + grid.nx * (fy.index + std::size_t(grid.ny) * fz.index)] +=
            w * cdouble(q[jx + dbl.nx * (jy + std::size_t(dbl.ny) * jz)]);
      }
    }
  }
  // FFT in single precision (FftPlan) is enough for a preconditioner.
  std::vector<cfloat> cf(c.begin(), c.end());
  FftPlan(grid, cf.data(), false).execute();
  std::vector<double> eig(grid.voxels());
  const int n[3] = {grid.nx, grid.ny, grid.nz};
  for (int fz = 0; fz < grid.nz; ++fz)
    for (int fy = 0; fy < grid.ny; ++fy)
      for (int fx = 0; fx < grid.nx; ++fx) {
        const int f[3] = {fx, fy, fz};
        double lap = 0.0;
        for (int a = 0; a < 3; ++a)
          if (n[a] > 1) lap += 2.0 - 2.0 * std::cos(2.0 * kPi * f[a] / n[a]);
        const std::size_t i = fx + grid.nx * (fy + std::size_t(grid.ny) * fz);
        eig[i] = double(cf[i].real()) + lambda_abs * lap;  // real: c is Hermitian
      }
  return eig;
}

std::vector<float> inverse_eigenvalues(const std::vector<double>& eig, double floor) {
  double mean = 0.0;
  for (double e : eig) mean += e;
  mean /= double(eig.size());
  const double lo = floor * mean;
  std::vector<float> inv(eig.size());
  for (std::size_t i = 0; i < eig.size(); ++i) inv[i] = float(1.0 / std::max(eig[i], lo));
  return inv;
}

std::unique_ptr<NormalOperator> make_preconditioner(Backend& be, const std::vector<cfloat>& q, const ImageGrid& grid,
                                                    double lambda_abs) {
  return be.circulant(inverse_eigenvalues(circulant_eigenvalues(q, grid, lambda_abs)), grid);
}

HostCirculant::HostCirculant(const std::vector<float>& eig, const ImageGrid& grid)
    : grid_(grid),
      eig_(eig),
      buffer_(grid.voxels()),
      forward_(grid, buffer_.data(), false),
      backward_(grid, buffer_.data(), true) {
  if (eig.size() != grid.voxels()) throw std::invalid_argument("circulant: eigenvalues must have grid.voxels()");
  const float scale = float(1.0 / double(grid.voxels()));  // the inverse FFT's 1/N, folded in once
  for (float& e : eig_) e *= scale;
}

void HostCirculant::apply(const cfloat* x, cfloat* y) {
  std::copy_n(x, buffer_.size(), buffer_.begin());
  forward_.execute();
#pragma omp parallel for
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(buffer_.size()); ++i) buffer_[i] *= eig_[i];
  backward_.execute();
  std::copy(buffer_.begin(), buffer_.end(), y);
}

}  // namespace fhd
