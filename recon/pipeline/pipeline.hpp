#pragma once
// The reconstruction pipeline: chains the stages of docs/architecture.md on one
// Plan (one trajectory and grid on one Backend) and times each. Each stage is
// one call on plain data. Coils share the plan: k is uploaded, Q and the DCF
// computed, once per scan; each coil pays FhD, its solve and its gridding.
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "recon/device/device.hpp"
#include "recon/solvers/cg.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/plan/plan.hpp"
#include "recon/solvers/tv.hpp"  // kTvLambda, TV's default

namespace fhd {

// Callbacks for the CLI's log and progress display; any may be empty.
struct StageObserver {
  std::function<void(const std::string& stage)> begin;
  std::function<void(double fraction)> progress;
  std::function<void(const std::string& stage, double seconds)> end;
};

// What is known of the imaged object (a phantom source), for scoring: its
// image at voxel centres (the PSNR reference) and its continuous Fourier
// transform S(k), k in cycles/FOV (for the band-limited ceiling). recon/ does
// not know phantoms; app/ builds this from one.
struct Truth {
  std::function<std::vector<float>(const ImageGrid&)> image;
  std::function<cdouble(double kx, double ky, double kz)> kspace;  // may be empty: no ceiling
};

struct ReconOptions {
  FhdOptions fhd;               // kernel and trig mode for FhD and Q
  int iters = 100;               // CG iterations (at most)
  double tol = 1e-5;            // CG stops when ||r|| / ||FhD|| falls below
  double lambda = 0.0;          // relative to Q(0) = sum |Phi|^2, the mean eigenvalue of FhF
  // Choose lambda from the data's noise estimate (recon/problem/lambda_auto.hpp):
  // l2 by the risk estimate, TV by its noise rule (recon/solvers/tv.hpp); `lambda` is
  // the fallback when the scan gives no noise estimate.
  bool lambda_auto = false;
  bool precondition = true;     // circulant preconditioner for CG (recon/plan/precond.hpp)
  std::string reg = "l2";       // l2 (first differences, CG) | tv (isotropic TV, ADMM; recon/solvers/tv.hpp)
  // TV: lambda relative to Q(0) times the image scale (docs/accuracy.md);
  // rho relative to Q(0); iters counts ADMM iterations of tv_inner CG steps each.
  double tv_rho = 0.1;
  int tv_inner = 5;
  bool gridding = true;         // also run the gridding baselines
  bool keep_fhd = false;        // bring FhD to the host into ReconResult::fhd (validate's accuracy checks)
  std::string dcf = "auto";     // density compensation for gridding: auto|radial|pipe-menon
  std::string q_cache_dir;      // "" = do not cache Q
  // Several coils: "rss" reconstructs each coil and combines the images by
  // root sum of squares; "sense" solves one image from all coils with maps
  // estimated from the calibration region (`maps`: lowres | espirit, `calibration`
  // samples per axis; docs/coils.md). TV runs with rss only.
  std::string coil_combine = "rss";
  std::string maps = "lowres";   // or "given": given_maps (normalized, one per coil)
  std::shared_ptr<const std::vector<std::vector<cfloat>>> given_maps;
  int calibration = 24;
  // Off-resonance (recon/field/field.hpp, docs/field-maps.md): "auto" is segmented
  // when the scan has a field map, else none; exact | segmented | none.
  // segments: L of the segmented model, 0 = choose_segments' rule.
  std::string field_comp = "auto";
  int segments = 0;
  double maps_crop = kLowresCrop;  // lowres maps: zero where the low-resolution RSS < maps_crop * its peak
  std::shared_ptr<const Truth> truth;  // when known: reference image, PSNR, band-limited ceiling
  StageObserver observer;
};

struct StageTime {
  std::string name;
  double seconds = 0;
  std::string note;  // "cached", "30 iterations", ...
};

struct MethodResult {
  std::string name;           // iterative, gridding-trilinear, gridding-kb, band-limited ceiling
  std::vector<cfloat> image;  // grid.voxels(), x fastest
  double seconds = 0;         // the stages this method needed
  std::optional<double> psnr, nrmse;  // against the phantom, when known
  std::optional<double> psnr_band_limited;  // against the band-limited ceiling image, when computed
  int iters = 0;              // iterations it took (CG, or ADMM for TV); 0 for direct methods
  std::vector<double> psnr_per_iter;  // [i] after iteration i + 1, when the phantom is known
};

// How the iterative method handled off-resonance (report.json's "field").
struct FieldReport {
  std::string method = "none";  // none | exact | segmented
  int segments = 0;             // segmented: L
  double interpolator_error = 0;  // segmented: TimeSegments::rms_error
  double min_hz = 0, max_hz = 0;  // the field map's range (when the scan has one)
  double readout_s = 0;           // max - min sample time
  bool has_map = false;
};

struct ReconResult {
  ImageGrid grid;
  std::vector<StageTime> stages;
  std::vector<MethodResult> methods;
  std::vector<float> reference;  // phantom at voxel centers (empty when unknown)
  std::vector<cfloat> fhd;       // the right-hand side CG solved with, with ReconOptions::keep_fhd
  CgResult cg;
  // PSNR (dB) of the iterate (CG, or ADMM for --reg tv) against the phantom: [0] for the zero start,
  // [i] after iteration i. Empty when no phantom is known.
  std::vector<double> cg_psnr;
  bool q_cached = false;
  FieldReport field;
  PlanCounts plan;        // the plan's once-per-trajectory work (uploads, Q, DCF)
  double lambda_abs = 0;  // lambda actually used in the normal equations
  double lambda_rel = 0;  // the same relative to Q(0) (for TV: to Q(0) times the image scale)
  std::string lambda_rule;  // how it was chosen: "fixed", or the auto rule and its noise estimate
};

// One scan (one coil): exactly reconstruct_coils(be, {&scan}, opt).
ReconResult run_reconstruction(Backend& be, const Scan& scan, const ReconOptions& opt);

// Several coils of one scan (same grid, trajectory and Phi; InputError
// otherwise): one plan, every coil reconstructed with it, the images combined
// by root sum of squares, scored once against opt.truth. Stage times add up
// over coils; "Q" and "density compensation" run once.
// host: the work prepare_host_work does, when the caller did it already.
struct HostWork;
ReconResult reconstruct_coils(Backend& be, const std::vector<const Scan*>& coils, const ReconOptions& opt);
ReconResult reconstruct_coils(Backend& be, const std::vector<const Scan*>& coils, const ReconOptions& opt,
                              HostWork host);

// The host work of a reconstruction that needs no backend: the phantom's
// reference image (truth at the voxel centres) and the gridding baselines'
// density weights (unless the file carries its own). app/cmd_recon.cpp does it
// while the GPU's context is made, which takes longer than reading the source
// (0.1 s of host work at 128^3 off the wall time). Checks the coils and
// options first, as reconstruct_coils does.
// With beside_gpu (the caller will run the stages on a GPU) the band-limited
// ceiling starts here too, on its host thread, instead of once the backend is
// ready: it took 0.1-0.25 s and could end after the GPU's stages.
struct TimedImage {
  std::vector<cfloat> image;
  double seconds = 0.0;
};
struct HostWork {
  bool done = false;
  std::vector<float> reference;
  std::vector<float> dcf;  // empty: no gridding, or the file's own weights
  double dcf_seconds = 0.0;
  std::future<TimedImage> ceiling;  // not valid: not started
};
HostWork prepare_host_work(const std::vector<const Scan*>& coils, const ReconOptions& opt, bool beside_gpu = false);

// The plan options a scan and these reconstruction options give.
PlanOptions plan_options(const Scan& scan, const ReconOptions& opt);

// PSNR and NRMSE of every method against res.reference (nothing when empty).
void score(ReconResult& res);

}  // namespace fhd
