#include "recon/coils/sense.hpp"

#include <string>

#include "core/error.hpp"
#include "recon/solvers/tv.hpp"

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

std::vector<VecPtr> upload_maps(Plan& plan, const CoilData& maps) {
  check_maps(maps, plan.grid());
  std::vector<VecPtr> out;
  for (const std::vector<cfloat>& m : maps) out.push_back(plan.backend().vec().upload(m));
  return out;
}

SenseNormal::SenseNormal(Plan& plan, const CoilData& maps, double lambda)
    : SenseNormal(plan, upload_maps(plan, maps), lambda) {}

SenseNormal::SenseNormal(Plan& plan, std::vector<VecPtr> maps, double lambda)
    : plan_(plan), maps_(std::move(maps)), lambda_(lambda) {
  VectorOps& v = plan.backend().vec();
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
  return plan.backend().vec().download(*sense_adjoint(plan, upload_maps(plan, maps), data));
}

VecPtr sense_adjoint(Plan& plan, const std::vector<VecPtr>& maps, const std::vector<const std::vector<cfloat>*>& data) {
  if (data.size() != maps.size())
    throw InputError("sense", "coils", std::to_string(data.size()),
                     "must equal the number of coil maps, " + std::to_string(maps.size()));
  VectorOps& v = plan.backend().vec();
  VecPtr sum;
  for (std::size_t c = 0; c < maps.size(); ++c) {
    VecPtr f = plan.fhd_of_mu(*plan.mu(*data[c]));
    v.multiply(*maps[c], *f, *f, true);  // elementwise: in place is safe on every backend
    if (c == 0)
      sum = std::move(f);
    else
      v.axpy(1.0, *f, *sum);
  }
  return sum;
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
