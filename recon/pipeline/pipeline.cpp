#include "recon/pipeline/pipeline.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include "core/clock.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/gridding/dcf.hpp"
#include "recon/problem/problem.hpp"
#include "recon/problem/solve.hpp"

namespace fhd {
namespace {

FhdOptions with_progress(FhdOptions o, const StageObserver& obs) {
  if (obs.progress) o.progress = obs.progress;
  return o;
}

// The gridding baselines' density weights into the plan: the file's, or
// those prepare_host_work computed (timed there, reported here).
double density_stage(Plan& plan, const ReconOptions& opt, HostWork& host, ReconResult& res) {
  if (host.dcf.empty()) {
    plan.dcf();
    return 0.0;
  }
  plan.use_dcf(std::move(host.dcf));
  StageRunner(opt.observer, res.stages).record("density compensation", host.dcf_seconds, "");
  return host.dcf_seconds;
}

// Its stages end with the image on the host: the host's clock is the device's.
void gridding(Plan& plan, const std::vector<cfloat>& data, const ReconOptions& opt, double dcf_s, ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  GridKernel tri;
  tri.type = GridKernel::Type::Trilinear;
  tri.width = 2.0;
  const std::pair<const char*, GridKernel> variants[] = {{"gridding-trilinear", tri}, {"gridding-kb", GridKernel{}}};
  for (const auto& [name, kernel] : variants) {
    std::vector<cfloat> image;
    const double s = stages.run(name, [&, k = kernel] { image = plan.grid(data, k); });
    res.methods.push_back(direct_method(name, std::move(image), s + dcf_s));
  }
}

// The iterative method for these coils (one, or all of them with SENSE).
void iterative(Plan& plan, const std::vector<const Scan*>& coils, bool sense, const ReconOptions& opt,
               ReconResult& res) {
  const std::size_t first = res.stages.size();
  StageClock clock(plan.device());
  const auto t0 = std::chrono::steady_clock::now();
  Problem p = build_problem(plan, coils, sense, opt, res, clock);
  solve(plan, p, opt, res, clock);
  clock.resolve();
  res.method_wall = seconds_since(t0) - res.scoring_seconds;
  res.methods.back().seconds = sum_stages(res.stages, first);
}

// One coil through the plan: the iterative method, then the gridding baselines.
ReconResult reconstruct_one(Plan& plan, const Scan& coil, const ReconOptions& opt, double dcf_s,
                            const std::vector<float>& reference) {
  ReconResult r;
  r.grid = plan.grid();
  r.reference = reference;
  iterative(plan, {&coil}, false, opt, r);
  if (opt.gridding) gridding(plan, coil.data, opt, dcf_s, r);
  return r;
}

}  // namespace

PlanOptions plan_options(const Scan& scan, const ReconOptions& opt) {
  PlanOptions p;
  p.fhd = with_progress(opt.fhd, opt.observer);
  p.phi = scan.phi;
  p.q_cache_dir = opt.q_cache_dir;
  p.dcf = opt.dcf;
  auto kind = scan.provenance.find("trajectory");
  if (kind != scan.provenance.end()) p.trajectory_kind = kind->second;
  p.dcf_given = scan.dcf;
  return p;
}

HostWork prepare_host_work(const std::vector<const Scan*>& coils, const ReconOptions& opt, bool beside_gpu) {
  check_scans(coils, opt);
  const Scan& s0 = *coils[0];
  HostWork w;
  w.ceiling = start_ceiling(opt, s0.grid, beside_gpu);
  // The reference first: the iterative method records its PSNR per iteration against it.
  if (opt.truth && opt.truth->image) w.reference = opt.truth->image(s0.grid);
  // Before the expensive stages, so a dcf the trajectory cannot take fails first.
  if (opt.gridding && s0.dcf.empty()) {
    const PlanOptions p = plan_options(s0, opt);
    const auto t0 = std::chrono::steady_clock::now();
    w.dcf = density_weights(s0.traj, s0.grid, p.dcf, p.trajectory_kind);
    w.dcf_seconds = seconds_since(t0);
  }
  // SENSE's maps from the calibration region: its samples chosen here, not in
  // the coil maps stage (20-26 ms of host work at 8 coils of 1M samples).
  if (uses_sense(coils.size(), opt) && maps_from_calibration(opt))
    w.calibration = std::make_shared<const CalibrationSamples>(calibration_samples(coils, opt.calibration, opt.dcf));
  w.checked = coils;
  w.done = true;
  return w;
}

ReconResult reconstruct_coils(Device& dev, const std::vector<const Scan*>& coils, const ReconOptions& opt,
                              HostWork host, const std::vector<Device*>& others) {
  if (host.done)  // the coils' trajectories compared again only for other coils than the host work's
    check_scans(coils, opt, host.checked != coils);
  else
    host = prepare_host_work(coils, opt);
  const Scan& s0 = *coils[0];
  std::future<TimedImage> ceiling_image =
      host.ceiling.valid() ? std::move(host.ceiling) : start_ceiling(opt, s0.grid, dev.is_gpu());
  const std::shared_ptr<Plan> plan = Plan::make(dev, s0.traj, s0.grid, plan_options(s0, opt), others);
  spdlog::debug("plan made");  // before the first stage: its time lies outside the stage table
  std::vector<float> reference = std::move(host.reference);
  ReconResult density;
  const double dcf_s = opt.gridding ? density_stage(*plan, opt, host, density) : 0.0;
  const bool sense = uses_sense(coils.size(), opt);
  ReconResult acc = combine_rss(coils.size(), [&](std::size_t c) {
    const double s = c == 0 ? dcf_s : 0.0;
    if (!sense) return reconstruct_one(*plan, *coils[c], opt, s, coils.size() == 1 ? reference : std::vector<float>{});
    ReconResult g;  // SENSE: only the gridding baselines go coil by coil
    g.grid = s0.grid;
    if (opt.gridding) gridding(*plan, coils[c]->data, opt, s, g);
    return g;
  });
  if (sense) {
    ReconResult r;
    r.grid = s0.grid;
    r.reference = reference;
    ReconOptions o = opt;
    if (host.calibration) o.calibration_samples = host.calibration;
    iterative(*plan, coils, true, o, r);
    r.methods.insert(r.methods.end(), acc.methods.begin(), acc.methods.end());
    r.stages.insert(r.stages.end(), acc.stages.begin(), acc.stages.end());
    acc = std::move(r);
  }
  acc.grid = s0.grid;
  acc.stages.insert(acc.stages.begin(), density.stages.begin(), density.stages.end());
  acc.reference = std::move(reference);
  acc.plan = plan->counts();
  ceiling(ceiling_image, opt, s0.grid, acc);
  score(acc);
  return acc;
}

ReconResult run_reconstruction(Device& dev, const Scan& scan, const ReconOptions& opt) {
  return reconstruct_coils(dev, {&scan}, opt);
}

}  // namespace fhd
