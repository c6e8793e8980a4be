#include "recon/sense.hpp"

#include <string>

#include "core/error.hpp"
#include "recon/tv.hpp"

namespace fhd {
namespace {

void check_maps(const CoilData& maps, const ImageGrid& grid) {
  if (maps.empty()) throw InputError("sense", "coil maps", "0", "needs at least one coil");
  for (std::size_t c = 0; c < maps.size(); ++c)
    if (maps[c].size() != grid.voxels())
      throw InputError("sense", "coil map " + std::to_string(c) + " size", std::to_string(maps[c].size()),
                       "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
}

}  // namespace

SenseNormal::SenseNormal(Plan& plan, const CoilData& maps, double lambda) : plan_(plan), lambda_(lambda) {
  check_maps(maps, plan.grid());
  VectorOps& v = plan.backend().vec();
  for (const std::vector<cfloat>& m : maps) maps_.push_back(v.upload(m));
  const std::size_t n = plan.grid().voxels();
  t1_ = v.zeros(n);
  t2_ = v.zeros(n);
  if (lambda_ != 0.0) grad_ = v.zeros(std::size_t(gradient_axes(plan.grid())) * n);
}

void SenseNormal::apply(const BackendVector& x, BackendVector& y) {
  VectorOps& v = plan_.backend().vec();
  NormalOperator& t = plan_.normal(0.0);  // T = F^H F, made once by the plan
  for (std::size_t c = 0; c < maps_.size(); ++c) {
    v.multiply(*maps_[c], x, *t1_, false);
    t.apply(*t1_, *t2_);
    if (c == 0) {
      v.multiply(*maps_[c], *t2_, y, true);
    } else {
      v.multiply(*maps_[c], *t2_, *t1_, true);
      v.axpy(1.0, *t1_, y);
    }
  }
  if (lambda_ == 0.0) return;
  // R^H R x = D^H D x with D the first differences (as Plan::normal's roughness).
  Backend& be = plan_.backend();
  be.gradient(x, *grad_, plan_.grid());
  be.gradient_adjoint(*grad_, *t1_, plan_.grid());
  v.axpy(lambda_, *t1_, y);
}

std::vector<cfloat> sense_adjoint(Plan& plan, const CoilData& maps, const std::vector<const std::vector<cfloat>*>& data) {
  check_maps(maps, plan.grid());
  if (data.size() != maps.size())
    throw InputError("sense", "coils", std::to_string(data.size()),
                     "must equal the number of coil maps, " + std::to_string(maps.size()));
  std::vector<cfloat> out(plan.grid().voxels());
  for (std::size_t c = 0; c < maps.size(); ++c) {
    const std::vector<cfloat> f = plan.fhd(*data[c]);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += std::conj(maps[c][i]) * f[i];
  }
  return out;
}

CoilData sense_forward(Plan& plan, const CoilData& maps, const std::vector<cfloat>& image) {
  check_maps(maps, plan.grid());
  CoilData out;
  for (const std::vector<cfloat>& m : maps) {
    std::vector<cfloat> weighted(image.size());
    for (std::size_t i = 0; i < image.size() && i < m.size(); ++i) weighted[i] = m[i] * image[i];
    out.push_back(plan.forward(weighted));
  }
  return out;
}

}  // namespace fhd
