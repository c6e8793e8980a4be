#pragma once
// What a reconstruction returns: every method's image and scores, the stage
// times, the solver's record (docs/architecture.md, "Evaluation").
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "recon/plan/plan.hpp"
#include "recon/solvers/cg.hpp"

namespace fhd {

struct StageTime {
  std::string name;
  double seconds = 0;
  std::string note;  // "cached", "30 iterations", ...
};

struct MethodResult {
  std::string name;           // iterative, gridding-trilinear, gridding-kb, band-limited ceiling
  std::vector<cfloat> image;  // grid.voxels(), x fastest
  double seconds = 0;         // the stages this method needed
  std::optional<double> psnr, nrmse;        // against the phantom, when known
  std::optional<double> psnr_band_limited;  // against the band-limited ceiling image, when computed
  int iters = 0;              // iterations it took (CG, or ADMM); 0 for direct methods
  std::vector<double> psnr_per_iter;  // [i] after iteration i + 1, when the phantom is known
};

// How the iterative method handled off-resonance (report.json's "field").
struct FieldReport {
  std::string method = "none";    // none | exact | segmented
  int segments = 0;               // segmented: L
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
  std::vector<cfloat> fhd;       // the right-hand side the solver used, with ReconOptions::keep_fhd
  CgResult cg;
  // PSNR (dB) of the iterate against the phantom: [0] for the zero start,
  // [i] after iteration i. Empty when no phantom is known.
  std::vector<double> cg_psnr;
  bool q_cached = false;
  FieldReport field;
  PlanCounts plan;        // the plan's once-per-trajectory work (uploads, Q, DCF)
  // The iterative method's wall time on the host, from its first stage's
  // start to its image on the host (its stages' times add up to it).
  double method_wall = 0;
  double scoring_seconds = 0;  // PSNR per iteration and its setup, inside the method but not its work
  double lambda_abs = 0;  // lambda actually used
  double lambda_rel = 0;  // the same relative to Q(0) (tv and wavelet: to Q(0) times the image scale)
  std::string lambda_rule;  // how it was chosen: "fixed", or the auto rule and its noise estimate
};

}  // namespace fhd
