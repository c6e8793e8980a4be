#pragma once
// A reconstruction from end to end (docs/architecture.md): the host work that
// needs no device, one plan per scan, the problem built (recon/problem/problem.hpp)
// and solved (recon/problem/solve.hpp), the gridding baselines per coil, the
// band-limited ceiling, and the scores (recon/eval/evaluation.hpp). Coils share
// the plan: k is uploaded, Q and the DCF computed, once per scan. Front ends
// (the CLI, validate, batch, Python) call reconstruct_coils.
#include <future>
#include <memory>
#include <vector>

#include "recon/eval/evaluation.hpp"
#include "recon/eval/result.hpp"
#include "recon/plan/plan.hpp"
#include "recon/problem/options.hpp"

namespace fhd {

// The host work of a reconstruction that needs no device: the phantom's
// reference image (truth at the voxel centres) and the gridding baselines'
// density weights (unless the file carries its own). The CLI does it while
// the GPU's context is made (0.1 s of host work at 128^3 off the wall time).
// With beside_gpu the band-limited ceiling starts here too, on its host thread.
struct HostWork {
  bool done = false;
  std::vector<float> reference;
  std::vector<float> dcf;  // empty: no gridding, or the file's own weights
  double dcf_seconds = 0.0;
  std::future<TimedImage> ceiling;  // not valid: not started
  std::shared_ptr<const CalibrationSamples> calibration;  // SENSE's estimated maps: their samples
  std::vector<const Scan*> checked;  // the coils check_scans compared, in order
};
// Checks the coils and options first (check_scans).
HostWork prepare_host_work(const std::vector<const Scan*>& coils, const ReconOptions& opt, bool beside_gpu = false);

// The coils of one scan (same grid, trajectory and Phi; InputError
// otherwise), on `dev` (and the exact gather split across `others` too, when
// given): one plan; with several coils and coil_combine "sense" one image
// from all of them, else each coil reconstructed and the images combined by
// root sum of squares; scored once against opt.truth. Stage times add up over
// coils; "Q" and "density compensation" run once.
ReconResult reconstruct_coils(Device& dev, const std::vector<const Scan*>& coils, const ReconOptions& opt,
                              HostWork host = {}, const std::vector<Device*>& others = {});
// One scan (one coil).
ReconResult run_reconstruction(Device& dev, const Scan& scan, const ReconOptions& opt);

// The plan options a scan and these reconstruction options give.
PlanOptions plan_options(const Scan& scan, const ReconOptions& opt);

}  // namespace fhd
