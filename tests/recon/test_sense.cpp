// SENSE through the pipeline (recon/coils/sense.hpp, reconstruct_coils with
// coil_combine = "sense"); its operator identities are in the conformance suite.
#include <cmath>

#include "catch.hpp"
#include "core/error.hpp"
#include "recon/device/device.hpp"
#include "recon/pipeline/pipeline.hpp"
#include "recon/coils/sense.hpp"
#include "sense_normal_check.hpp"
#include "test_util.hpp"

using namespace fhd;

namespace {

// Four smooth maps, one per image corner, normalized to root sum of squares 1.
CoilData corner_maps(const ImageGrid& g) {
  CoilData maps(4, std::vector<cfloat>(g.voxels()));
  for (int y = 0; y < g.ny; ++y)
    for (int x = 0; x < g.nx; ++x) {
      const double u = (x + 0.5) / g.nx, v = (y + 0.5) / g.ny;
      const double w[4] = {std::exp(-2 * (u * u + v * v)), std::exp(-2 * ((1 - u) * (1 - u) + v * v)),
                           std::exp(-2 * (u * u + (1 - v) * (1 - v))),
                           std::exp(-2 * ((1 - u) * (1 - u) + (1 - v) * (1 - v)))};
      double rss = 0;
      for (double a : w) rss += a * a;
      for (int c = 0; c < 4; ++c)
        maps[c][x + std::size_t(g.nx) * y] = std::polar(float(w[c] / std::sqrt(rss)), float(0.7 * c));
    }
  return maps;
}

}  // namespace

TEST_CASE("sense: consistent coil data with the true maps gives back the image; rss does not", "[sense]") {
  const ImageGrid g{24, 24, 1};
  const Trajectory t = test::random_trajectory(g.voxels() / 2, g, 71);  // 2x undersampled per coil
  std::unique_ptr<Device> be = make_cpu_device();
  const CoilData maps = corner_maps(g);
  const std::vector<cfloat> x0 = test::random_complex(g.voxels(), 72);
  auto plan = Plan::make(*be, t, g, {});
  const std::vector<cfloat> stacked = sense_op(plan->forward(), upload_maps(*be, maps, g))->apply(x0);
  CoilData data;
  for (std::size_t c = 0; c < maps.size(); ++c)
    data.emplace_back(stacked.begin() + std::ptrdiff_t(c * t.size()), stacked.begin() + std::ptrdiff_t((c + 1) * t.size()));
  std::vector<Scan> scans(maps.size());
  std::vector<const Scan*> coils;
  for (std::size_t c = 0; c < maps.size(); ++c) {
    scans[c].grid = g;
    scans[c].traj = t;
    scans[c].data = data[c];
    coils.push_back(&scans[c]);
  }
  ReconOptions opt;
  opt.iters = 1000;  // SENSE runs plain CG: converged, not stopped early
  opt.tol = 1e-7;
  opt.lambda = 0;
  opt.gridding = false;
  opt.coil_combine = "sense";
  opt.maps = "given";
  opt.given_maps = std::make_shared<const CoilData>(maps);
  const ReconResult sense = reconstruct_coils(*be, coils, opt);
  // 4 coils x M/2 samples = 2x as many equations as unknowns: the solution is x0.
  CHECK(test::rel_l2(sense.methods.front().image, x0) < 1e-3);
  opt.coil_combine = "rss";
  const ReconResult rss = reconstruct_coils(*be, coils, opt);
  std::vector<cfloat> mag0(x0.size());
  for (std::size_t i = 0; i < x0.size(); ++i) mag0[i] = std::abs(x0[i]);
  CHECK(test::rel_l2(rss.methods.front().image, mag0) > 0.1);  // each coil alone is underdetermined
}

TEST_CASE("sense: bad options are refused before any work", "[sense]") {
  const ImageGrid g{8, 8, 1};
  const Trajectory t = test::random_trajectory(40, g, 81);
  std::unique_ptr<Device> be = make_cpu_device();
  Scan a;
  a.grid = g;
  a.traj = t;
  a.data = test::random_complex(t.size(), 82);
  Scan b = a;
  ReconOptions opt;
  opt.coil_combine = "both";
  CHECK_THROWS_AS(reconstruct_coils(*be, {&a, &b}, opt), InputError);
  opt.coil_combine = "sense";
  opt.maps = "given";
  opt.given_maps = std::make_shared<const CoilData>(CoilData(3, std::vector<cfloat>(g.voxels(), 0.5f)));
  CHECK_THROWS_WITH(reconstruct_coils(*be, {&a, &b}, opt), Catch::Contains("must number the coils, 2"));
  // All-zero maps: SENSE saw no signal and returned zeros after 0 iterations.
  opt.given_maps = std::make_shared<const CoilData>(CoilData(2, std::vector<cfloat>(g.voxels())));
  CHECK_THROWS_WITH(reconstruct_coils(*be, {&a, &b}, opt),
                    "coil maps: values = all zero: coil maps need a sensitivity somewhere");
  // Host work made for other coils: the coils given now are compared again.
  opt.maps = "lowres";
  opt.given_maps.reset();
  Scan moved = a;
  moved.traj.kx[17] += 0.25f;
  CHECK_THROWS_AS(reconstruct_coils(*be, {&a, &moved}, opt, prepare_host_work({&a, &b}, opt)), InputError);
  HostWork checked = prepare_host_work({&a, &b}, opt);
  CHECK(checked.checked == std::vector<const Scan*>{&a, &b});
  CHECK_NOTHROW(reconstruct_coils(*be, {&a, &b}, opt, std::move(checked)));  // the same coils: no comparison
  // k-space so small that float32 squares it to zero: the root sum of squares
  // and the maps made an image of zeros (exit 0). Refused; all-zero data are not.
  Scan tiny_a = a, tiny_b = b;
  for (Scan* s : {&tiny_a, &tiny_b})
    for (cfloat& v : s->data) v *= 1e-30f;
  CHECK_THROWS_WITH(reconstruct_coils(*be, {&tiny_a, &tiny_b}, opt),
                    Catch::StartsWith("k-space: largest sample magnitude = ") &&
                        Catch::Contains("below 1e-15: float32 squares such values to zero"));
  for (Scan* s : {&tiny_a, &tiny_b})
    for (cfloat& v : s->data) v *= 0.0f;
  CHECK_NOTHROW(reconstruct_coils(*be, {&tiny_a, &tiny_b}, opt));
}

TEST_CASE("sense: the batched normal equals the per-coil sum of S^H T S", "[sense]") {
  std::unique_ptr<Device> dev = make_cpu_device();
  for (const ImageGrid& g : {ImageGrid{20, 16, 1}, ImageGrid{10, 8, 6}}) {
    const Trajectory t = test::random_trajectory(g.voxels(), g, 81);
    auto plan = Plan::make(*dev, t, g, {});
    // 6 coils: the sum over groups, each into y after the first.
    test::check_sense_normal(*dev, plan->forward(), g, 6, 82);
    test::check_sense_normal(*dev, plan->forward(), g, 1, 83);
    test::check_sense_adjoint(*dev, plan->forward(), g, 6, 84);  // the per-coil stack: the CPU does not batch
  }
}

TEST_CASE("sense: the calibration samples chosen beforehand (prepare_host_work) are the ones the maps use",
          "[sense]") {
  const ImageGrid g{24, 24, 1};
  const Trajectory t = test::random_trajectory(g.voxels(), g, 91);
  std::unique_ptr<Device> be = make_cpu_device();
  const CoilData maps = corner_maps(g);
  auto plan = Plan::make(*be, t, g, {});
  const std::vector<cfloat> stacked =
      sense_op(plan->forward(), upload_maps(*be, maps, g))->apply(test::random_complex(g.voxels(), 92));
  std::vector<Scan> scans(maps.size());
  std::vector<const Scan*> coils;
  for (std::size_t c = 0; c < maps.size(); ++c) {
    scans[c].grid = g;
    scans[c].traj = t;
    scans[c].data.assign(stacked.begin() + std::ptrdiff_t(c * t.size()), stacked.begin() + std::ptrdiff_t((c + 1) * t.size()));
    coils.push_back(&scans[c]);
  }
  ReconOptions opt;
  opt.iters = 20;
  opt.gridding = false;
  opt.coil_combine = "sense";  // maps "lowres": estimated from the calibration region
  HostWork host = prepare_host_work(coils, opt);
  REQUIRE(host.calibration);
  CHECK(host.calibration->coils == coils.size());
  const ReconResult inside = reconstruct_coils(*be, coils, opt);  // chosen in the coil maps stage
  const ReconResult before = reconstruct_coils(*be, coils, opt, std::move(host));
  CHECK(test::rel_l2(before.methods.front().image, inside.methods.front().image) < 1e-6);
  // Samples from the coils in another order give other maps: the prepared ones are used.
  std::vector<const Scan*> swapped = {coils[1], coils[0], coils[2], coils[3]};
  const ReconResult other = reconstruct_coils(*be, coils, opt, prepare_host_work(swapped, opt));
  CHECK(test::rel_l2(other.methods.front().image, inside.methods.front().image) > 1e-2);
  // Given maps without a crop need no calibration; nor does rss.
  opt.maps = "given";
  opt.maps_crop = 0;
  opt.given_maps = std::make_shared<const CoilData>(maps);
  CHECK_FALSE(prepare_host_work(coils, opt).calibration);
  opt.coil_combine = "rss";
  opt.maps = "lowres";
  CHECK_FALSE(prepare_host_work(coils, opt).calibration);
}
