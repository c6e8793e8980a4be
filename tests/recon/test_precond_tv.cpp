// The circulant preconditioner, preconditioned CG and total variation (ADMM)
// on the CPU device, against dense references and analytic minimizers.
#include <cmath>

#include "catch.hpp"
#include "recon/solvers/cg.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/plan/precond.hpp"
#include "recon/ops/diff.hpp"
#include "recon/plan/plan.hpp"
#include "recon/plan/toeplitz_kernels.hpp"
#include "recon/solvers/prox.hpp"
#include "recon/solvers/solvers.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

using Matrix = std::vector<std::vector<cdouble>>;

// T + lambda D^H D from a host Q, as the pipeline's CG sees it.
OpPtr system_of(Device& be, const std::vector<cfloat>& q, const ImageGrid& g, double lambda) {
  OpPtr t = be.kernels<ToeplitzKernels>().normal(*be.upload(q), g);
  return lambda == 0.0 ? t : sum({t, scale(lambda, laplacian(be, g))});
}

OpPtr preconditioner_of(Device& be, const std::vector<cfloat>& q, const ImageGrid& g, double lambda) {
  return be.kernels<ToeplitzKernels>().preconditioner(*be.upload(q), g, lambda);
}

// The dense matrix of an operator, column j = op(e_j).
Matrix dense(Device& be, LinOp& op, std::size_t n) {
  Matrix a(n, std::vector<cdouble>(n));
  VecPtr y = be.zeros(n);
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<cfloat> e(n, 0.0f);
    e[j] = 1.0f;
    op.apply(*be.upload(e), *y);
    const std::vector<cfloat> col = be.download(*y);
    for (std::size_t i = 0; i < n; ++i) a[i][j] = col[i];
  }
  return a;
}

// Cholesky of a Hermitian matrix: false when it is not positive definite.
bool cholesky_succeeds(Matrix a) {
  const std::size_t n = a.size();
  for (std::size_t k = 0; k < n; ++k) {
    double d = a[k][k].real();
    for (std::size_t j = 0; j < k; ++j) d -= std::norm(a[k][j]);
    if (!(d > 0.0)) return false;
    const double l = std::sqrt(d);
    a[k][k] = l;
    for (std::size_t i = k + 1; i < n; ++i) {
      cdouble s = a[i][k];
      for (std::size_t j = 0; j < k; ++j) s -= a[i][j] * std::conj(a[k][j]);
      a[i][k] = s / l;
    }
  }
  return true;
}

// Solves A x = b by plain CG and by CG preconditioned with m; both must
// converge (tol) and reach the same x: a preconditioner that keeps the solution.
void check_pcg_reaches_cg(Device& be, LinOp& a, LinOp& m, const DeviceVector& b, double tol) {
  VecPtr x_plain = be.zeros(b.size()), x_pre = be.zeros(b.size());
  CgOptions plain{500, tol, {}};
  CgOptions pre = plain;
  pre.precond = &m;
  CHECK(conjugate_gradient(a, b, *x_plain, plain).converged);
  CHECK(conjugate_gradient(a, b, *x_pre, pre).converged);
  CHECK(rel_l2(be.download(*x_pre), be.download(*x_plain)) < 1e-4);
}

}  // namespace

TEST_CASE("circulant eigenvalues are T. Chan's: diag(F T F^H) of the Toeplitz matrix", "[cpu]") {
  auto be = make_cpu_device();
  const double pi = 3.14159265358979323846;
  for (const ImageGrid& g : {ImageGrid{6, 4, 1}, ImageGrid{4, 3, 5}}) {
    PlanOptions po;
    po.fhd = {TrigMode::Double, ""};
    const std::vector<cfloat> q = to_vector(Plan::make(*be, random_trajectory(4 * g.voxels(), g, 3), g, po)->q_host());
    auto t_op = system_of(*be, q, g, 0.0);
    const Matrix t = dense(*be, *t_op, g.voxels());
    const std::vector<double> eig = circulant_eigenvalues(q, g, 0.0, 0.0);  // unsmoothed
    auto at = [&g](std::size_t i, int axis) {
      return axis == 0 ? int(i % g.nx) : axis == 1 ? int((i / g.nx) % g.ny) : int(i / (std::size_t(g.nx) * g.ny));
    };
    for (std::size_t f = 0; f < g.voxels(); ++f) {
      // (1/n) sum_ij conj(phi_i) T_ij phi_j with phi_j = exp(+i 2 pi f . r_j / N).
      cdouble s = 0;
      for (std::size_t i = 0; i < g.voxels(); ++i)
        for (std::size_t j = 0; j < g.voxels(); ++j) {
          const double ph = 2 * pi * (double(at(f, 0)) * (at(j, 0) - at(i, 0)) / g.nx +
                                      double(at(f, 1)) * (at(j, 1) - at(i, 1)) / g.ny +
                                      double(at(f, 2)) * (at(j, 2) - at(i, 2)) / g.nz);
          s += t[i][j] * std::polar(1.0, ph);
        }
      s /= double(g.voxels());
      INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz << " f = " << f);
      CHECK(eig[f] == Approx(s.real()).epsilon(1e-4).margin(1e-3));
      CHECK(std::abs(s.imag()) < 1e-3);
      CHECK(eig[f] >= -1e-3);  // T is positive semidefinite, so is its optimal circulant
    }
  }
}

TEST_CASE("the preconditioner is symmetric positive definite and PCG keeps the solution", "[cpu]") {
  auto be = make_cpu_device();
  for (const ImageGrid& g : {ImageGrid{6, 5, 1}, ImageGrid{4, 3, 3}})
    for (double lambda : {0.0, 2.0}) {
      INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz << " lambda " << lambda);
      const Trajectory traj = random_trajectory(3 * g.voxels(), g, 7);
      PlanOptions po;
      po.fhd = {TrigMode::Double, ""};
      auto plan = Plan::make(*be, traj, g, po);
      const std::vector<cfloat> q = to_vector(plan->q_host());
      auto m = preconditioner_of(*be, q, g, lambda);
      const Matrix md = dense(*be, *m, g.voxels());
      double asym = 0, scale = 0;
      for (std::size_t i = 0; i < md.size(); ++i)
        for (std::size_t j = 0; j < md.size(); ++j) {
          asym = std::max(asym, std::abs(md[i][j] - std::conj(md[j][i])));
          scale = std::max(scale, std::abs(md[i][j]));
        }
      CHECK(asym < 1e-5 * scale);
      CHECK(cholesky_succeeds(md));

      auto a = system_of(*be, q, g, lambda);
      VecPtr b = be->upload(plan->fhd(random_complex(traj.size(), 8)));
      check_pcg_reaches_cg(*be, *a, *m, *b, 1e-6);
    }
}

TEST_CASE("a damped preconditioner (roughness weight above lambda) keeps the solution", "[cpu]") {
  // The l2 CG's preconditioner on undersampled data (recon/plan/precond.hpp,
  // kPrecondDamping): M ~ (T + mu R^H R)^-1 with mu = kPrecondDamping Q(0) far
  // above the problem's lambda; it must still be SPD, so PCG's answer is CG's.
  auto be = make_cpu_device();
  const ImageGrid g{5, 4, 3};
  const Trajectory traj = random_trajectory(g.voxels() / 2, g, 11);  // fewer samples than voxels
  PlanOptions po;
  po.fhd = {TrigMode::Double, ""};
  auto plan = Plan::make(*be, traj, g, po);
  const std::vector<cfloat> q = to_vector(plan->q_host());
  const double q0 = std::abs(q[g.nx + 2 * g.nx * (g.ny + 2 * g.ny * g.nz)]);  // lag 0 on the doubled grid
  const double lambda = 1e-2 * q0;
  auto m = preconditioner_of(*be, q, g, std::max(lambda, kPrecondDamping * q0));
  CHECK(cholesky_succeeds(dense(*be, *m, g.voxels())));
  auto a = system_of(*be, q, g, lambda);
  VecPtr b = be->upload(plan->fhd(random_complex(traj.size(), 12)));
  check_pcg_reaches_cg(*be, *a, *m, *b, 1e-7);
}

TEST_CASE("PCG needs far fewer iterations on a radial-like density", "[cpu]") {
  // Samples crowd the center (density ~ 1/|k|), as on radial trajectories:
  // the circulant preconditioner compensates the density.
  auto be = make_cpu_device();
  const ImageGrid g{24, 24, 1};
  Trajectory t;
  const int spokes = 40, readout = 24;
  t.resize(std::size_t(spokes) * readout);
  for (int s = 0; s < spokes; ++s)
    for (int r = 0; r < readout; ++r) {
      const double ang = 3.14159265358979 * s / spokes, k = r - readout / 2;
      t.kx[s * readout + r] = float(k * std::cos(ang));
      t.ky[s * readout + r] = float(k * std::sin(ang));
      t.kz[s * readout + r] = 0.0f;
    }
  auto plan = Plan::make(*be, t, g, {});
  const std::vector<cfloat> q = to_vector(plan->q_host());
  const double lambda = 1e-3 * std::abs(q[g.nx + 2 * g.nx * g.ny]);  // lag 0 on the doubled grid
  auto a = system_of(*be, q, g, lambda);
  auto m = preconditioner_of(*be, q, g, lambda);
  VecPtr b = be->upload(plan->fhd(random_complex(t.size(), 4)));
  VecPtr x1 = be->zeros(g.voxels()), x2 = be->zeros(g.voxels());
  CgOptions plain{1000, 1e-4, {}};
  CgOptions pre = plain;
  pre.precond = m.get();
  const CgResult rp = conjugate_gradient(*a, *b, *x1, plain), rq = conjugate_gradient(*a, *b, *x2, pre);
  INFO("plain " << rp.iters << " iterations, preconditioned " << rq.iters);
  CHECK(rq.converged);
  CHECK(5 * rq.iters < 3 * rp.iters);  // measured: 71 against 141
}

TEST_CASE("finite differences: D^H is the adjoint of D and D^H D the dense R^H R", "[cpu]") {
  for (const ImageGrid& g : {ImageGrid{5, 4, 1}, ImageGrid{3, 4, 5}, ImageGrid{7, 1, 1}}) {
    const std::size_t n = g.voxels(), ng = n * std::size_t(gradient_axes(g));
    const std::vector<cfloat> x = random_complex(n, 1), h = random_complex(ng, 2);
    std::vector<cfloat> dx(ng), dh(n), ddx(n);
    gradient_host(x.data(), dx.data(), g);
    gradient_adjoint_host(h.data(), dh.data(), g);
    CHECK(std::abs(inner(dx, h) - inner(x, dh)) < 1e-4 * std::abs(inner(dx, h)));
    gradient_adjoint_host(dx.data(), ddx.data(), g);
    CHECK(rel_l2(ddx, dense_rhr(x, g)) < 1e-5);
  }
}

TEST_CASE("TV's group shrinkage is the proximal step: it minimizes 1/2 |z - v|^2 + t |z| per voxel", "[cpu]") {
  auto be = make_cpu_device();
  const ImageGrid g{4, 3, 3};  // 3 axes: a 3-vector per voxel
  const std::size_t n = g.voxels();
  const std::vector<cfloat> gv = random_complex(3 * n, 5), u0 = random_complex(3 * n, 6);
  const double t = 3.0;  // some voxels shrink to zero, others do not
  // ADMM's z and u steps: v = g + u, z = prox(v), u = v - z.
  VecPtr v = be->upload(gv), zv = be->zeros(3 * n);
  be->axpy(1.0, *be->upload(u0), *v);
  group_l1_prox(*be, n, 3)->apply(t, *v, *zv);
  const std::vector<cfloat> z = be->download(*zv);
  std::vector<cfloat> u = be->download(*v);
  for (std::size_t i = 0; i < u.size(); ++i) u[i] -= z[i];
  std::mt19937 rng(9);
  std::normal_distribution<double> d;
  int zeroed = 0;
  for (std::size_t v = 0; v < n; ++v) {
    cdouble vv[3], zz[3];
    double vnorm = 0;
    for (int k = 0; k < 3; ++k) {
      vv[k] = cdouble(gv[k * n + v]) + cdouble(u0[k * n + v]);
      zz[k] = z[k * n + v];
      vnorm += std::norm(vv[k]);
      CHECK(std::abs(cdouble(u[k * n + v]) - (vv[k] - zz[k])) < 1e-5);  // u = v - z
    }
    vnorm = std::sqrt(vnorm);
    auto objective = [&](const cdouble* c) {
      double fit = 0, nn = 0;
      for (int k = 0; k < 3; ++k) fit += std::norm(c[k] - vv[k]), nn += std::norm(c[k]);
      return 0.5 * fit + t * std::sqrt(nn);
    };
    // Closed form: |v| <= t gives 0, else v shrunk by t along its direction.
    if (vnorm <= t) ++zeroed;
    const double best = objective(zz);
    for (int trial = 0; trial < 200; ++trial) {
      cdouble p[3];
      const double step = trial < 100 ? 1e-2 : 1e-4;
      for (int k = 0; k < 3; ++k) p[k] = zz[k] + step * cdouble(d(rng), d(rng));
      CHECK(objective(p) >= best - 1e-6);
    }
  }
  CHECK(zeroed > 0);
  CHECK(zeroed < int(n));
}

TEST_CASE("ADMM reaches the known TV minimizer of a 1D step", "[cpu]") {
  // T = I (Q a delta at lag 0): min 1/2 |x - y|^2 + lambda TV(x). For a step
  // from a to b > a over n1 and n2 samples and lambda < (b - a) n1 n2 / (n1 + n2),
  // the minimizer is the step with its levels moved lambda / n1 up and lambda / n2 down.
  auto be = make_cpu_device();
  const ImageGrid g{10, 1, 1};
  const int n1 = 4, n2 = 6;
  const double a = 1.0, b = 3.0, lambda = 1.2;
  std::vector<cfloat> q(g.doubled().voxels(), 0.0f);
  q[g.nx + std::size_t(2 * g.nx) * g.ny] = 1.0f;  // lag 0 (the doubled grid is 20 x 2: y keeps a lag -1 row)
  std::vector<cfloat> y(g.voxels());
  for (int i = 0; i < g.nx; ++i) y[i] = cfloat(float(i < n1 ? a : b), 0.0f);
  for (bool pre : {false, true}) {
    VecPtr rhs = be->upload(y), x = be->zeros(g.voxels());
    AdmmOptions opt;
    opt.rho = 1.0;
    opt.outer = 300;
    opt.inner = 5;
    auto m = pre ? preconditioner_of(*be, q, g, opt.rho) : nullptr;
    opt.precond = m.get();
    const Term tv{finite_differences(*be, g), group_l1_prox(*be, g.voxels(), gradient_axes(g)), lambda};
    const AdmmResult r = admm(system_of(*be, q, g, 0.0), *rhs, {tv}, *x, opt);
    CHECK(r.outer == 300);
    const std::vector<cfloat> xs = be->download(*x);
    for (int i = 0; i < g.nx; ++i) {
      INFO("sample " << i << " preconditioned " << pre);
      CHECK(xs[i].real() == Approx(i < n1 ? a + lambda / n1 : b - lambda / n2).margin(1e-3));
      CHECK(std::abs(xs[i].imag()) < 1e-4);
    }
  }
}
