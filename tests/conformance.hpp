#pragma once
// The backend conformance suite: one contract, held against every backend
// present (the CPU always: tests/recon/test_conformance.cpp; the GPU where one
// is usable: tests/gpu/test_conformance.cpp). Each check is an identity the
// maths guarantees, so a backend that breaks it is wrong, whatever it agrees with.
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "core/error.hpp"
#include "recon/device/device.hpp"
#include "recon/plan/plan.hpp"
#include "recon/plan/precond.hpp"
#include "recon/coils/sense.hpp"
#include "recon/solvers/tv.hpp"
#include "test_util.hpp"

namespace fhd::conformance {

using MakeBackend = std::function<std::unique_ptr<Backend>()>;

inline cdouble inner(const std::vector<cfloat>& a, const std::vector<cfloat>& b) {  // sum conj(a) b
  cdouble s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::conj(cdouble(a[i])) * cdouble(b[i]);
  return s;
}

struct Case {
  std::string name;
  ImageGrid grid;
  FhdOptions fhd;
  double tol;  // relative bound for identities that hold exactly in exact arithmetic
};

inline std::vector<Case> cases() {
  FhdOptions exact, nufft;
  nufft.method = FhdMethod::Nufft;
  nufft.nufft_tol = 1e-6;
  return {{"2D exact", {12, 10, 1}, exact, 2e-5},
          {"3D exact", {6, 8, 4}, exact, 2e-5},
          {"2D nufft 1e-6", {12, 10, 1}, nufft, 5e-5},
          {"3D nufft 1e-6", {6, 8, 4}, nufft, 5e-5}};
}

// <A x, y> = <x, A^H y>: forward and fhd (Phi = 1) are each other's adjoints.
inline void adjoint_identity(Backend& be, const Case& c) {
  const Trajectory t = test::random_trajectory(3 * c.grid.voxels() / 2, c.grid, 11);
  PlanOptions po;
  po.fhd = c.fhd;
  std::unique_ptr<Plan> plan = be.make_plan(t, c.grid, po);
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 12), y = test::random_complex(t.size(), 13);
  const cdouble lhs = inner(plan->forward(x), y), rhs = inner(x, plan->fhd(y));
  CHECK(std::abs(lhs - rhs) <= c.tol * std::abs(lhs));
}

// normal(0) x = F^H F x (the Toeplitz embedding of Q is exact), and Q is
// Hermitian about lag 0: Q(-y) = conj(Q(y)).
inline void toeplitz_and_q_symmetry(Backend& be, const Case& c) {
  const Trajectory t = test::random_trajectory(2 * c.grid.voxels(), c.grid, 21);
  PlanOptions po;
  po.fhd = c.fhd;
  Plan plan(be, t, c.grid, po);
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 22);
  VectorOps& v = be.vec();
  VecPtr xv = v.upload(x), yv = v.zeros(x.size());
  plan.normal(0.0).apply(*xv, *yv);
  CHECK(test::rel_l2(v.download(*yv), plan.fhd(plan.forward(x))) < 10 * c.tol);
  const ImageGrid d = c.grid.doubled();
  const std::vector<cfloat>& q = plan.q();
  REQUIRE(q.size() == d.voxels());
  double worst = 0, scale = std::abs(q[d.nx / 2 + std::size_t(d.nx) * (d.ny / 2 + std::size_t(d.ny) * (d.nz / 2))]);
  for (int z = 1; z < d.nz || z == 1; ++z) {  // indices 1.. mirror inside the grid (index 0 is lag -N)
    const int zz = d.nz > 1 ? z : 0, mz = d.nz > 1 ? d.nz - z : 0;
    for (int yy = 1; yy < d.ny; ++yy)
      for (int xx = 1; xx < d.nx; ++xx) {
        const cfloat a = q[xx + std::size_t(d.nx) * (yy + std::size_t(d.ny) * zz)];
        const cfloat b = q[(d.nx - xx) + std::size_t(d.nx) * ((d.ny - yy) + std::size_t(d.ny) * mz)];
        worst = std::max(worst, double(std::abs(a - std::conj(b))));
      }
    if (d.nz == 1) break;
  }
  CHECK(worst <= 10 * c.tol * scale);
  // --lambda auto's model: the backend's circulant spectrum is the host's fold of the same Q.
  const std::vector<double> spec = be.circulant_spectrum(plan.q_resident(), c.grid),
                            host = circulant_eigenvalues(q, c.grid, 0.0);
  REQUIRE(spec.size() == host.size());
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < spec.size(); ++i) diff += std::pow(spec[i] - host[i], 2), norm += host[i] * host[i];
  CHECK(std::sqrt(diff / norm) < 1e-5);
}

// The error contract both backends keep: lengths checked with InputError,
// 2D trajectories may leave kz empty (the same as zeros), once-per-trajectory
// work is done once.
inline void error_and_plan_contract(Backend& be) {
  const ImageGrid g{8, 6, 1};
  Trajectory t = test::random_trajectory(40, g, 31);
  Trajectory bad = t;
  bad.ky.pop_back();
  CHECK_THROWS_AS(be.upload_points(bad), InputError);
  CHECK_THROWS_AS(Plan(be, t, g, PlanOptions{FhdOptions{}, std::vector<cfloat>(3)}), InputError);
  Plan plan(be, t, g, {});
  CHECK_THROWS_AS(plan.fhd(std::vector<cfloat>(t.size() + 1)), InputError);
  CHECK_THROWS_AS(plan.forward(std::vector<cfloat>(g.voxels() - 1)), InputError);
  const std::vector<cfloat> d = test::random_complex(t.size(), 32);
  Trajectory flat = t;
  std::fill(flat.kz.begin(), flat.kz.end(), 0.0f);
  Trajectory empty_kz = flat;
  empty_kz.kz.clear();
  CHECK(test::rel_l2(Plan(be, empty_kz, g, {}).fhd(d), Plan(be, flat, g, {}).fhd(d)) == 0.0);
  plan.q();
  plan.q();
  plan.normal(0.5);
  plan.normal(0.5);
  CHECK(plan.counts().uploads == 1);
  CHECK(plan.counts().q_computed == 1);
  CHECK(plan.counts().normal_made == 1);
}

// magnitude_sse against the float64 host sum; negative reference values too.
inline void magnitude_sse(Backend& be) {
  const std::vector<cfloat> x = test::random_complex(5000, 41), r = test::random_complex(5000, 42);
  std::vector<cfloat> ref(r.size());
  double want = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    ref[i] = cfloat(r[i].real(), 0.f);
    const double d = std::abs(cdouble(x[i])) - double(r[i].real());
    want += d * d;
  }
  VectorOps& v = be.vec();
  const double got = v.magnitude_sse(*v.upload(x), *v.upload(ref));
  CHECK(std::abs(got - want) <= 1e-6 * want);
  CHECK_THROWS(v.magnitude_sse(*v.upload(x), *v.upload(std::vector<cfloat>(3))));
}

// One plan's operators called repeatedly, in any order, give the same result
// (backends may keep per-trajectory state, such as a NUFFT plan, between calls).
// Guards the GPU's kept NUFFT plan: its fine grid is reused, so a type 1 that
// forgot to clear it, or a type 2 that left it dirty, shows here.
inline void repeated_calls(Backend& be, const Case& c) {
  const Trajectory t = test::random_trajectory(c.grid.voxels(), c.grid, 51);
  PlanOptions po;
  po.fhd = c.fhd;
  Plan plan(be, t, c.grid, po);
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 52), y = test::random_complex(t.size(), 53);
  const std::vector<cfloat> a1 = plan.fhd(y), f1 = plan.forward(x);
  const std::vector<cfloat> f2 = plan.forward(x), a2 = plan.fhd(y);
  // Within rounding: the NUFFT's spreading adds in a varying order (atomics).
  CHECK(test::rel_l2(a2, a1) < c.tol);
  CHECK(test::rel_l2(f2, f1) < c.tol);
  // The host path (Backend::mu, then Backend::fhd from host memory) equals the
  // resident one the plan takes (mu_resident, fhd_resident).
  std::unique_ptr<Points> pts = be.upload_points(t);
  CHECK(test::rel_l2(be.fhd(*pts, be.mu({}, y), c.grid, c.fhd), a1) < c.tol);
}

// SENSE with 3 random coil maps: <E x, y> = <x, E^H y> over all coils, and the
// normal operator equals its explicit form sum_c S_c^H F^H F S_c x + lambda D^H D x
// (F^H F by forward then fhd, D the host first differences).
inline void sense_identities(Backend& be, const Case& c) {
  const Trajectory t = test::random_trajectory(2 * c.grid.voxels(), c.grid, 61);
  PlanOptions po;
  po.fhd = c.fhd;
  Plan plan(be, t, c.grid, po);
  const std::size_t n = c.grid.voxels();
  const CoilData maps = {test::random_complex(n, 62), test::random_complex(n, 63), test::random_complex(n, 64)};
  const std::vector<cfloat> x = test::random_complex(n, 65);
  const CoilData y = {test::random_complex(t.size(), 66), test::random_complex(t.size(), 67),
                      test::random_complex(t.size(), 68)};
  const CoilData ex = sense_forward(plan, maps, x);
  cdouble lhs = 0;
  for (std::size_t k = 0; k < maps.size(); ++k) lhs += inner(ex[k], y[k]);
  const cdouble rhs = inner(x, sense_adjoint(plan, maps, {&y[0], &y[1], &y[2]}));
  CHECK(std::abs(lhs - rhs) <= c.tol * std::abs(lhs));

  const double lambda = 0.7 * double(t.size());
  std::vector<cfloat> want(n);
  for (const std::vector<cfloat>& m : maps) {
    std::vector<cfloat> sx(n);
    for (std::size_t i = 0; i < n; ++i) sx[i] = m[i] * x[i];
    const std::vector<cfloat> tsx = plan.fhd(plan.forward(sx));
    for (std::size_t i = 0; i < n; ++i) want[i] += std::conj(m[i]) * tsx[i];
  }
  std::vector<cfloat> g(std::size_t(gradient_axes(c.grid)) * n), dtd(n);
  gradient_host(x.data(), g.data(), c.grid);
  gradient_adjoint_host(g.data(), dtd.data(), c.grid);
  for (std::size_t i = 0; i < n; ++i) want[i] += float(lambda) * dtd[i];
  VectorOps& v = be.vec();
  VecPtr xv = v.upload(x), yv = v.zeros(n);
  SenseNormal op(plan, maps, lambda);
  op.apply(*xv, *yv);
  CHECK(test::rel_l2(v.download(*yv), want) < 10 * c.tol);
  CHECK_THROWS_AS(SenseNormal(plan, {std::vector<cfloat>(n - 1)}, 0.0), InputError);
}

// The exact off-resonance model (Backend::field_forward / field_adjoint): the
// float64 direct sum with the extra phase f_n t_m, and each other's adjoint.
inline void field_model(Backend& be, const Case& c) {
  const Trajectory t = test::random_trajectory(2 * c.grid.voxels(), c.grid, 71);
  PlanOptions po;
  po.fhd = c.fhd;
  std::unique_ptr<Plan> plan = be.make_plan(t, c.grid, po);
  FieldData f;
  for (std::size_t n = 0; n < c.grid.voxels(); ++n) f.hz.push_back(float(150.0 * std::sin(0.7 * double(n))));
  for (std::size_t m = 0; m < t.size(); ++m) f.times.push_back(float(0.001 + 0.02 * double(m % 9) / 8));
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 72), y = test::random_complex(t.size(), 73);
  const std::vector<cfloat> ax = plan->field_forward(f, x), ahy = plan->field_adjoint(f, y);
  std::vector<cdouble> want(t.size());
  const double two_pi = 6.283185307179586;
  for (std::size_t m = 0; m < t.size(); ++m)
    for (std::size_t n = 0; n < c.grid.voxels(); ++n) {
      const int ix = int(n % c.grid.nx), iy = int(n / c.grid.nx % c.grid.ny), iz = int(n / (c.grid.nx * c.grid.ny));
      const double ph = t.kx[m] * axis_coord(ix, c.grid.nx, c.grid.nx) + t.ky[m] * axis_coord(iy, c.grid.ny, c.grid.ny) +
                        t.kz[m] * axis_coord(iz, c.grid.nz, c.grid.nz) + double(f.hz[n]) * double(f.times[m]);
      want[m] += cdouble(x[n]) * std::polar(1.0, -two_pi * ph);
    }
  CHECK(test::rel_l2(ax, want) < 10 * c.tol);
  const cdouble lhs = inner(ax, y), rhs = inner(x, ahy);
  CHECK(std::abs(lhs - rhs) <= 10 * c.tol * std::abs(lhs));
}

inline void run_all(const MakeBackend& make) {
  std::unique_ptr<Backend> be = make();
  for (const Case& c : cases()) {
    SECTION(c.name + ": adjoint identity") { adjoint_identity(*be, c); }
    SECTION(c.name + ": Toeplitz normal = F^H F, Q Hermitian") { toeplitz_and_q_symmetry(*be, c); }
    SECTION(c.name + ": repeated calls agree") { repeated_calls(*be, c); }
    SECTION(c.name + ": SENSE adjoint and normal operator") { sense_identities(*be, c); }
    SECTION(c.name + ": exact field model") { field_model(*be, c); }
  }
  SECTION("error and plan contract") { error_and_plan_contract(*be); }
  SECTION("magnitude_sse = the float64 host sum") { magnitude_sse(*be); }
}

}  // namespace fhd::conformance
