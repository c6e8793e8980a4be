#include "recon/plan/plan.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "recon/gather/gather_kernels.hpp"
#include "recon/gridding/dcf.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/nufft/nufft_kernels.hpp"
#include "recon/ops/device_stack.hpp"
#include "recon/plan/partition.hpp"
#include "recon/plan/qcache.hpp"
#include "recon/plan/toeplitz_kernels.hpp"

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

bool uses_nufft(const PlanOptions& o) { return o.fhd.method == FhdMethod::Nufft; }

// F: image -> samples (Phi = 1), by the plan's NUFFT or the exact gather,
// split across the plan's devices where the SplitRule gains: the gather's
// adjoint by image slabs, the NUFFT by sample chunks (its normal T stays on
// the first device: its cost is the FFT pair).
class FourierOp : public LinOp, public BatchedAdjoint {
 public:
  explicit FourierOp(std::shared_ptr<Plan> plan)
      : LinOp(plan->device(), image_shape(plan->grid()), samples_shape(plan->samples()),
              uses_nufft(plan->options()) ? "NUFFT" : "F"),
        plan_(std::move(plan)) {
    if (plan_->devices().size() < 2) return;
    if (uses_nufft(plan_->options()))
      chunks_ = plan_->fourier_chunks();
    else
      slabs_ = partitioned_adjoint(*plan_);
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    if (chunks_) return chunks_->apply(x, y);
    if (uses_nufft(plan_->options())) return plan_->nufft_plan().type2(x, y);
    device().kernels<GatherKernels>().forward(plan_->points(), x, plan_->grid(), plan_->options().fhd, y);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    if (chunks_) return chunks_->adjoint(y, x);
    if (uses_nufft(plan_->options())) return plan_->nufft_plan().type1(y, x);
    if (slabs_) return slabs_->apply(y, x);
    device().kernels<GatherKernels>().adjoint(plan_->points(), y, plan_->grid(), plan_->options().fhd, x);
  }
  bool batches() override { return !chunks_ && uses_nufft(plan_->options()) && plan_->nufft_plan().batches(); }
  void adjoint_batch(const DeviceVector& y, DeviceVector& x, int n) override {
    if (!batches()) throw std::logic_error("FourierOp: adjoint_batch where the plan does not batch");
    plan_->nufft_plan().type1_batch(y, x, n);
  }
  // F^H F = T when Q's weights are 1 (Phi = 1); else A^H A's T is not F's.
  OpPtr make_normal() override {
    if (plan_->options().phi.empty()) return plan_->toeplitz();
    return LinOp::make_normal();
  }

 private:
  std::shared_ptr<Plan> plan_;
  OpPtr slabs_;   // F^H as a stack of image slabs across devices
  OpPtr chunks_;  // F as a stack of sample chunks across devices
};

// A = Phi F: A^H = F^H conj(Phi) (cmpMu, then cmpFhD), A^H A = T.
class ForwardOp : public LinOp {
 public:
  explicit ForwardOp(std::shared_ptr<Plan> plan)
      : LinOp(plan->device(), image_shape(plan->grid()), samples_shape(plan->samples()), "Phi F"),
        plan_(std::move(plan)),
        f_(plan_->fourier()),
        phi_(plan_->phi()) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    f_->apply(x, y);
    phi_->apply(y, y);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    DeviceVector& mu = scratch(2, y.size());
    phi_->adjoint(y, mu);
    f_->adjoint(mu, x);
  }
  OpPtr make_normal() override { return plan_->toeplitz(); }

 private:
  std::shared_ptr<Plan> plan_;
  OpPtr f_, phi_;
};

}  // namespace

std::string plan_q_key(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                       const FhdOptions& fhd) {
  if (fhd.method == FhdMethod::Exact) return q_key(traj, w, grid, fhd.trig, fhd.kernel);
  char tag[48];
  std::snprintf(tag, sizeof tag, "nufft-tol%.3g", fhd.nufft_tol);
  return q_key(traj, w, grid, TrigMode::Single, tag);
}

SharedQ cached_q(const Trajectory& traj, const ImageGrid& grid, const PlanOptions& opt) {
  if (opt.q_cache_dir.empty() || !has_q_memory()) return nullptr;  // without it the plan would read it again
  return load_q(opt.q_cache_dir, plan_q_key(traj, phi_weights(opt.phi), grid, opt.fhd));
}

std::shared_ptr<Plan> Plan::make(Device& dev, const Trajectory& traj, const ImageGrid& grid, PlanOptions opt,
                                 std::vector<Device*> others) {
  return std::make_shared<Plan>(dev, traj, grid, std::move(opt), std::move(others));
}

Plan::Plan(Device& dev, const Trajectory& traj, const ImageGrid& grid, PlanOptions opt, std::vector<Device*> others)
    : dev_(dev), grid_(grid), opt_(std::move(opt)) {
  check_lengths(traj, opt_.phi, opt_.dcf_given);
  devices_.push_back(&dev);
  for (Device* d : others) devices_.push_back(d);
  points_ = dev_.upload_points(traj);
  others_points_.resize(others.size());
  // The exact gather's slabs read them: uploaded here, before any stage (at
  // their first use they fell inside cmpMu's stage: 1 ms on one GPU, 13 ms on 2).
  if (!uses_nufft(opt_))
    for (std::size_t i = 1; i < devices_.size(); ++i) points_on(i);
  ++counts_.uploads;
  if (!opt_.phi.empty()) phi_dev_ = dev_.upload(opt_.phi);
}

Plan::~Plan() = default;

const Points& Plan::points_on(std::size_t i) {
  if (i == 0) return *points_;
  std::unique_ptr<Points>& p = others_points_.at(i - 1);
  if (!p) p = devices_[i]->upload_points(trajectory());
  return *p;
}

OpPtr Plan::fourier() { return std::make_shared<FourierOp>(shared_from_this()); }

OpPtr Plan::phi() {
  if (!phi_dev_) return identity(dev_, samples_shape(samples()));
  return diag(phi_dev_, samples_shape(samples()));
}

OpPtr Plan::forward() {
  if (opt_.phi.empty()) return fourier();
  return std::make_shared<ForwardOp>(shared_from_this());
}

VecPtr Plan::mu(const std::vector<cfloat>& data) {
  if (data.size() != samples())
    throw InputError("plan", "data length", std::to_string(data.size()),
                     "must equal the trajectory's " + std::to_string(samples()) + " samples");
  VecPtr d = dev_.upload(data);
  mu_in_place(*d);
  return d;
}

void Plan::mu_in_place(DeviceVector& data) {
  if (phi_dev_) dev_.multiply(*phi_dev_, data, data, true);
}

VecPtr Plan::fhd_of_mu(const DeviceVector& mu) {
  VecPtr out = dev_.zeros(grid_.voxels());
  fourier()->adjoint(mu, *out);
  return out;
}

std::vector<cfloat> Plan::fhd(const std::vector<cfloat>& data) { return dev_.download(*fhd_of_mu(*mu(data))); }

std::vector<cfloat> Plan::forward_model(const std::vector<cfloat>& image) {
  if (image.size() != grid_.voxels())
    throw InputError("plan", "image length", std::to_string(image.size()),
                     "must equal the grid's " + std::to_string(grid_.voxels()) + " voxels");
  return fourier()->apply(image);
}

std::shared_ptr<Plan> Plan::on(std::size_t i) {
  if (devices_.size() < 2) return shared_from_this();
  on_.resize(devices_.size());
  if (!on_.at(i)) on_[i] = make_on(i);
  return on_[i];
}

std::shared_ptr<Plan> Plan::make_on(std::size_t i) {
  PlanOptions o = opt_;
  o.q_cache_dir.clear();
  std::shared_ptr<Plan> p = make(*devices_.at(i), trajectory(), grid_, o);
  p->q_from_ = shared_from_this();
  return p;
}

std::vector<std::shared_ptr<Plan>> Plan::on_all() {
  if (devices_.size() < 2) return {shared_from_this()};
  // Side by side: each plan copies the trajectory on the host and uploads it
  // (1M samples: about 6 ms a plan, which SENSE's first stage paid per GPU).
  on_.resize(devices_.size());
  on_each(devices_.size(), [this](std::size_t i) {
    if (!on_[i]) on_[i] = make_on(i);  // each thread its own entry
  });
  return on_;
}

const std::vector<std::shared_ptr<Plan>>& Plan::chunk_plans() {
  if (chunk_plans_.empty()) chunk_plans_ = sample_chunk_plans(*this);
  return chunk_plans_;
}

OpPtr Plan::fourier_chunks() {
  if (!nufft_chunks_ && splits_nufft(*this)) nufft_chunks_ = partitioned_nufft(*this);
  return nufft_chunks_;
}

void Plan::prepare(int transforms) {
  if (uses_nufft(opt_)) nufft_plan().reserve_type1(transforms);
}

NufftPlan& Plan::nufft_plan() {
  if (!nufft_) {
    nufft_ = dev_.kernels<NufftKernels>().plan(*points_, grid_, grid_, opt_.fhd.nufft_tol);
    ++counts_.nufft_plans;
  }
  return *nufft_;
}

VecPtr Plan::compute_q(const std::vector<float>& w) {
  if (uses_nufft(opt_)) return dev_.kernels<NufftKernels>().q(*points_, w, grid_, opt_.fhd.nufft_tol);
  if (devices_.size() > 1)
    if (VecPtr q = partitioned_q(*this, w)) return q;
  return dev_.kernels<GatherKernels>().q(*points_, w, grid_, opt_.fhd);
}

const DeviceVector& Plan::q() {
  if (q_dev_) return *q_dev_;
  if (const std::shared_ptr<Plan> from = q_from_.lock()) {  // the plan of several devices has it
    const DeviceVector& q = from->q();
    if (&from->device() == &dev_) return q;
    q_dev_ = dev_.zeros(q.size());
    dev_.copy(q, *q_dev_);
    return *q_dev_;
  }
  const std::vector<float> w = phi_weights(opt_.phi);
  std::string key;
  if (!opt_.q_cache_dir.empty()) {
    key = plan_q_key(trajectory(), w, grid_, opt_.fhd);
    if (SharedQ hit = load_q(opt_.q_cache_dir, key)) {
      q_ = std::move(hit);
      ++counts_.q_loaded;
      q_dev_ = dev_.upload(q_->data(), q_->size());
      return *q_dev_;
    }
  }
  q_dev_ = compute_q(w);
  ++counts_.q_computed;
  if (!key.empty()) {
    q_host();  // downloads it into q_
    store_q(opt_.q_cache_dir, key, q_);  // shared with the warm worker's memory, if any
  }
  return *q_dev_;
}

const QValues& Plan::q_host() {
  const DeviceVector& q_dev = q();  // may set q_ itself: loaded, or computed and stored
  if (!q_) {
    auto host = std::make_shared<QValues>(q_dev.size());  // uninitialised: the download fills it
    if (!host->empty()) dev_.to_host(q_dev, host->data());
    q_ = std::move(host);
  }
  return *q_;
}

double Plan::q0() const {
  if (opt_.phi.empty()) return double(samples());
  double sum = 0.0;
  for (const cfloat& p : opt_.phi) sum += std::norm(cdouble(p));
  return sum;
}

OpPtr Plan::toeplitz() {
  if (!toeplitz_) {
    toeplitz_ = dev_.kernels<ToeplitzKernels>().normal(q(), grid_);
    ++counts_.normal_made;
  }
  return toeplitz_;
}

OpPtr Plan::preconditioner(double weight) {
  auto it = precond_.find(weight);
  if (it == precond_.end())
    it = precond_.emplace(weight, dev_.kernels<ToeplitzKernels>().preconditioner(q(), grid_, weight)).first;
  return it->second;
}

std::vector<double> Plan::circulant_spectrum() { return dev_.kernels<ToeplitzKernels>().spectrum(q(), grid_); }

VecPtr Plan::q_weighted(const std::vector<float>& w) {
  if (w.size() != samples())
    throw InputError("plan", "Q weights", std::to_string(w.size()), "must number the samples, " + std::to_string(samples()));
  ++counts_.q_computed;
  return compute_q(w);
}

OpPtr Plan::toeplitz_of(const DeviceVector& q) {
  ++counts_.normal_made;
  return dev_.kernels<ToeplitzKernels>().normal(q, grid_);
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
  return gridding_recon(dev_, *points_, data, dcf(), grid_, kernel);
}

}  // namespace fhd
