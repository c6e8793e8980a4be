// The CPU NUFFT against the float64 direct sums of recon/direct_sum: type 1,
// type 2 and Q at two tolerances and both upsampling factors, 2D and 3D, odd
// and even sizes; the adjoint identity between the two types.
#include <cmath>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/nufft/nufft_cpu.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

const ImageGrid kGrids[] = {{16, 16, 1}, {15, 12, 1}, {10, 12, 8}, {9, 7, 11}};
const double kTols[] = {1e-3, 1e-6};
const double kSigmas[] = {2.0, 1.25};

// The tolerance is met: a small multiple of tol, plus the float floor (float
// sums and FFTs: ~1e-6 at sigma 2; at sigma 1.25 the deapodization amplifies
// rounding near the band edge, ~5e-6 per axis, see nufft_kernel.hpp).
double bound(double tol, double sigma) { return 3 * tol + (sigma == 2.0 ? 2e-6 : 3e-5); }

std::string describe(const ImageGrid& g, double tol, double sigma) {
  return std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) + " tol " +
         std::to_string(tol) + " sigma " + std::to_string(sigma);
}

// Points past the band and on its edges too: the transforms are exact for any k.
Trajectory test_points(std::size_t m, const ImageGrid& g, unsigned seed) {
  Trajectory t = random_trajectory(m, g, seed);
  t.kx[0] = -0.5f * g.nx;
  t.ky[1] = 0.5f * g.ny - 1e-3f;
  t.kx[2] = 1.7f * g.nx;
  t.ky[3] = -2.2f * g.ny;
  return t;
}

}  // namespace

TEST_CASE("nufft type 1 matches the float64 direct sum (FhD)", "[nufft]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = test_points(1500, g, 3u + unsigned(g.nx));
    const std::vector<cfloat> c = random_complex(traj.size(), 5);
    const std::vector<cdouble> ref = fhd_reference(traj, c, g);
    for (double tol : kTols)
      for (double sigma : kSigmas) {
        nufft::CpuPlan plan(traj, g, g, {tol, sigma});
        const double err = rel_l2(plan.type1(c), ref);
        INFO(describe(g, tol, sigma) << ": rel. error " << err);
        CHECK(err < bound(tol, sigma));
        if (tol == 1e-3) CHECK(err > 1e-6);  // the tolerance does set the width
      }
  }
}

TEST_CASE("nufft type 2 matches the float64 forward model", "[nufft]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = test_points(1200, g, 7u + unsigned(g.ny));
    const std::vector<cfloat> f = random_complex(g.voxels(), 9);
    const std::vector<cdouble> ref = forward_reference(traj, f, g);
    for (double tol : kTols)
      for (double sigma : kSigmas) {
        nufft::CpuPlan plan(traj, g, g, {tol, sigma});
        const double err = rel_l2(plan.type2(f), ref);
        INFO(describe(g, tol, sigma) << ": rel. error " << err);
        CHECK(err < bound(tol, sigma));
      }
  }
}

TEST_CASE("nufft: type 1 is the adjoint of type 2", "[nufft]") {
  for (const ImageGrid& g : kGrids)
    for (double sigma : kSigmas) {
      const Trajectory traj = test_points(2000, g, 13u);
      nufft::CpuPlan plan(traj, g, g, {1e-6, sigma});
      const std::vector<cfloat> x = random_complex(g.voxels(), 1), y = random_complex(traj.size(), 2);
      // Plan reuse: the second call on the same plan must not see the first's grid.
      const std::vector<cfloat> ax = plan.type2(x), ahy = plan.type1(y);
      CHECK(rel_l2(plan.type2(x), ax) == 0.0);
      const cdouble lhs = inner(ax, y), rhs = inner(x, ahy);
      INFO(describe(g, 1e-6, sigma) << ": <Ax,y> " << lhs << " <x,A^H y> " << rhs);
      CHECK(std::abs(lhs - rhs) < 1e-5 * std::abs(lhs));
    }
}

TEST_CASE("nufft Q on the doubled grid matches the exact Q", "[nufft]") {
  const ImageGrid grids[] = {{12, 10, 1}, {7, 8, 6}};
  for (const ImageGrid& g : grids) {
    const Trajectory traj = test_points(1000, g, 21u);
    std::vector<float> w(traj.size());
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.5f + float(i % 7) / 7.f;
    const std::vector<cdouble> ref = q_reference(traj, w, g);
    for (double tol : kTols)
      for (double sigma : kSigmas) {
        const double err = rel_l2(nufft::q_by_nufft(traj, w, g, {tol, sigma}), ref);
        INFO(describe(g, tol, sigma) << ": rel. error " << err);
        CHECK(err < bound(tol, sigma));
      }
    CHECK(rel_l2(nufft::q_by_nufft(traj, {}, g, {1e-6, 2.0}), q_reference(traj, {}, g)) < bound(1e-6, 2.0));
  }
}

TEST_CASE("nufft plan: fine grid sizes and wrong input sizes", "[nufft]") {
  const ImageGrid g{16, 16, 1};
  const Trajectory traj = random_trajectory(100, g, 1);
  nufft::CpuPlan plan(traj, g, g, {1e-6, 2.0});
  CHECK(plan.fine() == ImageGrid{32, 32, 1});
  CHECK(plan.kernel().width == 7);
  CHECK(plan.points() == 100);
  CHECK_THROWS_AS(plan.type1(std::vector<cfloat>(99)), std::invalid_argument);
  CHECK_THROWS_AS(plan.type2(std::vector<cfloat>(g.voxels() + 1)), std::invalid_argument);
  nufft::CpuPlan q(traj, g.doubled(), g, {1e-6, 1.25});
  CHECK(q.fine() == ImageGrid{40, 40, 1});
}
