#pragma once
// Small helpers for the CPU backend tests: random problems and error norms.
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "recon/ops/diff.hpp"
#include "recon/plan/plan.hpp"
#include "recon/problem/scan.hpp"
#include "test_util.hpp"

namespace fhd::test {

// The l2 system the pipeline's CG solves: T + lambda D^H D on the plan's grid.
inline OpPtr l2_system(Plan& plan, double lambda) {
  if (lambda == 0.0) return plan.toeplitz();
  return sum({plan.toeplitz(), scale(lambda, laplacian(plan.device(), plan.grid()))});
}

// sum conj(a) b in double.
template <class A, class B>
cdouble inner(const std::vector<A>& a, const std::vector<B>& b) {
  cdouble s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::conj(cdouble(a[i])) * cdouble(b[i]);
  return s;
}

template <class T>
std::vector<cfloat> to_float(const std::vector<T>& v) {
  return std::vector<cfloat>(v.begin(), v.end());
}

// Dense R: one row per first difference x[i + stride] - x[i] along each axis of
// length > 1, no wrap-around. Returns R^H R x in double.
inline std::vector<cdouble> dense_rhr(const std::vector<cfloat>& x, const ImageGrid& g) {
  const int n[3] = {g.nx, g.ny, g.nz};
  const std::size_t stride[3] = {1, std::size_t(g.nx), std::size_t(g.nx) * g.ny};
  std::vector<std::vector<double>> rows;
  for (int a = 0; a < 3; ++a)
    for (std::size_t i = 0; i < g.voxels(); ++i) {
      const int coord = int(i / stride[a]) % n[a];
      if (coord + 1 >= n[a]) continue;
      std::vector<double> row(g.voxels(), 0.0);
      row[i] = -1.0;
      row[i + stride[a]] = 1.0;
      rows.push_back(row);
    }
  std::vector<cdouble> out(g.voxels(), 0.0);
  for (const auto& row : rows) {
    cdouble rx = 0;
    for (std::size_t j = 0; j < row.size(); ++j) rx += row[j] * cdouble(x[j]);
    for (std::size_t j = 0; j < row.size(); ++j) out[j] += row[j] * rx;
  }
  return out;
}

}  // namespace fhd::test
