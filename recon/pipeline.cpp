#include "recon/pipeline.hpp"

#include <chrono>
#include <cmath>

#include "recon/dcf.hpp"
#include "recon/gridding.hpp"
#include "recon/metrics.hpp"
#include "recon/qcache.hpp"
#include "recon/reference.hpp"

namespace fhd {
namespace {

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
  res.lambda_abs = opt.lambda * std::abs(q[zero]);
  std::vector<cfloat> image;
  stages.run("CG", [&] {
    auto normal = be.normal(q, scan.grid, res.lambda_abs);
    VecPtr rhs = be.upload(fhd);
    VecPtr x = be.zeros(fhd.size());
    CgOptions cg;
    cg.iters = opt.iters;
    cg.tol = opt.tol;
    if (opt.observer.progress)
      cg.on_iter = [&](int it, double) { opt.observer.progress(double(it) / opt.iters); };
    if (!res.reference.empty()) {  // semi-convergence: the iterates' PSNR (one download each)
      res.cg_psnr.push_back(psnr(std::vector<cfloat>(fhd.size()), res.reference));
      cg.on_iterate = [&](int, const BackendVector& xi) { res.cg_psnr.push_back(psnr(be.download(xi), res.reference)); };
    }
    res.cg = conjugate_gradient(be, *normal, *rhs, *x, cg);
    image = be.download(*x);
  });
  stages.last().note = std::to_string(res.cg.iters) + " iterations";
  res.methods.push_back({"iterative", std::move(image), sum_stages(res.stages, first), {}, {}});
  res.fhd = std::move(fhd);
}

void gridding(Backend& be, const Scan& scan, const ReconOptions& opt, ReconResult& res) {
  StageRunner stages(opt.observer, res.stages);
  std::vector<float> dcf = scan.dcf;
  double dcf_s = 0;
  if (dcf.empty()) {
    auto kind = scan.provenance.count("trajectory") ? scan.provenance.at("trajectory") : std::string();
    dcf_s = stages.run("density compensation",
                       [&] { dcf = density_weights(scan.traj, scan.grid, opt.dcf, kind); });
  }
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
  if (opt.phantom) res.reference = voxel_image(*opt.phantom, scan.grid.nx, scan.grid.ny, scan.grid.nz);
  iterative(be, scan, opt, res);
  if (opt.gridding) gridding(be, scan, opt, res);
  if (opt.phantom) ceiling(opt, scan.grid, res);
  score(res);
  return res;
}

}  // namespace fhd
