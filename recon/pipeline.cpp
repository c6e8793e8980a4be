#include "recon/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "recon/dcf.hpp"
#include "recon/precond.hpp"
#include "recon/tv.hpp"
#include "recon/gridding.hpp"
#include "recon/metrics.hpp"
#include "recon/qcache.hpp"
#include "recon/reference.hpp"

namespace fhd {
namespace {

const int kTvStartIters = 10;  // preconditioned CG steps on the unregularized problem before ADMM

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

 private:
  const StageObserver& obs_;
  std::vector<StageTime>& log_;
};

std::vector<float> phi_weights(const std::vector<cfloat>& phi) {
  std::vector<float> w(phi.size());
  for (std::size_t i = 0; i < phi.size(); ++i) w[i] = std::norm(phi[i]);
  return w;
}

FhdOptions with_progress(FhdOptions o, const StageObserver& obs) {
  if (obs.progress) o.progress = obs.progress;
  return o;
}

// Q from the cache when present, else computed (and stored).
std::vector<cfloat> obtain_q(Backend& be, const Scan& scan, const ReconOptions& opt, StageRunner& stages,
                             bool& cached) {
  std::vector<float> w = phi_weights(scan.phi);
  std::vector<cfloat> q;
  std::string key;
  if (!opt.q_cache_dir.empty()) {
    key = q_key(scan.traj, w, scan.grid, opt.fhd.trig, opt.fhd.kernel);
    if (auto hit = load_q(opt.q_cache_dir, key)) {
      q = std::move(*hit);
      cached = true;
      stages.run("Q", [] {}, "cached");
      return q;
    }
  }
  stages.run("Q", [&] { q = be.q(w, scan.grid, with_progress(opt.fhd, opt.observer)); });
  if (!key.empty()) store_q(opt.q_cache_dir, key, q);
  return q;
}

double sum_stages(const std::vector<StageTime>& log, std::size_t from) {
  double s = 0;
  for (std::size_t i = from; i < log.size(); ++i) s += log[i].seconds;
  return s;
}

// PSNR of each iterate against the phantom (when known), timed apart so the
// method's time is the solver's alone.
struct PsnrRecorder {
  Backend& be;
  const std::vector<float>& reference;
  std::vector<double>& out;
  double seconds = 0;
  void operator()(int, const BackendVector& x) {
    if (reference.empty()) return;
    auto t0 = std::chrono::steady_clock::now();
    out.push_back(psnr(be.download(x), reference));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
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

// (Preconditioned) CG on the l2 problem from x's start; returns its result.
CgResult solve_l2(Backend& be, const std::vector<cfloat>& q, const ImageGrid& grid, double lambda_abs,
                  const BackendVector& rhs, BackendVector& x, const ReconOptions& opt, int iters,
                  PsnrRecorder* rec) {
  auto normal = be.normal(q, grid, lambda_abs);
  std::unique_ptr<NormalOperator> precond;
  if (opt.precondition) precond = make_preconditioner(be, q, grid, lambda_abs);
  CgOptions cg;
  cg.iters = iters;
  cg.tol = opt.tol;
  cg.precond = precond.get();
  if (opt.observer.progress)
    cg.on_iter = [&](int it, double) { opt.observer.progress(double(it) / std::max(1, iters)); };
  if (rec) cg.on_iterate = std::ref(*rec);
  return conjugate_gradient(be, *normal, rhs, x, cg);
}

// TV by ADMM, started from a few preconditioned CG steps on the l2 problem,
// whose image also sets the scale TV's lambda is relative to.
int solve_tv(Backend& be, const std::vector<cfloat>& q, double q0, const ImageGrid& grid, const BackendVector& rhs,
             BackendVector& x, const ReconOptions& opt, PsnrRecorder& rec, ReconResult& res) {
  res.cg = solve_l2(be, q, grid, 0.0, rhs, x, opt, kTvStartIters, nullptr);
  TvOptions tv;
  tv.lambda = opt.lambda * q0 * image_scale(be.download(x));
  tv.rho = opt.tv_rho * q0;
  tv.outer = opt.iters;
  tv.inner = opt.tv_inner;
  tv.precondition = opt.precondition;
  tv.on_iterate = std::ref(rec);
  if (opt.observer.progress) tv.on_iter = [&](int it) { opt.observer.progress(double(it) / std::max(1, opt.iters)); };
  res.lambda_abs = tv.lambda;
  return admm_tv(be, q, grid, rhs, x, tv).outer;
}

void iterative(Backend& be, const Scan& scan, const ReconOptions& opt, ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  std::size_t first = res.stages.size();
  std::vector<cfloat> mu, fhd;
  stages.run("cmpMu", [&] { mu = be.mu(scan.phi, scan.data); });
  stages.run("cmpFhD", [&] { fhd = be.fhd(mu, scan.grid, with_progress(opt.fhd, opt.observer)); });
  std::vector<cfloat> q = obtain_q(be, scan, opt, stages, res.q_cached);
  // lambda is relative to Q(0) = sum |Phi|^2: the diagonal, hence mean
  // eigenvalue, of FhF, so one lambda means the same for any sample count.
  ImageGrid dbl = scan.grid.doubled();
  std::size_t zero = std::size_t(dbl.nx / 2) + std::size_t(dbl.nx) * (dbl.ny / 2 + std::size_t(dbl.ny) * (dbl.nz / 2));
  const double q0 = std::abs(q[zero]);
  res.lambda_abs = opt.lambda * q0;
  MethodResult m{"iterative", {}, 0, {}, {}, 0, {}};
  PsnrRecorder rec{be, res.reference, m.psnr_per_iter};
  const bool tv = opt.reg == "tv";
  stages.run(tv ? "ADMM-TV" : "CG", [&] {
    VecPtr rhs = be.upload(fhd);
    VecPtr x = be.zeros(fhd.size());
    if (tv) {
      m.iters = solve_tv(be, q, q0, scan.grid, *rhs, *x, opt, rec, res);
    } else {
      res.cg = solve_l2(be, q, scan.grid, res.lambda_abs, *rhs, *x, opt, opt.iters, &rec);
      m.iters = res.cg.iters;
    }
    m.image = be.download(*x);
  });
  stages.last().seconds -= rec.seconds;
  stages.last().note = std::to_string(m.iters) + (tv ? " ADMM iterations" : " iterations");
  if (!res.reference.empty()) {  // ReconResult::cg_psnr: the zero start first, then the record
    res.cg_psnr = {psnr(std::vector<cfloat>(fhd.size()), res.reference)};
    res.cg_psnr.insert(res.cg_psnr.end(), m.psnr_per_iter.begin(), m.psnr_per_iter.end());
  }
  m.seconds = sum_stages(res.stages, first);
  res.methods.push_back(std::move(m));
  res.fhd = std::move(fhd);
}

// The gridding baselines' density weights: the file's, else computed. Runs
// before the expensive stages, so a --dcf the trajectory cannot take fails first.
std::vector<float> density_stage(const Scan& scan, const ReconOptions& opt, ReconResult& res, double& seconds) {
  StageRunner stages(opt.observer, res.stages);
  std::vector<float> dcf = scan.dcf;
  if (dcf.empty()) {
    auto kind = scan.provenance.count("trajectory") ? scan.provenance.at("trajectory") : std::string();
    seconds = stages.run("density compensation",
                         [&] { dcf = density_weights(scan.traj, scan.grid, opt.dcf, kind); });
  }
  return dcf;
}

void gridding(Backend& be, const Scan& scan, const ReconOptions& opt, const std::vector<float>& dcf, double dcf_s,
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
    double s = stages.run(v.name, [&] {
      image = gridding_recon(be, scan.traj, scan.data, dcf, scan.grid, v.kernel);
    });
    res.methods.push_back({v.name, std::move(image), s + dcf_s, {}, {}});
  }
}

void ceiling(const ReconOptions& opt, const ImageGrid& grid, ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  std::vector<cfloat> image;
  double s = stages.run("band-limited ceiling", [&] { image = band_limited_reference(*opt.phantom, grid); });
  res.methods.push_back({"band-limited ceiling", std::move(image), s, {}, {}});
}

void score(ReconResult& res) {
  if (res.reference.empty()) return;
  for (MethodResult& m : res.methods) {
    m.psnr = psnr(m.image, res.reference);
    m.nrmse = nrmse(m.image, res.reference);
  }
}

}  // namespace

ReconResult run_reconstruction(Backend& be, const Scan& scan, const ReconOptions& opt) {
  ReconResult res;
  res.grid = scan.grid;
  be.set_trajectory(scan.traj);
  // The reference first: the iterative methods record their PSNR per iteration against it.
  if (opt.phantom) res.reference = voxel_image(*opt.phantom, scan.grid.nx, scan.grid.ny, scan.grid.nz);
  double dcf_s = 0;
  std::vector<float> dcf;
  if (opt.gridding) dcf = density_stage(scan, opt, res, dcf_s);
  iterative(be, scan, opt, res);
  if (opt.gridding) gridding(be, scan, opt, dcf, dcf_s, res);
  if (opt.phantom) ceiling(opt, scan.grid, res);
  score(res);
  return res;
}

}  // namespace fhd
