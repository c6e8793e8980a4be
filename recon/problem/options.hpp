#pragma once
// One options type for a reconstruction, with one set of defaults (those the
// CLI shows), checked in one place (validate). Errors name the field and its
// value (OptionError); each front end maps fields to its own names (the CLI
// to its flags, docs/usage.md; Python to keyword arguments).
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "recon/coils/coil_maps.hpp"
#include "recon/gather/fhd_options.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

struct CalibrationSamples;  // recon/coils/coil_maps.hpp

// Callbacks for a front end's log and progress display; any may be empty.
struct StageObserver {
  std::function<void(const std::string& stage)> begin;
  std::function<void(double fraction)> progress;
  // queued: `seconds` is the host's time to queue the stage's device work,
  // which may still be running (its own time is in the results, StageClock).
  std::function<void(const std::string& stage, double seconds, bool queued)> end;
};

// What is known of the imaged object (a phantom source), for scoring: its
// image at voxel centres (the PSNR reference) and its continuous Fourier
// transform S(k), k in cycles/FOV (for the band-limited ceiling). recon/ does
// not know phantoms; the front end builds this from one.
struct Truth {
  std::function<std::vector<float>(const ImageGrid&)> image;
  std::function<cdouble(double kx, double ky, double kz)> kspace;  // may be empty: no ceiling
};

struct ReconOptions {
  // ---- the model
  FhdOptions fhd;  // exact gather (trig, kernel) or NUFFT (tolerance)
  // Several coils: "sense" solves one image from all coils with maps
  // (`maps`: lowres | espirit from the calibration region, or given); "rss"
  // reconstructs each coil and combines by root sum of squares (docs/coils.md).
  std::string coil_combine = "sense";
  std::string maps = "lowres";
  std::shared_ptr<const CoilData> given_maps;  // maps = "given": one normalized map per coil
  int calibration = 24;                        // calibration region, samples per axis
  // That region's samples chosen on the host beforehand (prepare_host_work,
  // beside the GPU's start); null: chosen in the coil maps stage.
  std::shared_ptr<const CalibrationSamples> calibration_samples;
  double maps_crop = kLowresCrop;  // maps are zero where the low-resolution RSS < maps_crop * its peak
  // Off-resonance (recon/field/field.hpp): "auto" is segmented when the scan
  // has a field map, else none; exact | segmented | none. segments: L, 0 = the rule.
  std::string field_comp = "auto";
  int segments = 0;

  // ---- the regularizer and the solver
  // l2 (first differences, CG) or a sparse prior by ADMM (recon/solvers/regularizer.hpp: tv, ...).
  std::string reg = "l2";
  // Unset: l2 takes 0.03 relative to Q(0) = sum |Phi|^2; a sparse prior its
  // noise rule (recon/problem/lambda_auto.hpp), relative to Q(0) times the image scale.
  std::optional<double> lambda;
  // From the data's noise: l2 by the risk estimate, a sparse prior by the
  // noise rule; `lambda` (or 0.03) where the scan gives no noise estimate.
  bool lambda_auto = false;
  int iters = 100;       // CG iterations, or ADMM iterations for a sparse prior
  double tol = 1e-6;     // CG stops when ||r|| / ||A^H y|| falls below
  bool precondition = true;  // the circulant preconditioner (single-coil and field models)
  // ADMM's penalty, relative to Q(0), and CG steps per x-update: 0.3 and 10
  // took SENSE + TV from +0.80 to +1.33 dB over SENSE + l2 at 30 iterations
  // (0.1 and 5 before; docs/accuracy.md, "ADMM's settings").
  double admm_rho = 0.3;
  int admm_inner = 10;

  // ---- what else runs and where things go
  bool gridding = true;         // the gridding baselines
  std::string dcf = "auto";     // their density compensation: auto | radial | pipe-menon
  bool keep_fhd = false;        // keep A^H y in the result (validate's accuracy checks)
  std::string q_cache_dir;      // "" = Q is not cached on disk
  std::shared_ptr<const Truth> truth;  // when known: reference image, PSNR, band-limited ceiling
  StageObserver observer;
};

// OptionError naming the first field whose value cannot work, before any work.
void validate(const ReconOptions& opt);

// The relative lambda the options ask for where no rule applies (0.03).
double fixed_lambda(const ReconOptions& opt);
// Whether the solver will want the data's noise: lambda_auto, or a sparse
// prior without a number (its noise rule).
bool wants_noise_estimate(const ReconOptions& opt);
// Whether `coils` coils make one SENSE image (coil_combine "sense", several coils).
bool uses_sense(std::size_t coils, const ReconOptions& opt);
// Whether SENSE's maps come from the calibration region: every way but given
// maps without a crop.
bool maps_from_calibration(const ReconOptions& opt);

// Options a run ignores, among those `given` (their fields' names: "maps",
// "nufft_tol", ...), one group per reason: the coil options with one coil,
// SENSE's maps options with coil_combine rss, ADMM's with l2, nufft_tol with
// the exact gather, trig and kernel with the NUFFT. coils = 0: the scans are
// not known yet (a batch), so only the rules that hold for every scan. Each
// front end names the fields its own way (the CLI's flags, Python's keywords)
// and warns once per group.
struct IgnoredOptions {
  std::vector<std::string> fields;
  std::string why;
};
std::vector<IgnoredOptions> ignored_options(const std::set<std::string>& given, std::size_t coils,
                                            const std::string& coil_combine, const std::string& reg, bool nufft);

}  // namespace fhd
