// CG with the CPU backend against the dense normal equations solved in double.
#include <algorithm>
#include <cmath>

#include "catch.hpp"
#include "recon/solvers/cg.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/plan/plan.hpp"
#include "recon/gather/direct_sum.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

using Matrix = std::vector<std::vector<cdouble>>;

// A = F^H F + lambda R^H R, built column by column from the reference sums.
Matrix dense_normal_matrix(const Trajectory& traj, const ImageGrid& g, double lambda) {
  const std::size_t n = g.voxels();
  Matrix a(n, std::vector<cdouble>(n));
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<cfloat> e(n, 0.0f);
    e[j] = 1.0f;
    const std::vector<cdouble> d = forward_reference(traj, e, g);
    // F^H F e_j in double: split F e_j into float hi + lo parts for fhd_reference.
    std::vector<cfloat> hi(d.size()), lo(d.size());
    for (std::size_t m = 0; m < d.size(); ++m) {
      hi[m] = cfloat(d[m]);
      lo[m] = cfloat(d[m] - cdouble(hi[m]));
    }
    const std::vector<cdouble> c1 = fhd_reference(traj, hi, g), c2 = fhd_reference(traj, lo, g);
    const std::vector<cdouble> r = dense_rhr(e, g);
    for (std::size_t i = 0; i < n; ++i) a[i][j] = c1[i] + c2[i] + lambda * r[i];
  }
  return a;
}

// Gaussian elimination with partial pivoting.
std::vector<cdouble> solve(Matrix a, std::vector<cdouble> b) {
  const std::size_t n = b.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t p = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::abs(a[i][k]) > std::abs(a[p][k])) p = i;
    std::swap(a[k], a[p]);
    std::swap(b[k], b[p]);
    for (std::size_t i = k + 1; i < n; ++i) {
      const cdouble f = a[i][k] / a[k][k];
      for (std::size_t j = k; j < n; ++j) a[i][j] -= f * a[k][j];
      b[i] -= f * b[k];
    }
  }
  std::vector<cdouble> x(n);
  for (std::size_t k = n; k-- > 0;) {
    cdouble s = b[k];
    for (std::size_t j = k + 1; j < n; ++j) s -= a[k][j] * x[j];
    x[k] = s / a[k][k];
  }
  return x;
}

// sqrt(e^H A e) for e = x - ref.
double a_norm_error(const Matrix& a, const std::vector<cfloat>& x, const std::vector<cdouble>& ref) {
  std::vector<cdouble> e(ref.size());
  for (std::size_t i = 0; i < e.size(); ++i) e[i] = cdouble(x[i]) - ref[i];
  cdouble s = 0;
  for (std::size_t i = 0; i < e.size(); ++i)
    for (std::size_t j = 0; j < e.size(); ++j) s += std::conj(e[i]) * a[i][j] * e[j];
  return std::sqrt(std::abs(s));
}

}  // namespace

TEST_CASE("CG solves the normal equations of the dense problem", "[cpu]") {
  auto backend = make_cpu_device();
  for (const ImageGrid& g : {ImageGrid{6, 5, 1}, ImageGrid{4, 3, 3}})
    for (double lambda : {0.0, 1.5}) {
      const Trajectory traj = random_trajectory(4 * g.voxels(), g, 21);
      const std::vector<cfloat> data = random_complex(traj.size(), 22);
      PlanOptions po;
      po.fhd = FhdOptions{TrigMode::Double, ""};
      auto plan = Plan::make(*backend, traj, g, po);
      const std::vector<cfloat> rhs = plan->fhd(data);
      OpPtr op = l2_system(*plan, lambda);

      const Matrix a = dense_normal_matrix(traj, g, lambda);
      const std::vector<cdouble> exact = solve(a, fhd_reference(traj, data, g));

      VecPtr b = backend->upload(rhs), x = backend->zeros(g.voxels());
      std::vector<double> seen;
      CgOptions cg{200, 1e-6, [&](int, double r) { seen.push_back(r); }};
      const CgResult res = conjugate_gradient(*op, *b, *x, cg);
      const double err = rel_l2(backend->download(*x), exact);
      INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz << " lambda " << lambda << " iters " << res.iters
                   << " rel error " << err);
      CHECK(res.converged);
      CHECK(res.residuals.size() == std::size_t(res.iters) + 1);
      CHECK(res.residuals.front() == 1.0);  // zero start: r = rhs
      CHECK(res.residuals.back() <= 1e-6);
      CHECK(seen == std::vector<double>(res.residuals.begin() + 1, res.residuals.end()));
      CHECK(err < 1e-4);

      // CG minimizes the A-norm of the error over growing Krylov spaces, so
      // that (not the 2-norm residual) must fall at every step.
      double previous = a_norm_error(a, std::vector<cfloat>(g.voxels()), exact);
      for (int k = 1; k <= res.iters && previous > 1e-4; ++k) {
        VecPtr xk = backend->zeros(g.voxels());
        conjugate_gradient(*op, *b, *xk, {k, 0.0, {}});
        const double now = a_norm_error(a, backend->download(*xk), exact);
        INFO("iteration " << k);
        CHECK(now < previous);
        previous = now;
      }
      for (std::size_t k = 1; k < res.residuals.size(); ++k) CHECK(res.residuals[k] < res.residuals[0]);

      // A non-zero start reaches the same solution.
      VecPtr x2 = backend->upload(random_complex(g.voxels(), 5));
      CHECK(conjugate_gradient(*op, *b, *x2, cg).converged);
      CHECK(rel_l2(backend->download(*x2), exact) < 1e-4);
    }
}

TEST_CASE("CG with a zero right-hand side returns zero", "[cpu]") {
  auto backend = make_cpu_device();
  const ImageGrid g{4, 4, 1};
  auto plan = Plan::make(*backend, random_trajectory(40, g, 1), g, {});
  OpPtr op = l2_system(*plan, 0.0);
  VecPtr b = backend->zeros(g.voxels()), x = backend->upload(random_complex(g.voxels(), 2));
  const CgResult res = conjugate_gradient(*op, *b, *x, {10, 1e-6, {}});
  CHECK(res.converged);
  CHECK(res.iters == 0);
  CHECK(backend->dot(*x, *x) == cdouble(0.0));
}

TEST_CASE("CG that diverges past float32's floor returns its best iterate, not its last", "[cpu]") {
  // Fewer samples than voxels and no regularizer: T is singular. Run past the
  // residual float32 can reach (tol 0), p^H A p loses its digits and x runs
  // off along T's null space (the CLI's 2D case: 15 dB at iteration 125,
  // -42 dB at 264).
  auto backend = make_cpu_device();
  const ImageGrid g{32, 32, 1};
  const Trajectory traj = random_trajectory(256, g, 3);
  auto plan = Plan::make(*backend, traj, g, {});
  OpPtr op = l2_system(*plan, 0.0);
  VecPtr b = backend->upload(plan->fhd(random_complex(traj.size(), 4)));
  VecPtr at_tol = backend->zeros(g.voxels()), run_on = backend->zeros(g.voxels());
  const CgResult stopped = conjugate_gradient(*op, *b, *at_tol, {300, 1e-5, {}});
  REQUIRE(stopped.converged);
  CHECK(stopped.returned == stopped.iters);  // a healthy run returns its last iterate
  const CgResult res = conjugate_gradient(*op, *b, *run_on, {300, 0.0, {}});
  const double lowest = *std::min_element(res.residuals.begin(), res.residuals.end());
  INFO("iters " << res.iters << " returned " << res.returned << " last residual " << res.residuals.back()
                << " lowest " << lowest);
  REQUIRE(res.residuals.back() > kDivergedFactor * lowest);  // it diverged, as it does in float32
  CHECK(res.returned < res.iters);
  CHECK(res.residuals[std::size_t(res.returned)] == lowest);
  CHECK(rel_l2(backend->download(*run_on), backend->download(*at_tol)) < 1e-2);  // not 1e9 times it
}
