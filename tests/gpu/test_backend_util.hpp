#pragma once
// Helpers of the GPU device tests: random problems, error norms, the skip, and
// the host-vector calls the tests compare devices by (upload, run the device's
// kernels, download).
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/device/gpu_device.hpp"
#include "recon/gather/gather_kernels.hpp"
#include "recon/ops/diff.hpp"
#include "recon/ops/linop.hpp"
#include "recon/plan/toeplitz_kernels.hpp"
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

// FhD = sum_m mu_m exp(+i 2 pi k_m . x_n) by the device's exact gather
// (GatherKernels::adjoint), from and to host vectors.
inline std::vector<cfloat> gather_fhd(Device& dev, const Points& k, const std::vector<cfloat>& mu, const ImageGrid& g,
                                      const FhdOptions& opt) {
  VecPtr m = dev.upload(mu), out = dev.zeros(g.voxels());
  dev.kernels<GatherKernels>().adjoint(k, *m, g, opt, *out);
  return dev.download(*out);
}

// Q on g.doubled() by the device's exact gather (w empty: weights 1), on the host.
inline std::vector<cfloat> gather_q(Device& dev, const Points& k, const std::vector<float>& w, const ImageGrid& g,
                                    const FhdOptions& opt) {
  return dev.download(*dev.kernels<GatherKernels>().q(k, w, g, opt));
}

// T + lambda D^H D from a host Q (the l2 system CG solves); T alone for lambda 0.
inline OpPtr normal_of(Device& dev, const std::vector<cfloat>& q, const ImageGrid& g, double lambda) {
  OpPtr t = dev.kernels<ToeplitzKernels>().normal(*dev.upload(q), g);
  return lambda == 0.0 ? t : sum({t, scale(lambda, laplacian(dev, g))});
}

}  // namespace fhd::gpu_test
