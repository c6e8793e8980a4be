#include "recon/solvers/regularizer.hpp"

#include "recon/ops/diff.hpp"
#include "recon/ops/wavelet.hpp"

namespace fhd {
namespace {

const std::vector<Regularizer>& table() {
  static const std::vector<Regularizer> t{
      {"tv", "TV", "isotropic total variation (ADMM)",
       [](Device& dev, const ImageGrid& g, double lambda) {
         return Term{finite_differences(dev, g), group_l1_prox(dev, g.voxels(), gradient_axes(g)), lambda};
       }},
      {"wavelet", "wavelet", "l1 of an orthonormal Daubechies wavelet, db4, ADMM",
       [](Device& dev, const ImageGrid& g, double lambda) { return Term{wavelet_op(dev, g), l1_prox(dev), lambda}; }},
  };
  return t;
}

}  // namespace

const Regularizer* find_regularizer(const std::string& name) {
  for (const Regularizer& r : table())
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> regularizer_names() {
  std::vector<std::string> names{"l2"};
  for (const Regularizer& r : table()) names.push_back(r.name);
  return names;
}

}  // namespace fhd
