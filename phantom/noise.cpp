// Complex white Gaussian noise, reproducible across standard libraries:
// std::mt19937_64 is fully specified by the standard, std::normal_distribution
// is not, so the normals come from our own Box-Muller transform.
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "phantom/phantom.hpp"

namespace fhd {
namespace {

// Uniform in (0, 1]: the top 53 bits, shifted off zero so log() stays finite.
double uniform_open0(std::mt19937_64& rng) {
  return (double(rng() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
}

double rms_magnitude(const std::vector<std::complex<float>>& data) {
  double sum = 0;
  for (const auto& d : data) sum += std::norm(std::complex<double>(d));
  return std::sqrt(sum / double(data.size()));
}

}  // namespace

void add_noise(std::vector<std::complex<float>>& data, double rel_sigma, std::uint64_t seed) {
  if (!(rel_sigma >= 0) || !std::isfinite(rel_sigma)) {
    std::ostringstream msg;
    msg << "noise = " << rel_sigma << ": must be a finite value >= 0 (sigma relative to RMS |D|)";
    throw std::invalid_argument(msg.str());
  }
  if (rel_sigma == 0 || data.empty()) return;
  const double sigma = rel_sigma * rms_magnitude(data);
  const double two_pi = 6.283185307179586476925;
  std::mt19937_64 rng(seed);
  for (auto& d : data) {
    // One Box-Muller pair per sample: radius and angle give real and imag parts.
    double r = sigma * std::sqrt(-2.0 * std::log(uniform_open0(rng)));
    double a = two_pi * uniform_open0(rng);
    d = std::complex<float>(std::complex<double>(d) + std::polar(r, a));
  }
}

}  // namespace fhd
