#pragma once
// Helpers of the GPU backend tests: random problems, error norms, the skip.
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/gpu_backend.hpp"
#include "recon/types.hpp"

namespace fhd::gpu_test {

// Leaves the test case (skipped) when no GPU is usable; says why.
#define FHD_NEED_GPU()                                          \
  do {                                                          \
    std::string why_;                                           \
    if (!::fhd::gpu_usable(&why_)) FHD_SKIP("no GPU: " + why_); \
  } while (0)

// Uniform random k in [-N/2, N/2) per axis (kz = 0 for a 2D grid).
inline Trajectory random_trajectory(std::size_t m, const ImageGrid& g, unsigned seed) {
  std::mt19937 rng(seed);
  auto band = [](int n) { return std::uniform_real_distribution<float>(-0.5f * n, 0.5f * n); };
  auto dx = band(g.nx), dy = band(g.ny), dz = band(g.nz);
  Trajectory t;
  t.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    t.kx[i] = dx(rng);
    t.ky[i] = dy(rng);
    t.kz[i] = g.nz > 1 ? dz(rng) : 0.0f;
  }
  return t;
}

inline std::vector<cfloat> random_complex(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<cfloat> v(n);
  for (auto& x : v) x = {d(rng), d(rng)};
  return v;
}

inline std::vector<float> random_weights(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(0.5f, 1.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// ||a - ref|| / ||ref|| in double; NaN anywhere gives NaN (fails every `<`).
template <class A, class B>
double rel_l2(const std::vector<A>& a, const std::vector<B>& ref) {
  if (a.size() != ref.size()) return HUGE_VAL;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(cdouble(a[i]) - cdouble(ref[i]));
    den += std::norm(cdouble(ref[i]));
  }
  return std::sqrt(num / den);
}

inline std::string grid_name(const ImageGrid& g) {
  return std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz);
}

}  // namespace fhd::gpu_test
