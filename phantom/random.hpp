#pragma once
// Normal deviates reproducible across standard libraries: std::mt19937_64 is
// fully specified by the standard, std::normal_distribution is not, so the
// normals come from our own Box-Muller transform.
#include <cmath>
#include <complex>
#include <random>

namespace fhd {

// Uniform in (0, 1]: the top 53 bits, shifted off zero so log() stays finite.
inline double uniform_open0(std::mt19937_64& rng) {
  return (double(rng() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

// sigma * (g1 + i g2), g1 and g2 independent standard normals (one Box-Muller
// pair: radius and angle give real and imaginary parts), so E|n|^2 = 2 sigma^2.
inline std::complex<double> complex_normal(std::mt19937_64& rng, double sigma = 1.0) {
  const double two_pi = 6.283185307179586476925;
  double r = sigma * std::sqrt(-2.0 * std::log(uniform_open0(rng)));
  double a = two_pi * uniform_open0(rng);
  return std::polar(r, a);
}

}  // namespace fhd
