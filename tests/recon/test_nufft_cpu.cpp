// The CPU NUFFT against the float64 direct sums of recon/direct_sum: type 1,
// type 2 and Q at tolerances 1e-3 .. 1e-6 and both upsampling factors, 2D and
// 3D, odd and even sizes, with every spreading variant this CPU runs; the
// adjoint identity; batched transforms against single ones; plans reused.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/nufft/nufft_cpu.hpp"
#include "recon/nufft/nufft_horner.hpp"
#include "recon/nufft/nufft_kernels.hpp"
#include "recon/nufft/nufft_spread.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

const ImageGrid kGrids[] = {{16, 16, 1}, {15, 12, 1}, {10, 12, 8}, {9, 7, 11}};
const double kTols[] = {1e-3, 1e-4, 1e-5, 1e-6};
const double kSigmas[] = {2.0, 1.25};

// The spreading kernels this build and CPU have (generic always; avx2 where both can).
std::vector<std::string> simd_variants() {
  std::vector<std::string> v{"generic"};
  if (nufft::detail::avx2_kernels() && &nufft::detail::spread_kernels("auto") == nufft::detail::avx2_kernels())
    v.push_back("avx2");
  return v;
}

// The tolerance is met: a small multiple of tol, plus the float floor (float
// sums and FFTs: ~1e-6 at sigma 2; at sigma 1.25 the deapodization amplifies
// rounding near the band edge, ~5e-6 per axis, see nufft_kernel.hpp: measured
// up to 3.4e-5 for Q on the 24x20 doubled grid, depending on the order the
// points are summed in).
double bound(double tol, double sigma) { return 3 * tol + (sigma == 2.0 ? 2e-6 : 5e-5); }

std::string describe(const ImageGrid& g, double tol, double sigma, const std::string& simd = "auto") {
  return std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) + " tol " +
         std::to_string(tol) + " sigma " + std::to_string(sigma) + " " + simd;
}

nufft::Options options(double tol, double sigma, const std::string& simd = "auto", int threads = 0) {
  nufft::Options o;
  o.tol = tol;
  o.sigma = sigma;
  o.simd = simd;
  o.threads = threads;
  return o;
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
    for (const std::string& simd : simd_variants())
      for (double tol : kTols)
        for (double sigma : kSigmas) {
          nufft::CpuPlan plan(traj, g, g, options(tol, sigma, simd));
          const double err = rel_l2(plan.type1(c), ref);
          INFO(describe(g, tol, sigma, simd) << ": rel. error " << err);
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
    for (const std::string& simd : simd_variants())
      for (double tol : kTols)
        for (double sigma : kSigmas) {
          nufft::CpuPlan plan(traj, g, g, options(tol, sigma, simd));
          const double err = rel_l2(plan.type2(f), ref);
          INFO(describe(g, tol, sigma, simd) << ": rel. error " << err);
          CHECK(err < bound(tol, sigma));
        }
  }
}

TEST_CASE("nufft: type 1 is the adjoint of type 2", "[nufft]") {
  for (const ImageGrid& g : kGrids)
    for (double sigma : kSigmas) {
      const Trajectory traj = test_points(2000, g, 13u);
      nufft::CpuPlan plan(traj, g, g, options(1e-6, sigma));
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
        const double err = rel_l2(nufft::q_by_nufft(traj, w, g, options(tol, sigma)), ref);
        INFO(describe(g, tol, sigma) << ": rel. error " << err);
        CHECK(err < bound(tol, sigma));
      }
    CHECK(rel_l2(nufft::q_by_nufft(traj, {}, g, options(1e-6, 2.0)), q_reference(traj, {}, g)) < bound(1e-6, 2.0));
  }
}

TEST_CASE("nufft plan: fine grid sizes and wrong input sizes", "[nufft]") {
  const ImageGrid g{16, 16, 1};
  const Trajectory traj = random_trajectory(100, g, 1);
  nufft::CpuPlan plan(traj, g, g, options(1e-6, 2.0));
  CHECK(plan.fine() == ImageGrid{32, 32, 1});
  CHECK(plan.kernel().width == 7);
  CHECK(plan.points() == 100);
  CHECK_THROWS_AS(plan.type1(std::vector<cfloat>(99)), std::invalid_argument);
  CHECK_THROWS_AS(plan.type2(std::vector<cfloat>(g.voxels() + 1)), std::invalid_argument);
  nufft::CpuPlan q(traj, g.doubled(), g, options(1e-6, 1.25));
  CHECK(q.fine() == ImageGrid{40, 40, 1});
}

// n transforms in one call run in lanes (one thread per transform, spread
// straight into its own fine grid) and, for the remainder, threaded (the
// subproblems): both must give what single calls give, up to the order of
// float additions.
TEST_CASE("nufft: n transforms batched equal n single calls", "[nufft]") {
  const ImageGrid grids[] = {{16, 14, 1}, {10, 12, 8}};
  for (const ImageGrid& g : grids)
    for (int threads : {1, 2, 3}) {
      const int n = 5;
      const Trajectory traj = test_points(1200, g, 31u);
      const std::vector<cfloat> c = random_complex(traj.size() * n, 32), f = random_complex(g.voxels() * n, 33);
      nufft::CpuPlan batched(traj, g, g, options(1e-6, 2.0, "auto", threads));
      const std::vector<cfloat> f1 = batched.type1(c), c2 = batched.type2(f);
      REQUIRE(f1.size() == g.voxels() * n);
      REQUIRE(c2.size() == traj.size() * n);
      for (int t = 0; t < n; ++t) {
        nufft::CpuPlan single(traj, g, g, options(1e-6, 2.0, "auto", threads));
        const std::vector<cfloat> ct(c.begin() + t * traj.size(), c.begin() + (t + 1) * traj.size());
        const std::vector<cfloat> ft(f.begin() + t * g.voxels(), f.begin() + (t + 1) * g.voxels());
        const std::vector<cfloat> b1(f1.begin() + t * g.voxels(), f1.begin() + (t + 1) * g.voxels());
        const std::vector<cfloat> b2(c2.begin() + t * traj.size(), c2.begin() + (t + 1) * traj.size());
        INFO(describe(g, 1e-6, 2.0) << " threads " << threads << " transform " << t);
        CHECK(rel_l2(b1, single.type1(ct)) < 1e-6);
        CHECK(rel_l2(b2, single.type2(ft)) < 1e-6);
        CHECK(rel_l2(b1, fhd_reference(traj, ct, g)) < bound(1e-6, 2.0));
      }
    }
}

// A batch runs every transform in a lane, the last round too (5 on 2 or 3
// threads): its bits equal one thread's, call after call, whichever lane took
// which transform. Threaded spreading (one transform on several threads)
// would vary in the last bits.
TEST_CASE("nufft: a batch of type 1s is bitwise repeatable and equals one thread's", "[nufft]") {
  const ImageGrid g{12, 10, 9};
  const Trajectory traj = test_points(2000, g, 51u);
  const int n = 5;
  const std::vector<cfloat> c = random_complex(traj.size() * n, 52);
  nufft::CpuPlan one(traj, g, g, options(1e-6, 2.0, "auto", 1));
  const std::vector<cfloat> want = one.type1(c);
  for (int threads : {2, 3}) {
    nufft::CpuPlan plan(traj, g, g, options(1e-6, 2.0, "auto", threads));
    INFO("threads " << threads);
    for (int call = 0; call < 4; ++call) CHECK(plan.type1(c) == want);
  }
}

TEST_CASE("nufft on the CPU device: type1_batch is the plan's batch; wrong sizes are refused", "[nufft]") {
  const ImageGrid g{12, 10, 9};
  const Trajectory traj = test_points(1500, g, 61u);
  const int n = 3;
  const std::vector<cfloat> c = random_complex(traj.size() * n, 62);
  auto dev = make_cpu_device();
  const auto points = dev->upload_points(traj);
  const auto plan = dev->kernels<NufftKernels>().plan(*points, g, g, 1e-6);
  const auto in = dev->upload(c);
  const auto out = dev->zeros(g.voxels() * n);
  plan->type1_batch(*in, *out, n);
  nufft::CpuPlan direct(traj, g, g, options(1e-6, 2.0, "auto", 0));
  CHECK(dev->download(*out) == direct.type1(c));  // a batch is bitwise repeatable
  const auto short_out = dev->zeros(g.voxels() * (n - 1));
  CHECK_THROWS_AS(plan->type1_batch(*in, *short_out, n), std::invalid_argument);
  CHECK_THROWS_AS(plan->type1_batch(*in, *out, 0), std::invalid_argument);
}

// A plan's later calls must not see an earlier call's grids: one thread per
// transform is deterministic, so reuse gives identical bits; threaded
// spreading adds overlapping subgrids in the order the threads get there.
TEST_CASE("nufft: a plan reused across calls gives identical results", "[nufft]") {
  const ImageGrid g{12, 10, 9};
  const Trajectory traj = test_points(1500, g, 41u);
  const std::vector<cfloat> c = random_complex(traj.size(), 42), f = random_complex(g.voxels(), 43);
  const std::vector<cfloat> other_c = random_complex(traj.size() * 2, 44), other_f = random_complex(g.voxels() * 2, 45);
  for (int threads : {1, 2}) {
    nufft::CpuPlan plan(traj, g, g, options(1e-6, 2.0, "auto", threads));
    const std::vector<cfloat> a1 = plan.type1(c), a2 = plan.type2(f);
    plan.type1(other_c);  // other data, and a batch, in between
    plan.type2(other_f);
    const std::vector<cfloat> b1 = plan.type1(c), b2 = plan.type2(f);
    INFO("threads " << threads);
    if (threads == 1) {
      CHECK(a1 == b1);
      CHECK(a2 == b2);
    } else {
      CHECK(rel_l2(b1, a1) < 1e-6);
      CHECK(a2 == b2);  // interpolation only reads the grid
    }
    // set_points replaces the points: the plan then matches a fresh one.
    const Trajectory moved = test_points(900, g, 46u);
    plan.set_points(moved);
    nufft::CpuPlan fresh(moved, g, g, options(1e-6, 2.0, "auto", threads));
    const std::vector<cfloat> cm = random_complex(moved.size(), 47);
    CHECK(rel_l2(plan.type1(cm), fresh.type1(cm)) < 1e-6);
  }
}

TEST_CASE("nufft: the Horner table matches the ES kernel", "[nufft]") {
  for (double tol : kTols)
    for (double sigma : kSigmas) {
      const nufft::KernelParams kp = nufft::kernel_for(tol, sigma);
      const nufft::HornerTable& t = nufft::horner_table(kp, tol);
      CHECK(&t == &nufft::horner_table(kp, tol));  // made once per process
      REQUIRE(t.width == kp.width);
      CHECK(t.lanes % 8 == 0);
      CHECK(t.max_error < std::max(1e-2 * tol, 1e-6));
      // Independently of the table's own measure: cell values at s inside each cell.
      double worst = 0;
      for (int i = 0; i < kp.width; ++i)
        for (double s : {-0.99, -0.5, 0.0, 0.37, 0.99}) {
          const double z = 0.5 * (s + 1.0) - 0.5 * kp.width + i;
          worst = std::max(worst, std::abs(nufft::horner_value(t, i, s) - nufft::es_kernel(z, kp)));
        }
      INFO("tol " << tol << " sigma " << sigma << " degree " << t.degree << " error " << worst);
      CHECK(worst < std::max(1e-2 * tol, 1e-6));
      for (int i = t.width; i < t.lanes; ++i) CHECK(nufft::horner_value(t, i, 0.3) == 0.0);
    }
}

TEST_CASE("nufft: spreading variants and threads agree; unknown variants are refused", "[nufft]") {
  const ImageGrid g{11, 9, 7};
  const Trajectory traj = test_points(800, g, 51u);
  const std::vector<cfloat> c = random_complex(traj.size(), 52);
  const std::vector<cfloat> base = nufft::CpuPlan(traj, g, g, options(1e-5, 2.0, "generic", 1)).type1(c);
  for (const std::string& simd : simd_variants())
    for (int threads : {1, 2}) {
      nufft::CpuPlan plan(traj, g, g, options(1e-5, 2.0, simd, threads));
      CHECK(std::string(plan.simd()) == simd);
      CHECK(plan.threads() == threads);
      CHECK(rel_l2(plan.type1(c), base) < 1e-6);
    }
  CHECK_THROWS_AS(nufft::CpuPlan(g, g, options(1e-5, 2.0, "sse9")), std::invalid_argument);
}

// A slab of one voxel along x or y (a scan file's matrix may say 7x1x5): the
// idle axis goes last in the plan; the 1-voxel axis of Q's doubled grid (2
// modes) is transformed as any other. Before: "x and y need at least 2 voxels".
TEST_CASE("nufft: an axis of one voxel along x or y matches the float64 direct sums; 1D modes are refused",
          "[nufft]") {
  const ImageGrid grids[] = {{7, 1, 5}, {1, 7, 5}, {1, 6, 1}, {6, 4, 1}, {4, 1, 6}};
  for (const ImageGrid& g : grids) {
    const bool line = (g.nx > 1) + (g.ny > 1) + (g.nz > 1) < 2;
    const Trajectory traj = test_points(400, g, 5u);
    const std::vector<float> w(traj.size(), 0.75f);
    CHECK(rel_l2(nufft::q_by_nufft(traj, w, g, options(1e-6, 2.0)), q_reference(traj, w, g)) < bound(1e-6, 2.0));
    if (line) {
      CHECK_THROWS_WITH(nufft::CpuPlan(traj, g, g, options(1e-6, 2.0)),
                        Catch::Contains("two axes need 2 or more (an axis of 1 mode is idle; a 1D transform"));
      continue;
    }
    for (double sigma : kSigmas) {
      nufft::CpuPlan plan(traj, g, g, options(1e-5, sigma));
      const std::vector<cfloat> c = random_complex(traj.size(), 5), f = random_complex(g.voxels(), 9);
      const double e1 = rel_l2(plan.type1(c), fhd_reference(traj, c, g));
      const double e2 = rel_l2(plan.type2(f), forward_reference(traj, f, g));
      INFO(describe(g, 1e-5, sigma) << ": type 1 " << e1 << ", type 2 " << e2);
      CHECK(e1 < bound(1e-5, sigma));
      CHECK(e2 < bound(1e-5, sigma));
      CHECK(plan.modes() == g);  // as given, not the plan's axis order
    }
  }
}
