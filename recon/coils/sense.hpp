#pragma once
// SENSE (Pruessmann et al., MRM 42:952, 1999) on the plan seam: one image x
// seen by C coils with sensitivities S_c through one trajectory,
//   E x = { F S_c x }_c,   E^H y = sum_c conj(S_c) F^H y_c,
// solved by CG on the normal equations (E^H E + lambda R^H R) x = E^H y, where
// E^H E = sum_c S_c^H T S_c and T = F^H F is the plan's Toeplitz operator:
// one Q for all coils, one FFT pair per coil and iteration (docs/coils.md).
// Written against VectorOps and the plan's operators, so it runs on every
// backend and both operator kinds (exact, NUFFT).
#include <memory>
#include <vector>

#include "recon/solvers/cg.hpp"
#include "recon/coils/coil_noise.hpp"
#include "recon/plan/plan.hpp"

namespace fhd {

// The maps where the plan's backend computes, uploaded once for E^H y and
// every CG iteration. maps: C vectors of plan.grid().voxels() values each
// (InputError otherwise).
std::vector<VecPtr> upload_maps(Plan& plan, const CoilData& maps);

// The SENSE normal operator sum_c S_c^H T S_c + lambda R^H R (R: the first
// differences of the l2 regularizer; lambda absolute, as Plan::normal's).
class SenseNormal : public NormalOperator {
 public:
  SenseNormal(Plan& plan, const CoilData& maps, double lambda);
  SenseNormal(Plan& plan, std::vector<VecPtr> maps, double lambda);  // from upload_maps
  void apply(const BackendVector& x, BackendVector& y) override;
  std::size_t coils() const { return maps_.size(); }

 private:
  Plan& plan_;
  std::vector<VecPtr> maps_;  // where the backend computes
  double lambda_;
  VecPtr t1_, t2_, grad_;
};

// E^H y: sum_c conj(S_c) FhD(y_c), each coil's data through the plan. The
// resident form keeps FhD, the product and the sum where the backend computes:
// only each coil's samples cross to a GPU, no image comes back.
std::vector<cfloat> sense_adjoint(Plan& plan, const CoilData& maps, const std::vector<const std::vector<cfloat>*>& data);
VecPtr sense_adjoint(Plan& plan, const std::vector<VecPtr>& maps, const std::vector<const std::vector<cfloat>*>& data);

// E x: each coil's samples F S_c x (the forward model, for tests and residuals).
CoilData sense_forward(Plan& plan, const CoilData& maps, const std::vector<cfloat>& image);

}  // namespace fhd
