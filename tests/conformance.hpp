#pragma once
// The conformance suite: one contract, held against every device present (the
// CPU always: tests/recon/test_conformance.cpp; the GPU where one is usable:
// tests/gpu/test_conformance.cpp). Each check is an identity the maths
// guarantees, so a device that breaks it is wrong, whatever it agrees with:
// - every operator factory and every composition the pipeline builds keeps
//   the adjoint identity <A x, y> = <x, A^H y>, and its normal() equals A^H A;
// - the devices' vector operations and plans keep their contract;
// - every prox equals its direct solution, every solver reaches the known
//   minimiser of a small problem (tests/solver_conformance.hpp).
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "core/error.hpp"
#include "recon/coils/sense.hpp"
#include "recon/device/device.hpp"
#include "recon/field/field.hpp"
#include "recon/ops/device_stack.hpp"
#include "recon/ops/diff.hpp"
#include "recon/ops/fft.hpp"
#include "recon/ops/wavelet.hpp"
#include "recon/plan/plan.hpp"
#include "recon/plan/precond.hpp"
#include "test_util.hpp"

namespace fhd::conformance {

using MakeDevice = std::function<std::unique_ptr<Device>()>;

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

// <A x, y> = <x, A^H y> for random x, y.
inline void check_adjoint(LinOp& a, double tol, unsigned seed) {
  const std::vector<cfloat> x = test::random_complex(a.in().size(), seed), y = test::random_complex(a.out().size(), seed + 1);
  const cdouble lhs = inner(a.apply(x), y), rhs = inner(x, a.adjoint(y));
  INFO(a.name() << ": <Ax,y> = " << lhs << ", <x,A^H y> = " << rhs);
  CHECK(std::abs(lhs - rhs) <= tol * std::abs(lhs));
}

// normal() x = A^H (A x).
inline void check_normal(LinOp& a, double tol, unsigned seed) {
  const std::vector<cfloat> x = test::random_complex(a.in().size(), seed);
  const std::vector<cfloat> want = a.adjoint(a.apply(x)), got = a.normal()->apply(x);
  INFO(a.name() << ": normal " << a.normal()->name());
  CHECK(test::rel_l2(got, want) < tol);
}

inline FieldData test_field(const ImageGrid& g, std::size_t samples) {
  FieldData f;
  for (std::size_t n = 0; n < g.voxels(); ++n) f.hz.push_back(float(150.0 * std::sin(0.7 * double(n))));
  for (std::size_t m = 0; m < samples; ++m) f.times.push_back(float(0.001 + 0.02 * double(m % 9) / 8));
  return f;
}

inline std::shared_ptr<DeviceVector> random_on(Device& dev, std::size_t n, unsigned seed) {
  return dev.upload(test::random_complex(n, seed));
}

struct NamedOp {
  std::string name;
  OpPtr op;
  double tol;
};

// Every operator factory, and every composition the pipeline builds, for one case.
inline std::vector<NamedOp> operators(Device& dev, const Case& c) {
  const ImageGrid& g = c.grid;
  const std::size_t n = g.voxels();
  const Trajectory t = test::random_trajectory(2 * n, g, 11);
  PlanOptions po;
  po.fhd = c.fhd;
  auto plan = Plan::make(dev, t, g, po);
  PlanOptions phi_po = po;
  phi_po.phi = test::random_complex(t.size(), 12);
  auto phi_plan = Plan::make(dev, t, g, phi_po);
  const FieldData f = test_field(g, t.size());
  const TimeSegments seg = time_segments(f, 3);
  std::vector<std::shared_ptr<DeviceVector>> maps;
  for (unsigned s = 0; s < 3; ++s) maps.push_back(random_on(dev, n, 20 + s));
  const OpPtr d = finite_differences(dev, g), fft = fft_op(dev, g);
  const OpPtr dg = diag(random_on(dev, n, 30), image_shape(g)), id = identity(dev, image_shape(g));
  const OpPtr segmented = field_segmented_op(plan, f, seg);
  const double tol = c.tol;
  return {
      {"F (plan.fourier)", plan->fourier(), tol},
      {"Phi F (plan.forward)", phi_plan->forward(), tol},
      {"diag(Phi) (plan.phi)", phi_plan->phi(), 1e-6},
      {"D (finite differences)", d, 1e-6},
      {"D^H D (laplacian)", laplacian(dev, g), 1e-6},
      {"FFT", fft, 1e-6},
      {"diag", dg, 1e-6},
      {"identity", id, 1e-6},
      {"wavelet (db4)", wavelet_op(dev, g), 1e-6},
      {"exact field model", field_exact_op(plan, f), 10 * tol},
      {"segmented field model", segmented, 10 * tol},
      {"SENSE (vstack of A diag(S_c))", sense_op(phi_plan->forward(), maps), tol},
      {"SENSE with a field model", sense_op(segmented, maps), 10 * tol},
      {"compose", compose({fft, dg}), 1e-6},
      {"sum", sum({dg, id, scale(cdouble(0.5, -2.0), fft)}), 1e-6},
      {"scale", scale(cdouble(2.0, 1.0), d), 1e-6},
      {"hstack", hstack({dg, fft}), 1e-6},
      {"vstack", vstack({dg, d}), 1e-6},
      {"adjoint (H)", d->H(), 1e-6},
      {"l2 system T + lambda D^H D", sum({plan->toeplitz(), scale(0.7 * double(t.size()), laplacian(dev, g))}), tol},
      {"ADMM x-step A^H A + rho D^H D", sum({plan->forward()->normal(), scale(0.3, d->normal())}), tol},
  };
}

// Every operator: the adjoint identity and normal == A^H A.
inline void operator_identities(Device& dev, const Case& c) {
  unsigned seed = 100;
  for (const NamedOp& o : operators(dev, c)) {
    SECTION(o.name) {
      check_adjoint(*o.op, o.tol, seed);
      check_normal(*o.op, 10 * o.tol, seed + 7);
    }
    seed += 10;
  }
}

// T = plan.toeplitz() is F^H W F exactly, and Q is Hermitian about lag 0:
// Q(-y) = conj(Q(y)); the device's circulant spectrum is the host's fold of Q.
inline void toeplitz_and_q_symmetry(Device& dev, const Case& c) {
  const Trajectory t = test::random_trajectory(2 * c.grid.voxels(), c.grid, 21);
  PlanOptions po;
  po.fhd = c.fhd;
  auto plan = Plan::make(dev, t, c.grid, po);
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 22);
  CHECK(test::rel_l2(plan->toeplitz()->apply(x), plan->fhd(plan->forward_model(x))) < 10 * c.tol);
  const ImageGrid d = c.grid.doubled();
  const std::vector<cfloat> q = test::to_vector(plan->q_host());
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
  const std::vector<double> spec = plan->circulant_spectrum(), host = circulant_eigenvalues(q, c.grid, 0.0);
  REQUIRE(spec.size() == host.size());
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < spec.size(); ++i) diff += std::pow(spec[i] - host[i], 2), norm += host[i] * host[i];
  CHECK(std::sqrt(diff / norm) < 1e-5);
}

// The error contract every device keeps: lengths checked with InputError, 2D
// trajectories may leave kz empty (the same as zeros), once-per-trajectory
// work done once, vectors of another device refused.
inline void error_and_plan_contract(Device& dev, const MakeDevice& make) {
  const ImageGrid g{8, 6, 1};
  Trajectory t = test::random_trajectory(40, g, 31);
  Trajectory bad = t;
  bad.ky.pop_back();
  CHECK_THROWS_AS(dev.upload_points(bad), InputError);
  CHECK_THROWS_AS(Plan::make(dev, t, g, PlanOptions{FhdOptions{}, std::vector<cfloat>(3)}), InputError);
  auto plan = Plan::make(dev, t, g, {});
  CHECK_THROWS_AS(plan->fhd(std::vector<cfloat>(t.size() + 1)), InputError);
  CHECK_THROWS_AS(plan->forward_model(std::vector<cfloat>(g.voxels() - 1)), InputError);
  const std::vector<cfloat> d = test::random_complex(t.size(), 32);
  Trajectory flat = t;
  std::fill(flat.kz.begin(), flat.kz.end(), 0.0f);
  Trajectory empty_kz = flat;
  empty_kz.kz.clear();
  CHECK(test::rel_l2(Plan::make(dev, empty_kz, g, {})->fhd(d), Plan::make(dev, flat, g, {})->fhd(d)) == 0.0);
  plan->q();
  plan->q();
  plan->toeplitz();
  plan->forward()->normal();
  CHECK(plan->counts().uploads == 1);
  CHECK(plan->counts().q_computed == 1);
  CHECK(plan->counts().normal_made == 1);
  std::unique_ptr<Device> other = make();
  VecPtr foreign = other->zeros(g.voxels()), mine = dev.zeros(t.size());
  CHECK_THROWS_AS(plan->fourier()->apply(*foreign, *mine), std::invalid_argument);
  CHECK_THROWS_AS(plan->fourier()->apply(*dev.zeros(g.voxels() + 1), *mine), std::invalid_argument);
}

// magnitude_sse against the float64 host sum; views and axpby's cases.
inline void vector_operations(Device& dev) {
  const std::vector<cfloat> x = test::random_complex(5000, 41), r = test::random_complex(5000, 42);
  std::vector<cfloat> ref(r.size());
  double want = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    ref[i] = cfloat(r[i].real(), 0.f);
    const double d = std::abs(cdouble(x[i])) - double(r[i].real());
    want += d * d;
  }
  const double got = dev.magnitude_sse(*dev.upload(x), *dev.upload(ref));
  CHECK(std::abs(got - want) <= 1e-6 * want);
  CHECK_THROWS(dev.magnitude_sse(*dev.upload(x), *dev.upload(std::vector<cfloat>(3))));
  // y = a x + b y for each of the device's special cases, against the host.
  const cdouble ab[][2] = {{0.0, 0.0}, {0.0, {0.5, 1.0}}, {{2.0, -1.0}, 1.0}, {1.0, {0.25, 0.5}}, {{0.3, 0.1}, {-1.5, 2.0}}};
  for (const auto& [a, b] : ab) {
    VecPtr xv = dev.upload(x), yv = dev.upload(r);
    dev.axpby(a, *xv, b, *yv);
    const std::vector<cfloat> got_y = dev.download(*yv);
    double err = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      err = std::max(err, std::abs(cdouble(got_y[i]) - (a * cdouble(x[i]) + b * cdouble(r[i]))));
    INFO("a = " << a << ", b = " << b);
    CHECK(err < 1e-5);
  }
  // A view writes into its parent.
  VecPtr whole = dev.zeros(10);
  dev.to_device(x.data(), *whole->view(4, 3));
  const std::vector<cfloat> w = dev.download(*whole);
  CHECK(w[3] == cfloat(0.f));
  CHECK(w[4] == x[0]);
  CHECK(w[6] == x[2]);
  CHECK(w[7] == cfloat(0.f));
  CHECK_THROWS_AS(whole->view(8, 3), std::invalid_argument);
}

// One plan's operators called repeatedly, in any order, give the same result
// (a NUFFT plan's fine grid is reused: a type 1 that forgot to clear it, or a
// type 2 that left it dirty, shows here).
inline void repeated_calls(Device& dev, const Case& c) {
  const Trajectory t = test::random_trajectory(c.grid.voxels(), c.grid, 51);
  PlanOptions po;
  po.fhd = c.fhd;
  auto plan = Plan::make(dev, t, c.grid, po);
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 52), y = test::random_complex(t.size(), 53);
  const std::vector<cfloat> a1 = plan->fhd(y), f1 = plan->forward_model(x);
  const std::vector<cfloat> f2 = plan->forward_model(x), a2 = plan->fhd(y);
  // Within rounding: the NUFFT's spreading adds in a varying order (atomics).
  CHECK(test::rel_l2(a2, a1) < c.tol);
  CHECK(test::rel_l2(f2, f1) < c.tol);
  CHECK(plan->counts().nufft_plans <= 1);
}

// The exact off-resonance model against the float64 direct sum with the
// extra phase f_n t_m.
inline void field_model(Device& dev, const Case& c) {
  const Trajectory t = test::random_trajectory(2 * c.grid.voxels(), c.grid, 71);
  auto plan = Plan::make(dev, t, c.grid, {});
  const FieldData f = test_field(c.grid, t.size());
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 72);
  const std::vector<cfloat> ax = field_exact_op(plan, f)->apply(x);
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
}

// A partition across two devices equals the single device: the exact
// gather's adjoint and Q by slabs, and a stack of operators across devices.
inline void partitions(Device& dev, const MakeDevice& make, const Case& c) {
  std::unique_ptr<Device> second = make();
  const Trajectory t = test::random_trajectory(2 * c.grid.voxels(), c.grid, 81);
  PlanOptions po;
  po.fhd = c.fhd;
  po.split = SplitRule::always();  // these sizes are far below the rule's
  auto one = Plan::make(dev, t, c.grid, po);
  auto two = Plan::make(dev, t, c.grid, po, {second.get()});
  const std::vector<cfloat> y = test::random_complex(t.size(), 82);
  CHECK(test::rel_l2(two->fhd(y), one->fhd(y)) < c.tol);
  CHECK(test::rel_l2(two->q_host(), one->q_host()) < c.tol);
  check_adjoint(*two->fourier(), c.tol, 83);
  const OpPtr local = diag(random_on(dev, c.grid.voxels(), 84), image_shape(c.grid));
  const OpPtr away = diag(random_on(*second, c.grid.voxels(), 85), image_shape(c.grid));
  const OpPtr stack = vstack_across(dev, {local, away});
  check_adjoint(*stack, 1e-6, 86);
  const std::vector<cfloat> x = test::random_complex(c.grid.voxels(), 87);
  std::vector<cfloat> want = local->apply(x);
  const std::vector<cfloat> b = second->download(*[&] {
    VecPtr xv = second->upload(x), yv = second->zeros(x.size());
    away->apply(*xv, *yv);
    return yv;
  }());
  want.insert(want.end(), b.begin(), b.end());
  CHECK(test::rel_l2(stack->apply(x), want) < 1e-6);
}

inline void run_all(const MakeDevice& make) {
  std::unique_ptr<Device> dev = make();
  for (const Case& c : cases()) {
    SECTION(c.name + ": every operator's adjoint and normal") { operator_identities(*dev, c); }
    SECTION(c.name + ": T = F^H F, Q Hermitian, the circulant spectrum") { toeplitz_and_q_symmetry(*dev, c); }
    SECTION(c.name + ": repeated calls agree") { repeated_calls(*dev, c); }
    SECTION(c.name + ": partitions across devices") { partitions(*dev, make, c); }
  }
  SECTION("3D exact field model = the float64 sum") { field_model(*dev, cases()[1]); }
  SECTION("error and plan contract") { error_and_plan_contract(*dev, make); }
  SECTION("vector operations") { vector_operations(*dev); }
}

}  // namespace fhd::conformance
