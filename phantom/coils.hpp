#pragma once
// Multi-coil synthesis with exact k-space (docs/coils.md). Each coil's
// sensitivity is a short sum of plane waves, s_c(x) = sum_j a_cj exp(i 2 pi g_j . x),
// so the coil's data are sum_j a_cj S(k - g_j) with S the phantom's analytic
// transform: no inverse crime. The plane waves are the truncated Fourier series
// of a Gaussian bump centred at the coil; the coils sit around the object
// (a circle in 2D, a Fibonacci sphere in 3D).
#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "phantom/phantom.hpp"

namespace fhd {

struct CoilSpec {
  int coils = 8;         // 1..1024
  int dims = 3;          // 2: coils on a circle in z = 0; 3: on a sphere
  double radius = 0.6;   // distance of the coil centres from the origin (FOV units)
  double width = 0.3;    // the bump's Gaussian sigma (FOV units)
  double period = 1.6;   // the series' period (FOV units, > 1: the bump's copies stay outside the FOV)
  int order = 2;         // keep the integer frequency vectors n with |n| <= order
  std::uint64_t seed = 1;  // each coil's constant phase
};

struct CoilArray {
  int dims = 3;
  std::vector<std::array<double, 3>> freq;              // g_j in cycles/FOV, shared by every coil
  std::vector<std::vector<std::complex<double>>> coef;  // a_cj, [coil][j]
  int coils() const { return int(coef.size()); }
  // s_c at a point (FOV units); for 2D, z is ignored.
  std::complex<double> sensitivity(int c, double x, double y, double z) const;
};

// Throws std::invalid_argument naming the field for coils outside 1..1024,
// dims not 2 or 3, or a non-positive width, period or order < 0.
// The maps are scaled so that their root-sum-of-squares is 1 at the origin.
CoilArray make_coil_array(const CoilSpec& spec);

// s_c at the voxel centres x_i = (i - N/2)/N, x fastest: [coil][voxel].
std::vector<std::vector<std::complex<float>>> coil_maps(const CoilArray& coils, int nx, int ny, int nz);

// D_cm = N * sum_j a_cj S(k_m - g_j) (the scaling of synthesize()): [coil][sample].
// Same grid checks as synthesize(); the coils' dims must match the phantom's.
std::vector<std::vector<std::complex<float>>> synthesize_coils(const Phantom& p, const CoilArray& coils,
                                                              const Trajectory& t, int nx, int ny, int nz);

// The loop both coil syntheses share (with and without off-resonance), after
// the grid checks: D_cm = N * sum_j a_cj signal(m, k_m - g_j), the signal of a
// sample shared by every coil, so one per plane wave. Throws
// std::invalid_argument where the coils' dims are not the phantom's.
template <class Signal>
std::vector<std::vector<std::complex<float>>> coil_samples(const Phantom& p, const CoilArray& coils,
                                                          const Trajectory& t, int nx, int ny, int nz,
                                                          Signal signal) {
  if (coils.dims != p.dims())
    throw std::invalid_argument("coil dims = " + std::to_string(coils.dims) + ": phantom " + p.name() + " is " +
                                std::to_string(p.dims()) + "D");
  const double scale = double(nx) * ny * nz;
  const int nc = coils.coils();
  const std::int64_t m = std::int64_t(t.size());
  std::vector<std::vector<std::complex<float>>> data(nc, std::vector<std::complex<float>>(t.size()));
#pragma omp parallel
  {
    std::vector<std::complex<double>> acc(nc);
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (std::size_t j = 0; j < coils.freq.size(); ++j) {
        const auto& g = coils.freq[j];
        const std::complex<double> s = signal(std::size_t(i), t.kx[i] - g[0], t.ky[i] - g[1], t.kz[i] - g[2]);
        for (int c = 0; c < nc; ++c) acc[c] += coils.coef[c][j] * s;
      }
      for (int c = 0; c < nc; ++c) data[c][std::size_t(i)] = std::complex<float>(acc[c] * scale);
    }
  }
  return data;
}

// Correlated receiver noise n = sigma * A z, z a vector of complex normals
// (g1 + i g2 per coil, as add_noise), so E[n n^H] = 2 sigma^2 A A^H. A is
// random: per-coil gains and cross-talk, scaled so that A A^H (the normalized
// covariance) has mean diagonal 1. Correlations between coils are typically
// 0.1-0.4, as on real arrays.
struct NoiseModel {
  int coils = 0;
  std::vector<std::complex<double>> mix;  // A, row-major coils x coils
  std::vector<std::complex<double>> covariance() const;  // A A^H, row-major
};
NoiseModel make_noise_model(int coils, std::uint64_t seed);

// Adds sigma A z to every sample of every coil, sigma = rel_sigma * RMS of |D|
// over all coils and samples (as add_noise for one coil). Returns sigma.
// rel_sigma < 0 or not finite, or data.size() != model.coils throws std::invalid_argument.
double add_coil_noise(std::vector<std::vector<std::complex<float>>>& data, const NoiseModel& model,
                      double rel_sigma, std::uint64_t seed);

// A noise-calibration acquisition: `samples` samples per coil of sigma A z alone.
std::vector<std::vector<std::complex<float>>> noise_scan(const NoiseModel& model, double sigma,
                                                         std::size_t samples, std::uint64_t seed);

}  // namespace fhd
