#include "recon/plan/plan.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "recon/gridding/dcf.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/plan/qcache.hpp"

namespace fhd {
namespace {

std::vector<float> phi_weights(const std::vector<cfloat>& phi) {
  std::vector<float> w(phi.size());
  for (std::size_t i = 0; i < phi.size(); ++i) w[i] = std::norm(phi[i]);
  return w;
}

void check_lengths(const Trajectory& t, const std::vector<cfloat>& phi, const std::vector<float>& dcf) {
  const std::size_t m = t.size();
  if (t.ky.size() != m || (t.kz.size() != m && !t.kz.empty()))
    throw InputError("trajectory", "kx/ky/kz lengths",
                     std::to_string(m) + "/" + std::to_string(t.ky.size()) + "/" + std::to_string(t.kz.size()),
                     "must be equal (kz may be empty for 2D)");
  if (!phi.empty() && phi.size() != m)
    throw InputError("plan", "phi length", std::to_string(phi.size()),
                     "must be 0 (Dirac basis) or the number of samples, " + std::to_string(m));
  if (!dcf.empty() && dcf.size() != m)
    throw InputError("plan", "dcf length", std::to_string(dcf.size()),
                     "must be 0 (computed) or the number of samples, " + std::to_string(m));
}

}  // namespace

std::string plan_q_key(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                       const FhdOptions& fhd) {
  if (fhd.method == FhdMethod::Exact) return q_key(traj, w, grid, fhd.trig, fhd.kernel);
  char tag[48];
  std::snprintf(tag, sizeof tag, "nufft-tol%.3g", fhd.nufft_tol);
  return q_key(traj, w, grid, TrigMode::Single, tag);
}

std::unique_ptr<Plan> Backend::make_plan(const Trajectory& traj, const ImageGrid& grid, const PlanOptions& opt) {
  return std::make_unique<Plan>(*this, traj, grid, opt);
}

Plan::Plan(Backend& be, const Trajectory& traj, const ImageGrid& grid, PlanOptions opt)
    : be_(be), grid_(grid), opt_(std::move(opt)) {
  check_lengths(traj, opt_.phi, opt_.dcf_given);
  points_ = be_.upload_points(traj);
  ++counts_.uploads;
}

VecPtr Plan::mu(const std::vector<cfloat>& data) {
  if (data.size() != samples())
    throw InputError("plan", "data length", std::to_string(data.size()),
                     "must equal the trajectory's " + std::to_string(samples()) + " samples");
  return be_.mu_resident(opt_.phi, data);
}

VecPtr Plan::fhd_of_mu(const BackendVector& mu) { return be_.fhd_resident(*points_, mu, grid_, opt_.fhd); }

std::vector<cfloat> Plan::forward(const std::vector<cfloat>& image) {
  if (image.size() != grid_.voxels())
    throw InputError("plan", "image length", std::to_string(image.size()),
                     "must equal the grid's " + std::to_string(grid_.voxels()) + " voxels");
  return be_.forward(*points_, image, grid_, opt_.fhd);
}

VecPtr Plan::q_weighted(const std::vector<float>& w) {
  if (w.size() != samples())
    throw InputError("plan", "Q weights", std::to_string(w.size()), "must number the samples, " + std::to_string(samples()));
  ++counts_.q_computed;
  return be_.q_resident(*points_, w, grid_, opt_.fhd);
}

std::unique_ptr<NormalOperator> Plan::normal_of(const BackendVector& q, double lambda) {
  ++counts_.normal_made;
  return be_.normal_resident(q, grid_, lambda);
}

std::vector<cfloat> Plan::field_forward(const FieldData& f, const std::vector<cfloat>& image) {
  return be_.field_forward(*points_, f, image, grid_);
}

std::vector<cfloat> Plan::field_adjoint(const FieldData& f, const std::vector<cfloat>& data) {
  return be_.field_adjoint(*points_, f, data, grid_);
}

const BackendVector& Plan::q_resident() {
  if (q_dev_) return *q_dev_;
  const std::vector<float> w = phi_weights(opt_.phi);
  std::string key;
  if (!opt_.q_cache_dir.empty()) {
    key = plan_q_key(trajectory(), w, grid_, opt_.fhd);
    if (auto hit = load_q(opt_.q_cache_dir, key)) {
      q_ = std::move(*hit);
      ++counts_.q_loaded;
      q_dev_ = be_.vec().upload(q_);
      return *q_dev_;
    }
  }
  q_dev_ = be_.q_resident(*points_, w, grid_, opt_.fhd);
  ++counts_.q_computed;
  if (!key.empty()) store_q(opt_.q_cache_dir, key, q());
  return *q_dev_;
}

const std::vector<cfloat>& Plan::q() {
  if (q_.empty()) q_ = be_.vec().download(q_resident());
  return q_;
}

double Plan::q0() const {
  if (opt_.phi.empty()) return double(samples());
  double sum = 0.0;
  for (const cfloat& p : opt_.phi) sum += std::norm(cdouble(p));
  return sum;
}

NormalOperator& Plan::normal(double lambda) {
  auto it = normal_.find(lambda);
  if (it == normal_.end()) {
    it = normal_.emplace(lambda, be_.normal_resident(q_resident(), grid_, lambda)).first;
    ++counts_.normal_made;
  }
  return *it->second;
}

NormalOperator& Plan::preconditioner(double lambda) {
  auto it = precond_.find(lambda);
  if (it == precond_.end())
    it = precond_.emplace(lambda, be_.preconditioner_resident(q_resident(), grid_, lambda)).first;
  return *it->second;
}

const std::vector<float>& Plan::dcf() {
  if (dcf_ready_) return dcf_;
  if (!opt_.dcf_given.empty()) {
    dcf_ = opt_.dcf_given;
  } else {
    dcf_ = density_weights(trajectory(), grid_, opt_.dcf, opt_.trajectory_kind);
    ++counts_.dcf_computed;
  }
  dcf_ready_ = true;
  return dcf_;
}

void Plan::use_dcf(std::vector<float> weights) {
  if (weights.size() != trajectory().size())
    throw InputError("density compensation", "weights", std::to_string(weights.size()),
                     "must number the samples, " + std::to_string(trajectory().size()));
  dcf_ = std::move(weights);
  dcf_ready_ = true;
  ++counts_.dcf_computed;
}

std::vector<cfloat> Plan::grid(const std::vector<cfloat>& data, const GridKernel& kernel) {
  return gridding_recon(be_, *points_, data, dcf(), grid_, kernel);
}

}  // namespace fhd
