#include "recon/nufft/nufft_kernels.hpp"

#include <stdexcept>
#include <string>

namespace fhd {

void NufftPlan::type1_batch(const DeviceVector& c, DeviceVector& f, int n) {
  if (n < 1 || c.size() % std::size_t(n) || f.size() % std::size_t(n))
    throw std::invalid_argument("nufft type1_batch: " + std::to_string(c.size()) + " values and " +
                                std::to_string(f.size()) + " modes for " + std::to_string(n) + " transforms");
  const std::size_t m = c.size() / std::size_t(n), v = f.size() / std::size_t(n);
  for (int t = 0; t < n; ++t) type1(*c.view(t * m, m), *f.view(t * v, v));
}

}  // namespace fhd
