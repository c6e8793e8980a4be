#pragma once
// Solver options shared by recon, batch and validate.
#include <CLI/CLI.hpp>
#include <set>
#include <string>

#include "app/device.hpp"
#include "app/log.hpp"
#include "app/source.hpp"
#include "phantom/phantom.hpp"
#include "recon/pipeline/pipeline.hpp"

namespace fhd::app {

struct SolverOptions {
  std::string trig = "single";
  std::string kernel;
  std::string fhd = "exact";    // exact (the gather, the book's method) | nufft (tolerance-controlled)
  double nufft_tol = 1e-6;
  int iters = 100;
  double tol = 1e-6;
  double lambda = 0.03;         // l2's fixed value (auto's fallback); a sparse prior's only when given
  bool lambda_given = false;
  // --lambda auto: lambda from the data's noise (recon/problem/lambda_auto.hpp); `lambda` is its
  // fallback. TV without --lambda is auto too.
  bool lambda_auto = false;
  std::string reg = "l2";
  bool no_precond = false;
  double admm_rho = ReconOptions{}.admm_rho;  // ADMM's penalty relative to Q(0) (a sparse prior)
  int admm_inner = ReconOptions{}.admm_inner;  // CG steps per ADMM x-update
  std::string dcf = "auto";
  std::string coil_combine = "sense";  // several coils: sense (one image, estimated maps) | rss (per coil)
  std::string maps = "lowres";       // SENSE's maps: lowres | espirit
  int calibration = 24;              // SENSE's calibration region, samples per axis
  double maps_crop = kLowresCrop;    // lowres maps: zero where the low-resolution RSS < this * its peak
  bool no_gridding = false;
  std::string field_comp = "auto";   // none | exact | segmented; auto: segmented with a field map, else none
  int segments = 0;                  // segmented's L; 0 = the rule (recon/field/field.hpp choose_segments)
  std::string cache_dir;  // "" = the default cache dir
  bool no_cache = false;
  // The options given on the command line of those that apply only to some
  // scans or models (warn_ignored_options); --trig's also tells a batch to
  // pass it on.
  std::set<std::string> given;
};

void add_solver_options(CLI::App& cmd, SolverOptions& o);
// One warning for each given option this run ignores: coil options with one
// coil, maps options with --coil-combine rss, ADMM's with l2, --nufft-tol with
// the exact gather, --trig and --kernel with the NUFFT. coils = 0: the scans
// are not known yet (a batch says, once, only what holds for every scan).
void warn_ignored_options(const SolverOptions& o, std::size_t coils);
// --lambda's value, checked by lambda_value(): "auto" or a number.
void set_lambda(SolverOptions& o, const std::string& v);
// What recon scores against, from a phantom (which must outlive the result);
// with `gain` (one value per voxel of the grid scored on), the phantom as a
// coil array sees it: phantom * gain (Source::array_gain).
std::shared_ptr<const Truth> truth_of(const Phantom& p, const std::vector<float>* gain = nullptr);
// Progress and the source must outlive the returned options (the observer and
// the truth point to them). src may be null (no truth, no true maps).
ReconOptions make_recon_options(const SolverOptions& o, const Source* src, Progress& progress);
// Field-compensation options that cannot work with this source, before any
// work (the pipeline checks them again against the scan as read).
void check_field_options(const SourceOptions& src, const SolverOptions& o);
// The GPU choices among the solver's options (--cache-dir also holds the
// tuned launch profiles), for select_backend.
DeviceOptions make_device_options(const SolverOptions& o);
// The command line of this process, for reports.
std::string command_line();
void set_command_line(int argc, char** argv);

}  // namespace fhd::app
