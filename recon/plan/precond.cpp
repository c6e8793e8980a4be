#include "recon/plan/precond.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "recon/plan/toeplitz.hpp"

namespace fhd {
namespace {

const double kPi = 3.14159265358979323846;


// T. Chan's weight 1 - |lag| / n of a lag, narrowed by the smoothing triangle.
double lag_weight(int lag, int n, double smooth) {
  double w = 1.0 - std::abs(double(lag)) / n;
  if (smooth > 0.0) w *= std::max(0.0, 1.0 - std::abs(double(lag)) / std::max(1.0, n / smooth));
  return w;
}

// Per axis of length n (doubled length len = 2n, or 1): the doubled-grid
// indices that fold onto circulant index c (lags c and c - n, j = lag + n)
// and their weights. Folding as a gather lets every output sum on its own thread.
struct Taps {
  int j[2];
  double w[2];
  int count;
};
std::vector<Taps> axis_taps(int len, int n, double smooth) {
  if (len == 1) return {Taps{{0, 0}, {1.0, 0.0}, 1}};
  std::vector<Taps> t(n);
  for (int c = 0; c < n; ++c) t[c] = Taps{{c + n, c}, {lag_weight(c, n, smooth), lag_weight(c - n, n, smooth)}, 2};
  return t;
}

}  // namespace

std::vector<double> circulant_eigenvalues(const std::vector<cfloat>& q, const ImageGrid& grid, double lambda_abs,
                                          double smooth) {
  const ImageGrid dbl = grid.doubled();
  if (q.size() != dbl.voxels()) throw std::invalid_argument("preconditioner: Q must have grid.doubled() points");
  const std::vector<Taps> tx = axis_taps(dbl.nx, grid.nx, smooth), ty = axis_taps(dbl.ny, grid.ny, smooth),
                          tz = axis_taps(dbl.nz, grid.nz, smooth);
  std::vector<cfloat> cf(grid.voxels());
#pragma omp parallel for collapse(2) schedule(static)
  for (int cz = 0; cz < grid.nz; ++cz)
    for (int cy = 0; cy < grid.ny; ++cy)
      for (int cx = 0; cx < grid.nx; ++cx) {
        const Taps &ax = tx[cx], &ay = ty[cy], &az = tz[cz];
        cdouble sum = 0.0;
        for (int a = 0; a < az.count; ++a)
          for (int b = 0; b < ay.count; ++b)
            for (int e = 0; e < ax.count; ++e) {
              const double w = ax.w[e] * ay.w[b] * az.w[a];
              if (w > 0.0) sum += w * cdouble(q[ax.j[e] + dbl.nx * (ay.j[b] + std::size_t(dbl.ny) * az.j[a])]);
            }
        cf[cx + grid.nx * (cy + std::size_t(grid.ny) * cz)] = cfloat(sum);
      }
  // FFT in single precision (FftwPlan) is enough for a preconditioner.
  FftwPlan(grid, cf.data(), false).execute();
  std::vector<double> eig = laplacian_eigenvalues(grid);
  for (std::size_t i = 0; i < eig.size(); ++i) eig[i] = double(cf[i].real()) + lambda_abs * eig[i];  // c is Hermitian
  return eig;
}

std::vector<double> laplacian_eigenvalues(const ImageGrid& grid) {
  const int n[3] = {grid.nx, grid.ny, grid.nz};
  std::vector<double> axis[3];
  for (int a = 0; a < 3; ++a) {
    axis[a].resize(std::size_t(n[a]));
    for (int f = 0; f < n[a]; ++f) axis[a][f] = n[a] > 1 ? 2.0 - 2.0 * std::cos(2.0 * kPi * f / n[a]) : 0.0;
  }
  std::vector<double> lap(grid.voxels());
  for (int z = 0; z < grid.nz; ++z)
    for (int y = 0; y < grid.ny; ++y)
      for (int x = 0; x < grid.nx; ++x)
        lap[x + grid.nx * (y + std::size_t(grid.ny) * z)] = axis[0][x] + axis[1][y] + axis[2][z];
  return lap;
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
