// CPU FhD and Q against the float64 direct sums of recon/direct_sum.
#include <cmath>
#include <string>

#include "catch.hpp"
#include "recon/gather/cpu_fhd.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/gather/fast_trig.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

// Relative l2 bounds against the float64 reference, by trig mode:
// double: float64 throughout, rounding of ~300-term sums -> ~1e-15, bound 1e-12.
// single/sfu: float phases (|k.x| up to ~N/2 cycles, so ~1e-7 abs phase error
// in cycles) and float tile sums: expect a few 1e-7 relative; bound 1e-5.
double bound(TrigMode t) { return t == TrigMode::Double ? 1e-12 : 1e-5; }

const ImageGrid kGrids[] = {{9, 8, 1}, {8, 7, 1}, {5, 6, 7}, {6, 4, 5}};
const TrigMode kModes[] = {TrigMode::Double, TrigMode::Single, TrigMode::Sfu};
const char* kKernels[] = {"direct", "separable"};

}  // namespace

TEST_CASE("fast_sincos2pi is within 2e-7 of sin/cos over a period", "[cpu]") {
  double worst = 0;
  const int steps = 1000000;
  for (int i = 0; i <= steps; ++i) {
    const double t = -0.5 + double(i) / steps;
    float s, c;
    fast_sincos2pi(float(t), s, c);
    const double a = 6.283185307179586 * double(float(t));
    worst = std::max({worst, std::abs(s - std::sin(a)), std::abs(c - std::cos(a))});
  }
  INFO("max abs error " << worst);
  CHECK(worst < 2e-7);
}

TEST_CASE("cpu FhD matches the float64 direct sum", "[cpu]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = random_trajectory(333, g, 7u + unsigned(g.nx));
    const std::vector<cfloat> mu = random_complex(traj.size(), 11);
    const std::vector<cdouble> ref = fhd_reference(traj, mu, g);
    for (const char* kernel : kKernels)
      for (TrigMode t : kModes) {
        const double err = rel_l2(cpu_fhd_wide(traj, mu, g, {t, kernel}), ref);
        INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz << " kernel " << kernel << " trig " << to_string(t)
                     << " rel l2 " << err);
        CHECK(err < bound(t));
        CHECK(rel_l2(cpu_fhd(traj, mu, g, {t, kernel}), ref) < std::max(bound(t), 2e-7));
      }
  }
}

TEST_CASE("cpu Q matches the float64 direct sum and is Hermitian", "[cpu]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = random_trajectory(257, g, 3u + unsigned(g.ny));
    std::vector<float> w(traj.size());
    for (std::size_t m = 0; m < w.size(); ++m) w[m] = 0.5f + float(m % 7) / 7.0f;
    const std::vector<cdouble> ref = q_reference(traj, w, g);
    const ImageGrid d = g.doubled();
    for (const char* kernel : kKernels)
      for (TrigMode t : kModes) {
        const std::vector<cdouble> q = cpu_q_wide(traj, w, g, {t, kernel});
        INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz << " kernel " << kernel << " trig " << to_string(t));
        CHECK(rel_l2(q, ref) < bound(t));
        // Q(-y) = conj(Q(y)) wherever -y is on the grid (all indices > 0 on doubled axes).
        double asym = 0;
        for (int jz = d.nz > 1 ? 1 : 0; jz < d.nz; ++jz)
          for (int jy = 1; jy < d.ny; ++jy)
            for (int jx = 1; jx < d.nx; ++jx) {
              const int mz = d.nz > 1 ? d.nz - jz : 0;
              const cdouble a = q[jx + d.nx * (jy + std::size_t(d.ny) * jz)];
              const cdouble b = q[(d.nx - jx) + d.nx * ((d.ny - jy) + std::size_t(d.ny) * mz)];
              asym = std::max(asym, std::abs(a - std::conj(b)));
            }
        // Points on the self-mirrored plane are computed on both sides, so allow rounding.
        double peak = 0;
        for (const cdouble& v : ref) peak = std::max(peak, std::abs(v));
        CHECK(asym <= bound(t) * peak);
      }
  }
}

TEST_CASE("float64 references: <F x, y> = <x, F^H y>", "[cpu]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = random_trajectory(101, g, 5);
    const std::vector<cfloat> x = random_complex(g.voxels(), 1), y = random_complex(traj.size(), 2);
    const cdouble lhs = inner(forward_reference(traj, x, g), y);
    const cdouble rhs = inner(x, fhd_reference(traj, y, g));
    INFO("lhs " << lhs << " rhs " << rhs);
    CHECK(std::abs(lhs - rhs) < 1e-12 * std::abs(lhs));
    // The single-precision CPU FhD is the same adjoint to float accuracy.
    const cdouble rhs_cpu = inner(x, cpu_fhd(traj, y, g, {TrigMode::Single, ""}));
    CHECK(std::abs(lhs - rhs_cpu) < 1e-5 * std::abs(lhs));
  }
}

TEST_CASE("unknown kernel names and bad lengths are rejected", "[cpu]") {
  const ImageGrid g{4, 4, 1};
  const Trajectory traj = random_trajectory(10, g, 1);
  CHECK_THROWS(cpu_fhd(traj, random_complex(10, 1), g, {TrigMode::Single, "nufft"}));
  CHECK_THROWS(cpu_fhd(traj, random_complex(9, 1), g, {TrigMode::Single, ""}));
  CHECK_THROWS(cpu_q(traj, std::vector<float>(3, 1.0f), g, {TrigMode::Single, ""}));
  CHECK(cpu_kernel_name({TrigMode::Single, ""}) == "separable");
}

TEST_CASE("float64 FhD at chosen voxels is the full reference at those voxels", "[cpu][reference]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = random_trajectory(200, g, 5u + unsigned(g.nx));
    const std::vector<cfloat> mu = random_complex(traj.size(), 3);
    const std::vector<cdouble> all = fhd_reference(traj, mu, g);
    const std::vector<std::size_t> at = {g.voxels() - 1, 0, g.voxels() / 2, 0};  // any order, repeats allowed
    const std::vector<cdouble> some = fhd_reference(traj, mu, g, at);
    REQUIRE(some.size() == at.size());
    for (std::size_t i = 0; i < at.size(); ++i) CHECK(some[i] == all[at[i]]);  // the same sum, bit for bit
  }
  const ImageGrid g{4, 4, 1};
  const Trajectory traj = random_trajectory(10, g, 1);
  CHECK_THROWS(fhd_reference(traj, random_complex(10, 1), g, {g.voxels()}));
  CHECK(fhd_reference(traj, random_complex(10, 1), g, {}).empty());
}
