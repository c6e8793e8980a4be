#pragma once
// A plan per trajectory, image grid and device, in the spirit of FINUFFT's
// makeplan / setpts / execute and BART's nufft_create: it uploads k once and
// is the one owner of everything that depends only on the trajectory: the
// NUFFT plan (point sort, fine-grid FFT plan), Q on the doubled grid
// (computed, or read from the disk cache, at most once), the Toeplitz normal
// operator T (FFT of Q), the circulant preconditioners, the density weights.
// Nothing is looked up by a checksum of the data.
//
// Its operators (recon/ops/linop.hpp) hold the plan: forward() is the model
// A = Phi F, image -> samples, by the exact gather or the NUFFT
// (PlanOptions::fhd.method; callers do not see the difference), with A^H the
// book's cmpMu then cmpFhD and A^H A = T. Every coil of a scan, every ADMM
// step, every SENSE coil reuses them.
//
// With several devices (--gpus) the exact gather's adjoint and Q are split
// into slabs of the image across them, the NUFFT's adjoint into sample chunks
// (recon/plan/partition.hpp), and on(i) gives this trajectory's plan on
// device i (SENSE's coils split across devices); everything else runs on the
// first.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "recon/gather/fhd_options.hpp"
#include "recon/gridding/grid_kernel.hpp"
#include "recon/ops/linop.hpp"
#include "recon/plan/partition.hpp"
#include "recon/plan/qcache.hpp"

namespace fhd {

struct PlanOptions {
  FhdOptions fhd;               // method (exact | nufft), trig, kernel, tolerance
  std::vector<cfloat> phi;      // Phi(k_m) of the voxel basis; empty = 1 (Q's weights are |Phi|^2)
  std::string q_cache_dir;      // "" = Q is kept in memory only
  std::string dcf = "auto";     // density compensation: auto | radial | pipe-menon
  std::string trajectory_kind;  // the generator's name when known ("" = detect from the samples)
  std::vector<float> dcf_given; // weights a file carries; empty = compute when asked
  SplitRule split;              // when work is split across the plan's devices
};

// How often the plan did its once-per-trajectory work (tests hold it to 1).
struct PlanCounts {
  int uploads = 0;        // k uploaded to the device
  int q_computed = 0;     // Q computed on the device
  int q_loaded = 0;       // Q read from the disk cache
  int dcf_computed = 0;   // density weights computed
  int normal_made = 0;    // Toeplitz operators made (one FFT of Q each)
  int nufft_plans = 0;    // NUFFT plans made for the image grid
};

class NufftPlan;

class Plan : public std::enable_shared_from_this<Plan> {
 public:
  // Checks the trajectory, phi and dcf lengths (InputError), uploads k.
  // `others`: further devices the exact gather and Q are split across.
  static std::shared_ptr<Plan> make(Device& dev, const Trajectory& traj, const ImageGrid& grid, PlanOptions opt,
                                    std::vector<Device*> others = {});
  Plan(Device& dev, const Trajectory& traj, const ImageGrid& grid, PlanOptions opt, std::vector<Device*> others);
  ~Plan();

  Device& device() { return dev_; }
  const ImageGrid& grid() const { return grid_; }
  const Trajectory& trajectory() const { return points_->host(); }
  std::size_t samples() const { return points_->size(); }
  const Points& points() const { return *points_; }
  const PlanOptions& options() const { return opt_; }
  const PlanCounts& counts() const { return counts_; }

  // ---- operators
  // F (Phi = 1): image -> samples, x_n -> sum_n x_n exp(-i 2 pi k_m . x_n).
  OpPtr fourier();
  // diag(Phi) on the samples (the identity when Phi = 1).
  OpPtr phi();
  // A = Phi F; A^H A = T (the fast normal).
  OpPtr forward();
  // F as a stack of sample chunks across devices() (partitioned_nufft), made
  // once; null unless the NUFFT is split (splits_nufft).
  OpPtr fourier_chunks();

  // cmpMu: Mu = conj(Phi) D for one data vector (samples() long), where the device computes.
  VecPtr mu(const std::vector<cfloat>& data);
  // The same for data already on the device (in place).
  void mu_in_place(DeviceVector& data);
  // cmpFhD of Mu: F^H Mu.
  VecPtr fhd_of_mu(const DeviceVector& mu);
  // Host conveniences: A^H d and F x (tests, small problems).
  std::vector<cfloat> fhd(const std::vector<cfloat>& data);
  std::vector<cfloat> forward_model(const std::vector<cfloat>& image);

  // ---- Q and the operators made from it
  // Q on grid().doubled() where the device computes: from memory, else the
  // disk cache, else computed. q_host() brings a host copy (once): the values
  // the cache gave or was given, shared with it (a warm worker's memory), not
  // copied again.
  const DeviceVector& q();
  bool has_q() const { return q_dev_ != nullptr; }
  const QValues& q_host();
  // Q(0) = sum |Phi|^2 (exactly), the mean eigenvalue of T: what relative
  // lambdas scale by. Needs no Q.
  double q0() const;
  // T = A^H A from Q, made once.
  OpPtr toeplitz();
  // M ~ (T + weight D^H D)^-1, made once per weight.
  OpPtr preconditioner(double weight);
  // The eigenvalues of T's smoothed circulant (--lambda auto's model).
  std::vector<double> circulant_spectrum();
  // Q with real weights w (samples() values) and the Toeplitz operator of any
  // Q: the time-segmented field model's kernels. Neither is kept nor cached.
  VecPtr q_weighted(const std::vector<float>& w);
  OpPtr toeplitz_of(const DeviceVector& q);

  // ---- the gridding baselines
  // The file's weights, else computed once.
  const std::vector<float>& dcf();
  // Weights computed for this trajectory elsewhere (before the device was ready).
  void use_dcf(std::vector<float> weights);
  // Gridding + inverse FFT (+ deapodization) of one data vector with dcf().
  std::vector<cfloat> grid(const std::vector<cfloat>& data, const GridKernel& kernel);

  // The NUFFT plan of these points on grid() (made at the first call, kept).
  NufftPlan& nufft_plan();
  // What the first use of forward() would make, made now: the NUFFT plan (its
  // point sort) where the plan uses the NUFFT, and what its type 1 of
  // `transforms` needs (NufftPlan::reserve_type1). Lets a caller pay it beside
  // other work (SENSE's split, recon/problem/problem.cpp).
  void prepare(int transforms = 1);
  // The devices the exact gather is split across (the first is device()).
  const std::vector<Device*>& devices() const { return devices_; }
  // This trajectory on devices()[i]: only the exact gather's slabs use it, so
  // a plan of the exact gather uploads it when made, one of the NUFFT (whose
  // splits make plans of their own) at the first call, which never comes for
  // SENSE or the single-coil split: such a run on several GPUs does not wait
  // for uploads it never reads. Threads may ask for different i at once,
  // never for the same i.
  const Points& points_on(std::size_t i);
  // This trajectory's plan on devices()[i] alone (this one where there is one
  // device), made once: its operators never split across devices. Its Q is
  // this plan's, copied over (never computed again; shared on the first device).
  std::shared_ptr<Plan> on(std::size_t i);
  // on(i) for every device, the missing ones made side by side.
  std::vector<std::shared_ptr<Plan>> on_all();
  // This trajectory in sample chunks, one plan per device (sample_chunk_plans,
  // recon/plan/partition.hpp), made once: the NUFFT's split of one coil, and
  // SENSE's E^H y across devices.
  const std::vector<std::shared_ptr<Plan>>& chunk_plans();

 private:
  VecPtr compute_q(const std::vector<float>& w);
  std::shared_ptr<Plan> make_on(std::size_t i);  // device i's plan, its Q this one's

  Device& dev_;
  ImageGrid grid_;
  PlanOptions opt_;
  std::vector<Device*> devices_;
  std::unique_ptr<Points> points_;
  std::vector<std::unique_ptr<Points>> others_points_;  // points_on(i), made at the first call
  std::vector<std::shared_ptr<Plan>> on_;   // on(i), made at the first call
  std::weak_ptr<Plan> q_from_;              // the plan whose Q this one copies (set by on())
  OpPtr nufft_chunks_;                      // F by sample chunks across devices (splits_nufft)
  std::vector<std::shared_ptr<Plan>> chunk_plans_;  // chunk_plans(), made at the first call
  std::shared_ptr<DeviceVector> phi_dev_;   // Phi on the device (empty when Phi = 1)
  VecPtr q_dev_;
  SharedQ q_;                               // host copy (null until asked or loaded)
  OpPtr toeplitz_;
  std::map<double, OpPtr> precond_;
  std::unique_ptr<NufftPlan> nufft_;
  std::vector<float> dcf_;
  bool dcf_ready_ = false;
  PlanCounts counts_;
};

// The Q-cache key of a plan: the trajectory, |Phi|^2, the grid, the trig mode,
// and the method (the kernel variant, or the NUFFT and its tolerance).
std::string plan_q_key(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                       const FhdOptions& fhd);

// Q from the cache for the plan these would make (the process's memory layer,
// else the disk, which then hands it to that layer), or null on a miss. A warm
// worker reads it beside the previous scan's reconstruction: that plan's q()
// then finds it in memory and only uploads it. Without a memory layer
// (set_q_memory) it reads nothing: the plan would read the file again.
SharedQ cached_q(const Trajectory& traj, const ImageGrid& grid, const PlanOptions& opt);

}  // namespace fhd
