// Complex white Gaussian noise, reproducible across standard libraries
// (phantom/random.hpp).
#include <cstdint>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "phantom/phantom.hpp"
#include "phantom/random.hpp"

namespace fhd {
namespace {

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
  std::mt19937_64 rng(seed);
  for (auto& d : data) d = std::complex<float>(std::complex<double>(d) + complex_normal(rng, sigma));
}

}  // namespace fhd
