#include "recon/pipeline/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#include <omp.h>
#include <sys/resource.h>

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "recon/solvers/tv.hpp"
#include "recon/gridding/dcf.hpp"
#include "recon/field/field.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/problem/lambda_auto.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/eval/metrics.hpp"
#include "recon/plan/precond.hpp"
#include "recon/eval/reference.hpp"
#include "recon/coils/sense.hpp"

namespace fhd {
namespace {

const int kTvStartIters = 10;  // preconditioned CG steps on the unregularized problem before ADMM

// A method without iterations (gridding, the ceiling), not yet scored: score() fills the metrics.
MethodResult direct_method(std::string name, std::vector<cfloat> image, double seconds) {
  MethodResult m;
  m.name = std::move(name);
  m.image = std::move(image);
  m.seconds = seconds;
  return m;
}

// Runs one stage: tells the observer, times it, records it.
class StageRunner {
 public:
  StageRunner(const StageObserver& obs, std::vector<StageTime>& log) : obs_(obs), log_(log) {}

  template <class F>
  double run(const std::string& name, F&& work, const std::string& note = "") {
    if (obs_.begin) obs_.begin(name);
    auto t0 = std::chrono::steady_clock::now();
    work();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (obs_.end) obs_.end(name, s);
    log_.push_back({name, s, note});
    return s;
  }
  StageTime& last() { return log_.back(); }
  // A stage timed by the caller (work that may or may not have run).
  void record(const std::string& name, double seconds, const std::string& note) {
    if (obs_.begin) obs_.begin(name);
    if (obs_.end) obs_.end(name, seconds);
    log_.push_back({name, seconds, note});
  }

 private:
  const StageObserver& obs_;
  std::vector<StageTime>& log_;
};

FhdOptions with_progress(FhdOptions o, const StageObserver& obs) {
  if (obs.progress) o.progress = obs.progress;
  return o;
}

// Q from the plan: a stage when computed or read from the disk cache, none
// when an earlier coil already brought it into memory.
void q_stage(Plan& plan, StageRunner& stages, bool& cached) {
  const PlanCounts before = plan.counts();
  double s = 0;
  auto t0 = std::chrono::steady_clock::now();
  plan.q_resident();
  s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const PlanCounts& after = plan.counts();
  if (after.q_loaded > before.q_loaded) {
    cached = true;
    stages.record("Q", s, "cached");
  } else if (after.q_computed > before.q_computed) {
    stages.record("Q", s, "");
  }
}

double sum_stages(const std::vector<StageTime>& log, std::size_t from) {
  double s = 0;
  for (std::size_t i = from; i < log.size(); ++i) s += log[i].seconds;
  return s;
}

// PSNR of each iterate against the phantom (when known), timed apart so the
// method's time is the solver's alone. The reference lives where the iterates
// do and the error is summed there: only a scalar crosses per iteration (the
// 128^3 record took 1.3 s of downloads and host sums on the GPU before).
class PsnrRecorder {
 public:
  PsnrRecorder(VectorOps& vec, const std::vector<float>& reference, std::vector<double>& out)
      : vec_(vec), n_(reference.size()), out_(out) {
    if (reference.empty()) return;
    std::vector<cfloat> ref(reference.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      ref[i] = cfloat(reference[i], 0.f);
      peak_ = std::max(peak_, std::fabs(double(reference[i])));
    }
    ref_ = vec.upload(ref);
  }
  void operator()(int, const BackendVector& x) {
    if (!ref_) return;
    auto t0 = std::chrono::steady_clock::now();
    out_.push_back(psnr_from_sse(vec_.magnitude_sse(x, *ref_), n_, peak_));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double seconds = 0;

 private:
  VectorOps& vec_;
  std::size_t n_;
  double peak_ = 0;
  VecPtr ref_;
  std::vector<double>& out_;
};

// 99th percentile of |x|: the image scale TV's lambda is relative to (robust to a few bright voxels).
double image_scale(const std::vector<cfloat>& x) {
  std::vector<float> mag(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) mag[i] = std::abs(x[i]);
  if (mag.empty()) return 0.0;
  auto k = mag.begin() + std::ptrdiff_t(0.99 * double(mag.size() - 1));
  std::nth_element(mag.begin(), k, mag.end());
  return *k;
}

// The roughness weight of the l2 CG's preconditioner: the problem's lambda,
// raised to kPrecondDamping Q(0) on undersampled data (fewer samples than
// voxels), where the preconditioner's boost of the sparsely sampled high
// frequencies amplified aliasing in the early iterates. With more samples
// than voxels there is none to damp, and damping only slowed CG (2D, 128^2 from
// 52,480 radial samples: 25.04 dB after 6 iterations undamped, after 20 damped).
double preconditioner_weight(Plan& plan, double lambda_abs) {
  const bool undersampled = plan.trajectory().size() < plan.grid().voxels();
  return undersampled ? std::max(lambda_abs, kPrecondDamping * plan.q0()) : lambda_abs;
}

// (Preconditioned) CG on the l2 problem from x's start; returns its result.
// op is the normal operator (the plan's Toeplitz one, or SENSE's over coils);
// the preconditioner is the plan's circulant one, damped (recon/plan/precond.hpp).
CgResult solve_l2(Plan& plan, NormalOperator& op, double lambda_abs, const BackendVector& rhs, BackendVector& x,
                  const ReconOptions& opt, int iters, PsnrRecorder* rec, bool precondition = true) {
  CgOptions cg;
  cg.iters = iters;
  cg.tol = opt.tol;
  cg.precond = opt.precondition && precondition ? &plan.preconditioner(preconditioner_weight(plan, lambda_abs)) : nullptr;
  spdlog::debug("CG: operator and preconditioner ready");
  if (opt.observer.progress)
    cg.on_iter = [&](int it, double) { opt.observer.progress(double(it) / std::max(1, iters)); };
  if (rec) cg.on_iterate = std::ref(*rec);
  CgResult r = conjugate_gradient(plan.backend().vec(), op, rhs, x, cg);
  spdlog::debug("CG: {} iterations done", r.iters);
  return r;
}

// TV's relative lambda (to Q(0) times the image scale): the given value, or
// with lambda_auto the noise rule (recon/solvers/tv.hpp), the given value (TV's
// default) without a noise estimate.
void choose_tv_lambda(double q0, double scale, const std::optional<NoiseEstimate>& noise, const ReconOptions& opt,
                      ReconResult& res) {
  res.lambda_rel = opt.lambda;
  res.lambda_rule = "fixed";
  if (opt.lambda_auto && !noise) {
    res.lambda_rule = "auto: no noise estimate (no noise samples, no oversampled readouts), fixed";
  } else if (opt.lambda_auto) {
    res.lambda_rel = tv_noise_lambda(noise->variance, q0, scale);
    char buf[200];
    std::snprintf(buf, sizeof buf, "auto: TV noise rule max(%g, %g * %.4g), noise variance %.4g from %s", kTvLambda,
                  kTvNoiseFactor, tv_noise_ratio(noise->variance, q0, scale), noise->variance, noise->source.c_str());
    res.lambda_rule = buf;
  }
  res.lambda_abs = res.lambda_rel * q0 * scale;
}

// TV by ADMM, started from a few preconditioned CG steps on the l2 problem,
// whose image also sets the scale TV's lambda is relative to.
int solve_tv(Plan& plan, const BackendVector& rhs, BackendVector& x, const std::optional<NoiseEstimate>& noise,
             const ReconOptions& opt, PsnrRecorder& rec, ReconResult& res) {
  res.cg = solve_l2(plan, plan.normal(0.0), 0.0, rhs, x, opt, kTvStartIters, nullptr);
  const double q0 = plan.q0();
  choose_tv_lambda(q0, image_scale(plan.backend().vec().download(x)), noise, opt, res);
  TvOptions tv;
  tv.lambda = res.lambda_abs;
  tv.rho = opt.tv_rho * q0;
  tv.outer = opt.iters;
  tv.inner = opt.tv_inner;
  tv.precondition = opt.precondition;
  tv.on_iterate = std::ref(rec);
  if (opt.observer.progress) tv.on_iter = [&](int it) { opt.observer.progress(double(it) / std::max(1, opt.iters)); };
  return admm_tv(plan, rhs, x, tv).outer;
}

// The l2 problem's absolute lambda. Fixed: opt.lambda relative to Q(0) = sum
// |Phi|^2, the diagonal, hence mean eigenvalue, of FhF, so one lambda means
// the same for any sample count. Auto: the risk-minimizing one for this
// right-hand side and noise (recon/problem/lambda_auto.hpp), the fixed one without a
// noise estimate. TV chooses its own after its start (choose_tv_lambda).
void choose_lambda(Plan& plan, const BackendVector& fhd, const std::optional<NoiseEstimate>& noise,
                   const ReconOptions& opt, ReconResult& res) {
  res.lambda_abs = opt.lambda * plan.q0();
  res.lambda_rel = opt.lambda;
  res.lambda_rule = "fixed";
  if (!opt.lambda_auto || opt.reg == "tv") return;
  if (!noise) {
    res.lambda_rule = "auto: no noise estimate (no noise samples, no oversampled readouts), fixed";
    return;
  }
  StageRunner stages(opt.observer, res.stages);
  stages.run("lambda (auto)", [&] {
    const std::vector<double> t = plan.backend().circulant_spectrum(plan.q_resident(), plan.grid());
    res.lambda_abs = sure_lambda(t, plan.backend().vec().download(fhd), plan.grid(), noise->variance);
  });
  res.lambda_rel = res.lambda_abs / plan.q0();
  char buf[160];
  std::snprintf(buf, sizeof buf, "auto: risk estimate, noise variance %.4g from %s", noise->variance,
                noise->source.c_str());
  res.lambda_rule = buf;
}

// The solve and its records, after the right-hand side (FhD, or SENSE's E^H y)
// and Q: `sense` maps make it SENSE's CG over coils, else the plan's l2 or TV.
void solve_stage(Plan& plan, VecPtr rhs, std::vector<VecPtr>* sense, NormalOperator* field,
                 const std::optional<NoiseEstimate>& noise, const ReconOptions& opt, ReconResult& res,
                 std::size_t first) {
  if (!field) choose_lambda(plan, *rhs, noise, opt, res);  // the field path chose it before its operator
  StageRunner stages(opt.observer, res.stages);
  VectorOps& vec = plan.backend().vec();
  MethodResult m;
  m.name = "iterative";
  PsnrRecorder rec(vec, res.reference, m.psnr_per_iter);
  const bool tv = opt.reg == "tv";
  // The image's host memory is made (and its pages touched) by another thread
  // while a GPU solves: a fresh 128^3 complex vector took 10 ms of page faults
  // on the GPU machine, after the last iteration. On the CPU it is made after.
  std::future<std::vector<cfloat>> image_memory =
      std::async(plan.backend().is_gpu() ? std::launch::async : std::launch::deferred,
                 [n = rhs->size()] { return std::vector<cfloat>(n); });
  stages.run(tv ? "ADMM-TV" : sense ? "SENSE CG" : "CG", [&] {
    VecPtr x = vec.zeros(rhs->size());
    if (tv) {
      m.iters = solve_tv(plan, *rhs, *x, noise, opt, rec, res);
    } else if (sense) {
      // Plain CG: the circulant preconditioner of T knows nothing of the maps,
      // and with noisy data it reaches the noise-amplifying least-squares
      // solution sooner (64^3, 8 coils, 1% noise, 30 iterations: 23.73 dB plain,
      // 22.11 preconditioned; docs/coils.md).
      SenseNormal op(plan, std::move(*sense), res.lambda_abs);
      res.cg = solve_l2(plan, op, res.lambda_abs, *rhs, *x, opt, opt.iters, &rec, false);
      m.iters = res.cg.iters;
    } else {
      NormalOperator& op = field ? *field : plan.normal(res.lambda_abs);
      res.cg = solve_l2(plan, op, res.lambda_abs, *rhs, *x, opt, opt.iters, &rec);
      m.iters = res.cg.iters;
    }
    m.image = image_memory.get();
    vec.download_into(*x, m.image);
  });
  stages.last().seconds -= rec.seconds;
  stages.last().note = std::to_string(m.iters) + (tv ? " ADMM iterations" : " iterations");
  if (!res.reference.empty()) {  // ReconResult::cg_psnr: the zero start first, then the record
    res.cg_psnr = {psnr(std::vector<cfloat>(rhs->size()), res.reference)};
    res.cg_psnr.insert(res.cg_psnr.end(), m.psnr_per_iter.begin(), m.psnr_per_iter.end());
  }
  m.seconds = sum_stages(res.stages, first);
  res.methods.push_back(std::move(m));
  if (opt.keep_fhd) res.fhd = vec.download(*rhs);
}

// SENSE's noise: the coils' mean variance (after prewhitening all are about 1).
std::optional<NoiseEstimate> mean_noise(const std::vector<const Scan*>& coils) {
  NoiseEstimate sum;
  for (const Scan* c : coils) {
    std::optional<NoiseEstimate> e = estimate_noise(c->traj, c->data, c->noise);
    if (!e) return std::nullopt;
    sum.variance += e->variance / double(coils.size());
    sum.source = e->source;
  }
  return sum;
}

// The noise estimate lambda_auto needs (host work over the readouts or the
// noise samples), timed as a stage of the method; nothing without auto.
template <class F>
std::optional<NoiseEstimate> noise_stage(StageRunner& stages, const ReconOptions& opt, F&& estimate) {
  std::optional<NoiseEstimate> noise;
  if (opt.lambda_auto) stages.run("noise estimate", [&] { noise = estimate(); });
  return noise;
}

// The iterative method with off-resonance compensation: the right-hand side
// A^H d of the exact or time-segmented model, then CG on its normal operator
// with the plan's circulant preconditioner (of T, the field-free operator:
// the field's phases have unit modulus, so T's spectrum stays a fair model).
void field_iterative(Plan& plan, const Scan& scan, const ReconOptions& opt, ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  const std::size_t first = res.stages.size();
  const std::optional<NoiseEstimate> noise =
      noise_stage(stages, opt, [&] { return estimate_noise(scan.traj, scan.data, scan.noise); });
  const FieldData& f = scan.field;
  const bool exact = res.field.method == "exact";
  TimeSegments seg;
  if (!exact) {
    stages.run("time segments", [&] { seg = time_segments(f, opt.segments > 0 ? opt.segments : choose_segments(f)); });
    res.field.segments = int(seg.tau.size());
    res.field.interpolator_error = seg.rms_error;
    stages.last().note = std::to_string(seg.tau.size()) + " segments";
  }
  VecPtr rhs;
  stages.run("cmpFhD", [&] {
    rhs = plan.backend().vec().upload(exact ? field_exact_adjoint(plan, f, scan.data)
                                            : segmented_adjoint(plan, f, seg, scan.data));
  });
  stages.last().note = exact ? "exact field model" : std::to_string(seg.tau.size()) + " segments";
  q_stage(plan, stages, res.q_cached);
  choose_lambda(plan, *rhs, noise, opt, res);
  std::unique_ptr<NormalOperator> op;
  if (exact) {
    op = std::make_unique<FieldExactNormal>(plan, f, res.lambda_abs);
  } else {
    stages.run("Q (segments)", [&] { op = std::make_unique<SegmentedNormal>(plan, f, seg, res.lambda_abs); });
    stages.last().note = std::to_string(seg.tau.size() * seg.tau.size()) + " Q's";
  }
  solve_stage(plan, std::move(rhs), nullptr, op.get(), noise, opt, res, first);
}

void iterative(Plan& plan, const Scan& coil, const ReconOptions& opt, ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  std::size_t first = res.stages.size();
  const std::optional<NoiseEstimate> noise =
      noise_stage(stages, opt, [&] { return estimate_noise(coil.traj, coil.data, coil.noise); });
  VecPtr mu, fhd;
  stages.run("cmpMu", [&] { mu = plan.mu(coil.data); });
  stages.run("cmpFhD", [&] { fhd = plan.fhd_of_mu(*mu); });
  mu.reset();
  q_stage(plan, stages, res.q_cached);
  solve_stage(plan, std::move(fhd), nullptr, nullptr, noise, opt, res, first);
}

// Sensitivities from the coils' own calibration region (docs/coils.md), as
// the backend's vectors (the GPU makes the lowres maps where SENSE uses them).
std::vector<VecPtr> estimate_maps(Plan& plan, const std::vector<const Scan*>& coils, const ReconOptions& opt) {
  if (opt.maps == "given" && opt.given_maps->size() != coils.size())
    throw InputError("--maps", "given maps", std::to_string(opt.given_maps->size()),
                     "must number the coils, " + std::to_string(coils.size()));
  if (opt.maps == "given" && opt.maps_crop <= 0.0) return upload_maps(plan, *opt.given_maps);
  const ImageGrid& grid = coils[0]->grid;
  const Calibration cal = calibration_from_scans(plan.backend(), coils, opt.calibration, opt.dcf);
  spdlog::debug("coil maps: calibration region gridded");
  if (opt.maps == "lowres") return plan.backend().lowres_maps(cal, grid, opt.maps_crop);
  // The lowres maps' support constraint, from the same data, on ESPIRiT's
  // maps (its eigenvalue crop keeps most of the background in 3D: 64^3,
  // 32,768 samples, 23.39 dB without, 25.53 with) and on the true maps (SENSE
  // with them and with the estimated ones then differ by the maps alone).
  const std::vector<bool> keep = lowres_support(cal, grid, opt.maps_crop);
  CoilData maps = opt.maps == "espirit" ? maps_espirit(cal, grid, {}, keep) : *opt.given_maps;
  for (std::vector<cfloat>& m : maps)
    for (std::size_t v = 0; v < m.size() && v < keep.size(); ++v)
      if (!keep[v]) m[v] = 0;
  return upload_maps(plan, maps);
}

// SENSE: one image from every coil (recon/coils/sense.hpp) with maps estimated from
// the data; E^H y runs each coil's cmpMu and cmpFhD (timed as one stage).
void sense_iterative(Plan& plan, const std::vector<const Scan*>& coils, const ReconOptions& opt, ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  std::size_t first = res.stages.size();
  const std::optional<NoiseEstimate> noise = noise_stage(stages, opt, [&] { return mean_noise(coils); });
  std::vector<VecPtr> resident;  // the maps, on the backend once for E^H y and CG
  stages.run("coil maps", [&] { resident = estimate_maps(plan, coils, opt); });
  std::vector<const std::vector<cfloat>*> data;
  for (const Scan* c : coils) data.push_back(&c->data);
  VecPtr rhs;
  stages.run("cmpFhD", [&] { rhs = sense_adjoint(plan, resident, data); });
  stages.last().note = std::to_string(coils.size()) + " coils, E^H y";
  q_stage(plan, stages, res.q_cached);
  solve_stage(plan, std::move(rhs), &resident, nullptr, noise, opt, res, first);
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

void gridding(Plan& plan, const std::vector<cfloat>& data, const ReconOptions& opt, double dcf_s,
              ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  struct Variant {
    const char* name;
    GridKernel kernel;
  };
  GridKernel tri;
  tri.type = GridKernel::Type::Trilinear;
  tri.width = 2.0;
  for (const Variant& v : {Variant{"gridding-trilinear", tri}, Variant{"gridding-kb", GridKernel{}}}) {
    std::vector<cfloat> image;
    double s = stages.run(v.name, [&] { image = plan.grid(data, v.kernel); });
    res.methods.push_back(direct_method(v.name, std::move(image), s + dcf_s));
  }
}

TimedImage timed_ceiling(const KSpaceFn& kspace, const ImageGrid& grid) {
  const auto t0 = std::chrono::steady_clock::now();
  TimedImage t{band_limited_image(kspace, grid)};
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

// The band-limited ceiling is host work that no other stage needs. Beside a
// GPU's stages it runs on a host thread from the start (0.1 s at 128^3 that
// left the wall time); on the CPU it waits for the end, so it takes no cores
// from the CPU's stages. Its stage time is its own duration either way.
// Beside the GPU its OpenMP team leaves two cores to the thread that drives
// the GPU: with every core taken, that thread's wake-ups after each CG
// synchronization came late (H100, 30 iterations: CG 31-47 ms over six runs,
// its two slow runs those where the ceiling ran long; 32-33 ms with two cores left).
std::future<TimedImage> start_ceiling(const ReconOptions& opt, const ImageGrid& grid, bool beside) {
  if (!beside || !opt.truth || !opt.truth->kspace) return {};
  return std::async(std::launch::async, [kspace = opt.truth->kspace, grid] {
    omp_set_num_threads(std::max(1, omp_get_max_threads() - 2));  // this thread's teams only
    // Linux's nice value is per thread, and the team's threads inherit it:
    // where cores are shared (hyperthreads) the GPU's thread still wins them.
    setpriority(PRIO_PROCESS, 0, 19);
    return timed_ceiling(kspace, grid);
  });
}

void ceiling(std::future<TimedImage>& started, const ReconOptions& opt, const ImageGrid& grid, ReconResult& res) {
  if (!opt.truth || !opt.truth->kspace) return;
  StageRunner stages(opt.observer, res.stages);
  TimedImage t;
  if (started.valid()) {
    t = started.get();
    stages.record("band-limited ceiling", t.seconds, "");
  } else {
    t.seconds = stages.run("band-limited ceiling", [&] { t.image = band_limited_image(opt.truth->kspace, grid); });
  }
  res.methods.push_back(direct_method("band-limited ceiling", std::move(t.image), t.seconds));
}

void check_same_trajectory(const Scan& a, const Scan& b) {
  if (!(a.grid == b.grid) || a.traj.kx != b.traj.kx || a.traj.ky != b.traj.ky || a.traj.kz != b.traj.kz ||
      a.phi != b.phi)
    throw InputError("coils: the coils of one scan must share grid, trajectory and Phi");
}

// The method --field-comp resolves to for this scan, and the field's range.
FieldReport field_report(const Scan& s, const ReconOptions& opt) {
  FieldReport r;
  r.has_map = !s.field.hz.empty();
  if (r.has_map) {
    const auto [lo, hi] = std::minmax_element(s.field.hz.begin(), s.field.hz.end());
    r.min_hz = *lo;
    r.max_hz = *hi;
    const auto [t0, t1] = std::minmax_element(s.field.times.begin(), s.field.times.end());
    r.readout_s = double(*t1) - double(*t0);
  }
  r.method = opt.field_comp == "auto" ? (r.has_map ? "segmented" : "none") : opt.field_comp;
  return r;
}

// One coil through the plan: the iterative method, then the gridding baselines.
ReconResult reconstruct_one(Plan& plan, const Scan& coil, const ReconOptions& opt, double dcf_s,
                            const std::vector<float>& reference) {
  ReconResult r;
  r.grid = plan.grid();
  r.reference = reference;
  const std::vector<cfloat>& data = coil.data;
  r.field = field_report(coil, opt);
  if (r.field.method == "none")
    iterative(plan, coil, opt, r);
  else
    field_iterative(plan, coil, opt, r);
  if (opt.gridding) gridding(plan, data, opt, dcf_s, r);
  return r;
}

// acc += |r|^2 per method (acc's images hold the running sum in their real
// part), and the stage times by stage name.
void add_coil(ReconResult& acc, const ReconResult& r) {
  for (std::size_t i = 0; i < acc.methods.size() && i < r.methods.size(); ++i) {
    std::vector<cfloat>& a = acc.methods[i].image;
    const std::vector<cfloat>& b = r.methods[i].image;
    for (std::size_t v = 0; v < a.size(); ++v) a[v] += std::norm(b[v]);
    acc.methods[i].seconds += r.methods[i].seconds;
  }
  for (const StageTime& t : r.stages)
    for (StageTime& a : acc.stages)
      if (a.name == t.name) {
        a.seconds += t.seconds;
        break;
      }
}

void root_sum_of_squares(ReconResult& acc, std::size_t coils) {
  for (MethodResult& m : acc.methods)
    for (cfloat& v : m.image) v = std::sqrt(v.real());
  const std::string n = std::to_string(coils) + " coils";
  for (StageTime& s : acc.stages) s.note = s.note.empty() ? n : s.note + ", " + n;
  acc.cg_psnr.clear();  // per-coil iterates are not the combined image's
  for (MethodResult& m : acc.methods) m.psnr_per_iter.clear();
}

// one(c) for every coil, the images combined by root sum of squares (one coil: as it is).
template <class F>
ReconResult combine_rss(std::size_t coils, F&& one) {
  ReconResult acc = one(0);
  if (coils == 1) return acc;
  for (auto& m : acc.methods)
    for (cfloat& v : m.image) v = std::norm(v);
  for (std::size_t c = 1; c < coils; ++c) add_coil(acc, one(c));
  root_sum_of_squares(acc, coils);
  return acc;
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

void score(ReconResult& res) {
  if (res.reference.empty()) return;
  const MethodResult* band_limited = nullptr;
  for (MethodResult& m : res.methods) {
    m.psnr = psnr(m.image, res.reference);
    m.nrmse = nrmse(m.image, res.reference);
    if (m.name == "band-limited ceiling") band_limited = &m;
  }
  if (!band_limited) return;
  // The band-limited measure: how far each method is from the best image the
  // sampled frequencies allow (free of the Gibbs ringing every method shares).
  const std::vector<float> ceiling = magnitude(band_limited->image);
  for (MethodResult& m : res.methods)
    if (&m != band_limited) m.psnr_band_limited = psnr(m.image, ceiling);
}

namespace {

void check_field_options(const Scan& s, const ReconOptions& opt) {
  const std::string& m = opt.field_comp;
  if (m != "auto" && m != "none" && m != "exact" && m != "segmented")
    throw InputError("--field-comp", "value", m, "must be none, exact or segmented");
  if (opt.segments < 0 || opt.segments > 256)
    throw InputError("--segments", "value", std::to_string(opt.segments), "must be in 1..256 (0 = the rule)");
  if ((m == "exact" || m == "segmented") && s.field.hz.empty())
    throw InputError("--field-comp", "value", m,
                     "the scan has no field map (synthesize with --off-resonance, or give --field-map FILE)");
  if (m != "none" && !s.field.hz.empty()) check_field(s.field, s.grid, s.traj.size(), "field map");
  if (opt.segments > 0 && m != "segmented" && !(m == "auto" && !s.field.hz.empty()))
    throw InputError("--segments", "value", std::to_string(opt.segments), "needs --field-comp segmented");
  if (m != "none" && !s.field.hz.empty() && opt.reg == "tv")
    throw InputError("--reg tv with a field map: field compensation runs with --reg l2 (or give --field-comp none)");
}

void check_coils(const std::vector<const Scan*>& coils, const ReconOptions& opt) {
  if (coils.empty()) throw InputError("coils: no coil data");
  check_field_options(*coils[0], opt);
  if (coils.size() > 1 && !coils[0]->field.hz.empty() && opt.field_comp != "none")
    throw InputError("--field-comp", "coils", std::to_string(coils.size()),
                     "field compensation runs on single-coil scans (give --field-comp none)");
  for (const Scan* c : coils) check_same_trajectory(*coils[0], *c);
  if (opt.coil_combine != "rss" && opt.coil_combine != "sense")
    throw InputError("--coil-combine", "value", opt.coil_combine, "must be rss or sense");
  if (opt.maps != "lowres" && opt.maps != "espirit" && !(opt.maps == "given" && opt.given_maps))
    throw InputError("--maps", "value", opt.maps, "must be lowres or espirit");
  if (coils.size() > 1 && opt.coil_combine == "sense" && opt.reg == "tv")
    throw InputError("--reg tv with --coil-combine sense: TV runs per coil only (use --coil-combine rss)");
}

}  // namespace

HostWork prepare_host_work(const std::vector<const Scan*>& coils, const ReconOptions& opt, bool beside_gpu) {
  check_coils(coils, opt);
  const Scan& s0 = *coils[0];
  HostWork w;
  w.ceiling = start_ceiling(opt, s0.grid, beside_gpu);
  // The reference first: the iterative method records its PSNR per iteration against it.
  if (opt.truth && opt.truth->image) w.reference = opt.truth->image(s0.grid);
  // Before the expensive stages, so a --dcf the trajectory cannot take fails first.
  if (opt.gridding && s0.dcf.empty()) {
    const PlanOptions p = plan_options(s0, opt);
    const auto t0 = std::chrono::steady_clock::now();
    w.dcf = density_weights(s0.traj, s0.grid, p.dcf, p.trajectory_kind);
    w.dcf_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  w.done = true;
  return w;
}

ReconResult reconstruct_coils(Backend& be, const std::vector<const Scan*>& coils, const ReconOptions& opt) {
  return reconstruct_coils(be, coils, opt, HostWork{});
}

ReconResult reconstruct_coils(Backend& be, const std::vector<const Scan*>& coils, const ReconOptions& opt,
                              HostWork host) {
  if (host.done)
    check_coils(coils, opt);
  else
    host = prepare_host_work(coils, opt);
  const Scan& s0 = *coils[0];
  std::future<TimedImage> ceiling_image =
      host.ceiling.valid() ? std::move(host.ceiling) : start_ceiling(opt, s0.grid, be.is_gpu());
  std::unique_ptr<Plan> made = be.make_plan(s0.traj, s0.grid, plan_options(s0, opt));
  Plan& plan = *made;
  std::vector<float> reference = std::move(host.reference);
  ReconResult density;
  const double dcf_s = opt.gridding ? density_stage(plan, opt, host, density) : 0.0;
  const bool sense = coils.size() > 1 && opt.coil_combine == "sense";
  ReconResult acc = combine_rss(coils.size(), [&](std::size_t c) {
    const double s = c == 0 ? dcf_s : 0.0;
    if (!sense) return reconstruct_one(plan, *coils[c], opt, s, coils.size() == 1 ? reference : std::vector<float>{});
    ReconResult g;  // SENSE: only the gridding baselines go coil by coil
    g.grid = s0.grid;
    if (opt.gridding) gridding(plan, coils[c]->data, opt, s, g);
    return g;
  });
  if (sense) {
    ReconResult r;
    r.grid = s0.grid;
    r.reference = reference;
    sense_iterative(plan, coils, opt, r);
    r.methods.insert(r.methods.end(), acc.methods.begin(), acc.methods.end());
    r.stages.insert(r.stages.end(), acc.stages.begin(), acc.stages.end());
    acc = std::move(r);
  }
  acc.grid = s0.grid;
  acc.stages.insert(acc.stages.begin(), density.stages.begin(), density.stages.end());
  acc.reference = std::move(reference);
  acc.plan = plan.counts();
  ceiling(ceiling_image, opt, s0.grid, acc);
  score(acc);
  return acc;
}

ReconResult run_reconstruction(Backend& be, const Scan& scan, const ReconOptions& opt) {
  return reconstruct_coils(be, {&scan}, opt);
}

}  // namespace fhd
