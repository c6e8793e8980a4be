#include "recon/problem/solve.hpp"

#include <cstdio>
#include <future>

#include <spdlog/spdlog.h>

#include "recon/eval/evaluation.hpp"
#include "recon/eval/metrics.hpp"
#include "recon/ops/diff.hpp"
#include "recon/plan/precond.hpp"
#include "recon/solvers/regularizer.hpp"
#include "recon/solvers/solvers.hpp"

namespace fhd {
namespace {

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

// A^H A + lambda D^H D (the Laplacian added in one pass).
OpPtr regularized(Problem& p, Plan& plan, double lambda_abs) {
  if (lambda_abs == 0.0) return p.model->normal();
  return sum({p.model->normal(), scale(lambda_abs, laplacian(plan.device(), plan.grid()))});
}

// (Preconditioned) CG from x's start: `op` with the plan's circulant
// preconditioner where it models the operator (not SENSE: it knows nothing of
// the maps, and with noisy data plain CG reached a better image at 30
// iterations: 64^3, 8 coils, 1% noise: 23.73 dB plain, 22.11 preconditioned).
CgResult cg_solve(Plan& plan, Problem& p, LinOp& op, double lambda_abs, const DeviceVector& rhs, DeviceVector& x,
                  const ReconOptions& opt, int iters, PsnrRecorder* rec) {
  CgOptions cg;
  cg.iters = iters;
  cg.tol = opt.tol;
  if (opt.precondition && p.preconditionable) cg.precond = plan.preconditioner(preconditioner_weight(plan, lambda_abs)).get();
  spdlog::debug("CG: operator and preconditioner ready");
  if (opt.observer.progress)
    cg.on_iter = [&](int it, double) { opt.observer.progress(double(it) / std::max(1, iters)); };
  if (rec) cg.on_iterate = std::ref(*rec);
  CgResult r = conjugate_gradient(op, rhs, x, cg);
  spdlog::debug("CG: {} iterations done", r.iters);
  if (r.returned != r.iters)
    spdlog::warn("CG diverged: its residual rose from {:.2g} (iteration {}) to {:.2g} (iteration {}); the image is "
                 "iteration {}'s. float32 reaches a residual near 1e-6: a --tol below it runs into this",
                 r.residuals[std::size_t(r.returned)], r.returned, r.residuals.back(), r.iters, r.returned);
  return r;
}

// l2's absolute lambda. Fixed: relative to Q(0) = sum |Phi|^2, the diagonal,
// hence mean eigenvalue, of T, so one lambda means the same for any sample
// count. Auto: the risk-minimizing one for this right-hand side and noise
// (recon/problem/lambda_auto.hpp), the fixed one without a noise estimate.
void choose_l2_lambda(Plan& plan, const Problem& p, const ReconOptions& opt, ReconResult& res, StageClock& clock) {
  res.lambda_rel = fixed_lambda(opt);
  res.lambda_abs = res.lambda_rel * plan.q0();
  res.lambda_rule = "fixed";
  if (!opt.lambda_auto) return;
  if (!p.noise) {
    res.lambda_rule = "auto: no noise estimate (no noise samples, no oversampled readouts), fixed";
    return;
  }
  // The risk estimate models A^H y of one coil's Toeplitz problem. SENSE's
  // E^H y and a field model's A^H y carry energy where T's spectrum is small,
  // which it took for signal: it fell to its floor, 2-5 dB below the fixed
  // value (docs/accuracy.md, "lambda auto").
  if (!p.preconditionable || res.field.method != "none") {
    res.lambda_rule = "auto: the risk estimate models one coil without field compensation, fixed";
    return;
  }
  StageRunner stages(opt.observer, res.stages, &clock);
  stages.run("lambda (auto)", [&] {
    res.lambda_abs = sure_lambda(plan.circulant_spectrum(), plan.device().download(*p.rhs), plan.grid(),
                                 p.noise->variance);
  });
  res.lambda_rel = res.lambda_abs / plan.q0();
  char buf[160];
  std::snprintf(buf, sizeof buf, "auto: risk estimate, noise variance %.4g from %s", p.noise->variance,
                p.noise->source.c_str());
  res.lambda_rule = buf;
}

// A sparse prior's relative lambda (to Q(0) times the image scale): the
// given value; unset or auto, the noise rule (recon/problem/lambda_auto.hpp),
// the fixed value without a noise estimate.
void choose_sparse_lambda(double q0, double scale, const Problem& p, const ReconOptions& opt, ReconResult& res) {
  res.lambda_rel = fixed_lambda(opt);
  res.lambda_rule = "fixed";
  const bool rule = opt.lambda_auto || !opt.lambda;
  if (rule && !p.noise) {
    res.lambda_rule = "auto: no noise estimate (no noise samples, no oversampled readouts), fixed";
  } else if (rule) {
    res.lambda_rel = tv_noise_lambda(p.noise->variance, q0, scale);
    char buf[200];
    std::snprintf(buf, sizeof buf, "auto: %s noise rule max(%g, %g * %.4g), noise variance %.4g from %s",
                  find_regularizer(opt.reg)->label.c_str(), kTvLambda, kTvNoiseFactor,
                  tv_noise_ratio(p.noise->variance, q0, scale), p.noise->variance, p.noise->source.c_str());
    res.lambda_rule = buf;
  }
  res.lambda_abs = res.lambda_rel * q0 * scale;
}

// A sparse prior: kAdmmStartIters CG steps on the unregularized problem, then ADMM.
int solve_sparse(Plan& plan, Problem& p, DeviceVector& x, const ReconOptions& opt, PsnrRecorder& rec,
                 ReconResult& res) {
  res.cg = cg_solve(plan, p, *p.model->normal(), 0.0, *p.rhs, x, opt, kAdmmStartIters, nullptr);
  const double q0 = plan.q0();
  choose_sparse_lambda(q0, image_scale(plan.device().download(x)), p, opt, res);
  AdmmOptions admm_opt;
  admm_opt.rho = opt.admm_rho * q0;
  admm_opt.outer = opt.iters;
  admm_opt.inner = opt.admm_inner;
  // The x-step is A^H A + rho G^H G: the plan's preconditioner of T + rho D^H D
  // models it for TV, and near enough for priors with G^H G ~ I.
  if (opt.precondition && p.preconditionable) admm_opt.precond = plan.preconditioner(admm_opt.rho).get();
  admm_opt.hooks.on_iterate = std::ref(rec);
  if (opt.observer.progress)
    admm_opt.hooks.on_iter = [&](int it) { opt.observer.progress(double(it) / std::max(1, opt.iters)); };
  const Term term = find_regularizer(opt.reg)->term(plan.device(), plan.grid(), res.lambda_abs);
  return admm(p.model->normal(), *p.rhs, {term}, x, admm_opt).outer;
}

std::string solver_stage(const Problem& p, const ReconOptions& opt) {
  const Regularizer* r = find_regularizer(opt.reg);
  return r ? "ADMM-" + r->label : p.solver_stage;
}

}  // namespace

void solve(Plan& plan, Problem& p, const ReconOptions& opt, ReconResult& res, StageClock& clock) {
  const bool sparse = find_regularizer(opt.reg) != nullptr;
  if (!sparse) choose_l2_lambda(plan, p, opt, res, clock);
  Device& dev = plan.device();
  StageRunner stages(opt.observer, res.stages, &clock);
  MethodResult m;
  m.name = "iterative";
  PsnrRecorder rec(dev, res.reference, m.psnr_per_iter);
  // The image's host memory is made (and its pages touched) by another thread
  // while a GPU solves: a fresh 128^3 complex vector took 10 ms of page faults
  // on the GPU machine, after the last iteration. On the CPU it is made after.
  std::future<std::vector<cfloat>> image_memory =
      std::async(dev.is_gpu() ? std::launch::async : std::launch::deferred,
                 [n = p.rhs->size()] { return std::vector<cfloat>(n); });
  stages.run(solver_stage(p, opt), [&] {
    VecPtr x = dev.zeros(p.rhs->size());
    if (sparse) {
      m.iters = solve_sparse(plan, p, *x, opt, rec, res);
    } else {
      res.cg = cg_solve(plan, p, *regularized(p, plan, res.lambda_abs), res.lambda_abs, *p.rhs, *x, opt, opt.iters, &rec);
      m.iters = res.cg.iters;
    }
    m.image = image_memory.get();
    dev.download_into(*x, m.image);
  });
  stages.deduct_last(rec.seconds);
  res.scoring_seconds += rec.seconds;
  stages.last().note = std::to_string(m.iters) + (sparse ? " ADMM iterations" : " iterations");
  if (!res.reference.empty()) {  // ReconResult::cg_psnr: the zero start first, then the record
    res.cg_psnr = {rec.zero_start()};
    res.cg_psnr.insert(res.cg_psnr.end(), m.psnr_per_iter.begin(), m.psnr_per_iter.end());
  }
  res.methods.push_back(std::move(m));  // its seconds: the pipeline's, once the clock resolves
  if (opt.keep_fhd) res.fhd = dev.download(*p.rhs);
}

}  // namespace fhd
