// Field-inhomogeneity compensation (recon/field/field.hpp): the exact model against
// a float64 direct sum and its adjoint identity, the time-segmented operators
// against the exact ones (errors shrinking with L), zero field as without,
// the segment rule, and bad field data refused.
#include <cmath>
#include <random>

#include "catch.hpp"
#include "core/error.hpp"
#include "core/phase.hpp"
#include "recon/field/field.hpp"
#include "recon/pipeline/pipeline.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;

namespace {

constexpr double kTwoPi = 6.283185307179586;

// A smooth field map of +-hz over the grid, and times of readouts of `readout`
// samples over `seconds` starting at 1 ms.
FieldData test_field(const ImageGrid& g, std::size_t samples, double hz, double seconds, int readout = 16) {
  FieldData f;
  f.hz.resize(g.voxels());
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix)
      f.hz[ix + std::size_t(g.nx) * iy] = float(hz * std::sin(kTwoPi * (ix + 0.5) / g.nx) * std::cos(3.0 * iy / g.ny));
  for (std::size_t m = 0; m < samples; ++m) f.times.push_back(float(0.001 + seconds * double(m % readout) / (readout - 1)));
  return f;
}

std::vector<cdouble> forward_reference(const Trajectory& k, const FieldData& f, const std::vector<cfloat>& x,
                                       const ImageGrid& g) {
  std::vector<cdouble> d(k.size());
  for (std::size_t m = 0; m < k.size(); ++m)
    for (int iy = 0; iy < g.ny; ++iy)
      for (int ix = 0; ix < g.nx; ++ix) {
        const std::size_t n = ix + std::size_t(g.nx) * iy;
        const double ph = k.kx[m] * axis_coord(ix, g.nx, g.nx) + k.ky[m] * axis_coord(iy, g.ny, g.ny) +
                          double(f.hz[n]) * double(f.times[m]);
        d[m] += cdouble(x[n]) * std::polar(1.0, -kTwoPi * ph);
      }
  return d;
}

// A^H A + lambda D^H D for a model A.
OpPtr regularized(const OpPtr& a, Plan& plan, double lambda) {
  return sum({a->normal(), scale(lambda, laplacian(plan.device(), plan.grid()))});
}

}  // namespace

TEST_CASE("field: the exact model is the direct sum, and A^H its adjoint", "[field]") {
  const ImageGrid g{16, 12, 1};
  const Trajectory k = test::random_trajectory(320, g, 5);
  const FieldData f = test_field(g, k.size(), 150, 0.02);
  std::unique_ptr<Device> be = make_cpu_device();
  auto plan = Plan::make(*be, k, g, {});
  const OpPtr a = field_exact_op(plan, f);
  const std::vector<cfloat> x = test::random_complex(g.voxels(), 6), d = test::random_complex(k.size(), 7);
  const std::vector<cfloat> ax = a->apply(x);
  CHECK(test::rel_l2(ax, forward_reference(k, f, x, g)) < 1e-5);
  const std::vector<cfloat> ahd = a->adjoint(d);
  const cdouble lhs = test::inner(d, ax), rhs = test::inner(ahd, x);
  CHECK(std::abs(lhs - rhs) <= 1e-5 * std::abs(lhs));
  // And the field matters: without it the data differ by far more than that.
  FieldData none = f;
  std::fill(none.hz.begin(), none.hz.end(), 0.f);
  CHECK(test::rel_l2(field_exact_op(plan, none)->apply(x), ax) > 0.1);
  CHECK(test::rel_l2(field_exact_op(plan, none)->apply(x), plan->forward_model(x)) < 1e-5);
}

TEST_CASE("field: the segmented normal operator approaches the exact one as L grows", "[field]") {
  const ImageGrid g{16, 16, 1};
  const Trajectory k = test::random_trajectory(600, g, 11);
  const FieldData f = test_field(g, k.size(), 150, 0.02);
  std::unique_ptr<Device> be = make_cpu_device();
  for (FhdMethod method : {FhdMethod::Exact, FhdMethod::Nufft}) {
    PlanOptions po;
    po.fhd.method = method;
    auto plan = Plan::make(*be, k, g, po);
    const std::vector<cfloat> x = test::random_complex(g.voxels(), 12), d = test::random_complex(k.size(), 13);
    const double lambda = 0.01 * plan->q0();
    const OpPtr exact = field_exact_op(plan, f);
    const std::vector<cfloat> want = regularized(exact, *plan, lambda)->apply(x);
    const std::vector<cfloat> want_adj = exact->adjoint(d);
    double previous = 1e9;
    for (int L : {4, 8, 12}) {
      const TimeSegments seg = time_segments(f, L);
      const OpPtr a = field_segmented_op(plan, f, seg);
      const int before = plan->counts().q_computed;
      const OpPtr op = regularized(a, *plan, lambda);
      CHECK(plan->counts().q_computed - before == L * L);  // L diagonal kernels, L(L-1)/2 pairs of two
      const double err = test::rel_l2(op->apply(x), want);
      const double err_adj = test::rel_l2(a->adjoint(d), want_adj);
      INFO("L = " << L << ": normal " << err << ", adjoint " << err_adj << ", interpolator " << seg.rms_error);
      CHECK(err < previous);
      CHECK(err_adj < 4 * seg.rms_error + 1e-4);
      previous = err;
    }
    CHECK(previous < 1e-3);  // L = 12 at +-150 Hz over 20 ms (1.1e-4 measured)
  }
}

TEST_CASE("field: zero field gives the plain operators", "[field]") {
  const ImageGrid g{16, 16, 1};
  const Trajectory k = test::random_trajectory(500, g, 21);
  FieldData f = test_field(g, k.size(), 0, 0.01);
  std::unique_ptr<Device> be = make_cpu_device();
  auto plan = Plan::make(*be, k, g, {});
  const std::vector<cfloat> x = test::random_complex(g.voxels(), 22), d = test::random_complex(k.size(), 23);
  const double lambda = 0.03 * plan->q0();
  const std::vector<cfloat> plain = regularized(plan->forward(), *plan, lambda)->apply(x);
  CHECK(choose_segments(f) == 1);
  const TimeSegments seg = time_segments(f, 1);
  const OpPtr segmented = field_segmented_op(plan, f, seg);
  CHECK(test::rel_l2(regularized(segmented, *plan, lambda)->apply(x), plain) < 1e-5);
  CHECK(test::rel_l2(regularized(field_exact_op(plan, f), *plan, lambda)->apply(x), plain) < 1e-4);
  CHECK(test::rel_l2(segmented->adjoint(d), plan->fhd(d)) < 1e-6);
}

TEST_CASE("field: the segment rule grows with field range and readout length", "[field]") {
  const ImageGrid g{32, 32, 1};
  const std::size_t m = 4096;
  auto rule = [&](double hz, double s) {
    const FieldData f = test_field(g, m, hz, s, 256);
    const int L = choose_segments(f);
    CHECK(time_segments(f, L).rms_error <= kSegmentTolerance);
    if (L > 1) CHECK(time_segments(f, L - 1).rms_error > kSegmentTolerance);
    return L;
  };
  const int small = rule(50, 0.01), range = rule(150, 0.01), longer = rule(150, 0.02);
  INFO("L: 50 Hz 10 ms " << small << ", 150 Hz 10 ms " << range << ", 150 Hz 20 ms " << longer);
  CHECK(small < range);
  CHECK(range < longer);
  CHECK(longer <= kMaxSegments);
}

// The segments' RMS error at every voxel's own field value and every sample
// time: what the image sees (rms_error is judged at the map's quantiles).
double rms_error_at_voxels(const FieldData& f, const TimeSegments& s) {
  const std::size_t m = s.samples(), L = s.tau.size();
  double sum = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (float hz : f.hz) {
      cdouble approx = 0;
      for (std::size_t l = 0; l < L; ++l) approx += cdouble(s.a[l * m + i]) * off_resonance_phase(hz, s.tau[l]);
      sum += std::norm(off_resonance_phase(hz, f.times[i]) - approx);
    }
  return std::sqrt(sum / double(m * f.hz.size()));
}

TEST_CASE("field: one far voxel does not hide the map's own spread from the segments", "[field]") {
  // A smooth +-60 Hz map and one background voxel at 2500 Hz, readouts of
  // 20 ms: 64 fixed-width bins put the map in 3-4 bins 40 Hz wide, chose 4
  // segments, reported 6e-10 and erred 0.28 at the voxels.
  const ImageGrid g{16, 16, 1};
  FieldData f = test_field(g, 64, 60, 0.02, 64);
  f.hz[3] = 2500;
  const int L = choose_segments(f);
  const TimeSegments s = time_segments(f, L);
  const double at_voxels = rms_error_at_voxels(f, s);
  INFO("L " << L << " rms_error " << s.rms_error << " at the voxels " << at_voxels);
  CHECK(s.rms_error <= kSegmentTolerance);
  CHECK(at_voxels <= 2 * kSegmentTolerance);
  f.hz[3] = 0;  // without the far voxel, the same holds with fewer segments
  const int plain = choose_segments(f);
  CHECK(rms_error_at_voxels(f, time_segments(f, plain)) <= 2 * kSegmentTolerance);
  CHECK(plain < L);
}

TEST_CASE("field: bad field data are refused with the field named", "[field]") {
  const ImageGrid g{8, 8, 1};
  FieldData f = test_field(g, 40, 100, 0.01);
  CHECK_NOTHROW(check_field(f, g, 40, "scan.h5"));
  CHECK_THROWS_AS(check_field(f, g, 41, "scan.h5"), InputError);
  FieldData bad = f;
  bad.hz[3] = std::nanf("");
  CHECK_THROWS_WITH(check_field(bad, g, 40, "scan.h5"), Catch::Contains("field map[3]"));
  bad = f;
  bad.times[5] = -0.001f;
  CHECK_THROWS_WITH(check_field(bad, g, 40, "scan.h5"), Catch::Contains("sample time[5]"));
  bad = f;
  bad.hz.pop_back();
  CHECK_THROWS_AS(check_field(bad, g, 40, "scan.h5"), InputError);
  CHECK_THROWS_AS(time_segments(f, 0), InputError);
}

namespace {

Scan field_scan(const ImageGrid& g, const Trajectory& k, const FieldData& f, const std::vector<cfloat>& data) {
  Scan s;
  s.grid = g;
  s.traj = k;
  s.field = f;
  s.data = data;
  return s;
}

ReconOptions solve_options(const std::string& method) {
  ReconOptions opt;
  opt.iters = 300;
  opt.tol = 1e-7;
  opt.lambda = 0;
  opt.gridding = false;
  opt.field_comp = method;
  return opt;
}

}  // namespace

TEST_CASE("field: the pipeline recovers an image through the field; without compensation it does not", "[field]") {
  const ImageGrid g{16, 16, 1};
  const Trajectory k = test::random_trajectory(2 * g.voxels(), g, 31);
  const FieldData f = test_field(g, k.size(), 100, 0.01);
  std::unique_ptr<Device> be = make_cpu_device();
  const std::vector<cfloat> x0 = test::random_complex(g.voxels(), 32);
  auto plan = Plan::make(*be, k, g, {});
  const Scan s = field_scan(g, k, f, field_exact_op(plan, f)->apply(x0));
  const ReconResult exact = run_reconstruction(*be, s, solve_options("exact"));
  CHECK(exact.field.method == "exact");
  CHECK(test::rel_l2(exact.methods.front().image, x0) < 1e-3);
  const ReconResult seg = run_reconstruction(*be, s, solve_options("auto"));  // a map: segmented
  CHECK(seg.field.method == "segmented");
  CHECK(seg.field.segments == choose_segments(f));
  CHECK(test::rel_l2(seg.methods.front().image, x0) < 1e-2);
  const ReconResult none = run_reconstruction(*be, s, solve_options("none"));
  CHECK(none.field.method == "none");
  CHECK(test::rel_l2(none.methods.front().image, x0) > 0.1);
}

TEST_CASE("field: a zero field map gives today's reconstruction", "[field]") {
  const ImageGrid g{16, 16, 1};
  const Trajectory k = test::random_trajectory(400, g, 41);
  std::unique_ptr<Device> be = make_cpu_device();
  const Scan s = field_scan(g, k, test_field(g, k.size(), 0, 0.01), test::random_complex(k.size(), 42));
  ReconOptions opt = solve_options("none");
  opt.iters = 20;
  opt.lambda = 0.03;
  const std::vector<cfloat> plain = run_reconstruction(*be, s, opt).methods.front().image;
  for (const char* m : {"exact", "segmented"}) {
    opt.field_comp = m;
    INFO(m);
    CHECK(test::rel_l2(run_reconstruction(*be, s, opt).methods.front().image, plain) < 1e-4);
  }
}

TEST_CASE("field: bad field_comp and segments are refused before any work", "[field]") {
  const ImageGrid g{8, 8, 1};
  const Trajectory k = test::random_trajectory(40, g, 51);
  std::unique_ptr<Device> be = make_cpu_device();
  Scan plain = field_scan(g, k, {}, test::random_complex(k.size(), 52));
  ReconOptions opt = solve_options("exact");
  CHECK_THROWS_WITH(run_reconstruction(*be, plain, opt), Catch::Contains("no field map"));
  opt.field_comp = "fast";
  CHECK_THROWS_WITH(run_reconstruction(*be, plain, opt), Catch::Contains("field_comp = fast"));
  opt.field_comp = "auto";
  opt.segments = 4;
  CHECK_THROWS_WITH(run_reconstruction(*be, plain, opt), Catch::Contains("segments = 4"));
  Scan with = field_scan(g, k, test_field(g, k.size(), 50, 0.01), plain.data);
  opt.field_comp = "exact";
  CHECK_THROWS_WITH(run_reconstruction(*be, with, opt), Catch::Contains("segments = 4"));
}
