#pragma once
// Helpers of the GPU backend tests: random problems, error norms, the skip.
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/device/gpu_device.hpp"
#include "recon/problem/scan.hpp"
#include "test_util.hpp"

namespace fhd::gpu_test {

using test::random_complex;
using test::random_trajectory;
using test::rel_l2;

// Leaves the test case (skipped) when no GPU is usable; says why.
#define FHD_NEED_GPU()                                          \
  do {                                                          \
    std::string why_;                                           \
    if (!::fhd::gpu_usable(&why_)) FHD_SKIP("no GPU: " + why_); \
  } while (0)

inline std::vector<float> random_weights(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(0.5f, 1.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

inline std::string grid_name(const ImageGrid& g) {
  return std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz);
}

}  // namespace fhd::gpu_test
