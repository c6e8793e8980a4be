#pragma once
// A plan per trajectory and image grid, in the spirit of FINUFFT's makeplan /
// setpts / execute and BART's nufft_create: made once (Backend::make_plan),
// it uploads k once and owns everything that depends only on the trajectory:
// Q on the doubled grid (computed, or read from the disk cache, at most once),
// the Toeplitz normal operator (FFT(Q)) per lambda, the density weights. Its
// operators then run for any number of data vectors: every coil of a scan,
// every ADMM step. The exact gather and the NUFFT are two kinds of plan,
// chosen by PlanOptions::fhd.method; callers do not see the difference.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "recon/device/device.hpp"

namespace fhd {

struct PlanOptions {
  FhdOptions fhd;               // method (exact | nufft), trig, kernel, tolerance
  std::vector<cfloat> phi;      // Phi(k_m) of the voxel basis; empty = 1 (Q's weights are |Phi|^2)
  std::string q_cache_dir;      // "" = Q is kept in memory only
  std::string dcf = "auto";     // density compensation: auto | radial | pipe-menon
  std::string trajectory_kind;  // the generator's name when known ("" = detect from the samples)
  std::vector<float> dcf_given; // weights a file carries; empty = compute when asked
};

// How often the plan did its once-per-trajectory work (tests hold it to 1).
struct PlanCounts {
  int uploads = 0;        // k uploaded to the backend
  int q_computed = 0;     // Q computed by the backend
  int q_loaded = 0;       // Q read from the disk cache
  int dcf_computed = 0;   // density weights computed
  int normal_made = 0;    // Toeplitz operators made (one FFT of Q each)
};

class Plan {
 public:
  // Checks the trajectory and phi lengths (InputError), uploads k.
  Plan(Backend& be, const Trajectory& traj, const ImageGrid& grid, PlanOptions opt);

  Backend& backend() { return be_; }
  const ImageGrid& grid() const { return grid_; }
  const Trajectory& trajectory() const { return points_->host(); }
  std::size_t samples() const { return points_->size(); }
  const PlanOptions& options() const { return opt_; }
  const PlanCounts& counts() const { return counts_; }

  // cmpMu then cmpFhD of one data vector (D_m, samples() long): the adjoint.
  std::vector<cfloat> fhd(const std::vector<cfloat>& data) { return be_.vec().download(*fhd_of_mu(*mu(data))); }
  // The two steps apart (the pipeline times them as two stages), their
  // results kept where the backend computes (Backend::mu_resident).
  VecPtr mu(const std::vector<cfloat>& data);
  VecPtr fhd_of_mu(const BackendVector& mu);
  // A x (Phi = 1): the forward model, for residuals and synthetic data.
  std::vector<cfloat> forward(const std::vector<cfloat>& image);
  // Q with weights w (samples() real values) and the Toeplitz operator of any
  // Q: the time-segmented field model's kernels (recon/field/field.hpp). Neither is
  // kept nor cached by the plan.
  VecPtr q_weighted(const std::vector<float>& w);
  std::unique_ptr<NormalOperator> normal_of(const BackendVector& q, double lambda);
  // The exact off-resonance model with this plan's points (Backend::field_forward).
  std::vector<cfloat> field_forward(const FieldData& f, const std::vector<cfloat>& image);
  std::vector<cfloat> field_adjoint(const FieldData& f, const std::vector<cfloat>& data);
  // Q on grid().doubled(): from memory, else the disk cache, else computed.
  // q_resident() keeps it where the backend computes (device memory on the
  // GPU); q() brings a host copy (downloaded once, when asked for).
  const BackendVector& q_resident();
  const std::vector<cfloat>& q();
  // Q(0) = sum |Phi|^2 (exactly: every phase is 0 there), the mean eigenvalue
  // of FhF: what relative lambdas scale by. Needs no Q.
  double q0() const;
  // (FhF + lambda R^H R), lambda absolute; made once per lambda and kept.
  NormalOperator& normal(double lambda);
  // Its circulant preconditioner (recon/plan/precond.hpp), likewise once per lambda.
  NormalOperator& preconditioner(double lambda);
  // The gridding baselines' density weights: the file's, else computed once.
  const std::vector<float>& dcf();
  // Weights computed for this plan's trajectory elsewhere (recon/pipeline/pipeline.hpp's
  // prepare_host_work): dcf() returns them.
  void use_dcf(std::vector<float> weights);
  // Gridding + inverse FFT (+ deapodization) of one data vector with dcf().
  std::vector<cfloat> grid(const std::vector<cfloat>& data, const GridKernel& kernel);

 private:
  Backend& be_;
  ImageGrid grid_;
  PlanOptions opt_;
  std::unique_ptr<Points> points_;
  std::vector<cfloat> q_;   // host copy of Q (empty until needed)
  VecPtr q_dev_;            // Q where the backend computes
  std::vector<float> dcf_;
  bool dcf_ready_ = false;
  std::map<double, std::unique_ptr<NormalOperator>> normal_, precond_;
  PlanCounts counts_;
};

// The Q-cache key of a plan: the trajectory, |Phi|^2, the grid, the trig mode,
// and the method (the kernel variant, or the NUFFT and its tolerance).
std::string plan_q_key(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                       const FhdOptions& fhd);

}  // namespace fhd
