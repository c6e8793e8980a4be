// Problems that compose (issue 23): SENSE with a field model, TV with a field
// model, SENSE with TV and with the wavelet, through the pipeline on
// consistent data whose answer is known.
#include <cmath>

#include "catch.hpp"
#include "recon/coils/sense.hpp"
#include "recon/field/field.hpp"
#include "recon/pipeline/pipeline.hpp"
#include "test_util.hpp"

using namespace fhd;

namespace {

// Smooth coil maps around the image, normalized to root sum of squares 1.
CoilData ring_maps(const ImageGrid& g, int coils) {
  CoilData maps(coils, std::vector<cfloat>(g.voxels()));
  for (int y = 0; y < g.ny; ++y)
    for (int x = 0; x < g.nx; ++x) {
      std::vector<double> w(coils);
      double rss = 0;
      for (int c = 0; c < coils; ++c) {
        const double a = 6.283185307179586 * c / coils, u = (x + 0.5) / g.nx - 0.5 - 0.6 * std::cos(a),
                     v = (y + 0.5) / g.ny - 0.5 - 0.6 * std::sin(a);
        w[c] = std::exp(-2 * (u * u + v * v));
        rss += w[c] * w[c];
      }
      for (int c = 0; c < coils; ++c)
        maps[c][x + std::size_t(g.nx) * y] = std::polar(float(w[c] / std::sqrt(rss)), float(0.5 * c));
    }
  return maps;
}

// A piecewise-constant image (TV's prior holds), complex.
std::vector<cfloat> blocks(const ImageGrid& g) {
  std::vector<cfloat> x(g.voxels());
  for (int y = 0; y < g.ny; ++y)
    for (int xx = 0; xx < g.nx; ++xx)
      x[xx + std::size_t(g.nx) * y] = cfloat(xx < g.nx / 2 ? 1.0f : 2.0f, y < g.ny / 3 ? 0.5f : -0.5f);
  return x;
}

FieldData field(const ImageGrid& g, std::size_t samples) {
  FieldData f;
  for (int y = 0; y < g.ny; ++y)
    for (int x = 0; x < g.nx; ++x) f.hz.push_back(float(80.0 * std::sin(6.283185307179586 * x / g.nx + y / 5.0)));
  for (std::size_t m = 0; m < samples; ++m) f.times.push_back(float(0.001 + 0.01 * double(m % 16) / 15));
  return f;
}

// Coil scans of `data` (every coil's samples one after another).
std::vector<Scan> coil_scans(const ImageGrid& g, const Trajectory& t, const FieldData& f,
                             const std::vector<cfloat>& data, std::size_t coils) {
  std::vector<Scan> scans(coils);
  for (std::size_t c = 0; c < coils; ++c) {
    scans[c].grid = g;
    scans[c].traj = t;
    scans[c].field = f;
    scans[c].data.assign(data.begin() + std::ptrdiff_t(c * t.size()), data.begin() + std::ptrdiff_t((c + 1) * t.size()));
  }
  return scans;
}

std::vector<const Scan*> pointers(const std::vector<Scan>& s) {
  std::vector<const Scan*> p;
  for (const Scan& x : s) p.push_back(&x);
  return p;
}

ReconOptions sense_options(const CoilData& maps) {
  ReconOptions o;
  o.gridding = false;
  o.coil_combine = "sense";
  o.maps = "given";
  o.maps_crop = 0;
  o.given_maps = std::make_shared<const CoilData>(maps);
  return o;
}

}  // namespace

TEST_CASE("combinations: SENSE with a field model recovers the image; SENSE without it does not", "[combinations]") {
  const ImageGrid g{20, 20, 1};
  const Trajectory t = test::random_trajectory(g.voxels() / 2, g, 3);  // 2x undersampled per coil
  auto dev = make_cpu_device();
  const CoilData maps = ring_maps(g, 4);
  const FieldData f = field(g, t.size());
  const std::vector<cfloat> x0 = test::random_complex(g.voxels(), 4);
  auto plan = Plan::make(*dev, t, g, {});
  const std::vector<Scan> scans =
      coil_scans(g, t, f, sense_op(field_exact_op(plan, f), upload_maps(*dev, maps, g))->apply(x0), maps.size());
  ReconOptions o = sense_options(maps);
  o.iters = 400;
  o.tol = 1e-7;
  o.lambda = 0.0;
  o.field_comp = "exact";
  const ReconResult exact = reconstruct_coils(*dev, pointers(scans), o);
  CHECK(exact.field.method == "exact");
  CHECK(test::rel_l2(exact.methods.front().image, x0) < 1e-3);
  o.field_comp = "segmented";
  const ReconResult seg = reconstruct_coils(*dev, pointers(scans), o);
  CHECK(test::rel_l2(seg.methods.front().image, x0) < 2e-2);
  o.field_comp = "none";
  CHECK(test::rel_l2(reconstruct_coils(*dev, pointers(scans), o).methods.front().image, x0) > 0.1);
}

TEST_CASE("combinations: TV with a field model beats TV without it, and l2 with it", "[combinations]") {
  const ImageGrid g{24, 24, 1};
  const Trajectory t = test::random_trajectory(g.voxels() / 2, g, 5);
  auto dev = make_cpu_device();
  const FieldData f = field(g, t.size());
  const std::vector<cfloat> x0 = blocks(g);
  auto plan = Plan::make(*dev, t, g, {});
  const std::vector<Scan> scans = coil_scans(g, t, f, field_exact_op(plan, f)->apply(x0), 1);
  ReconOptions o;
  o.gridding = false;
  o.iters = 60;
  o.reg = "tv";
  o.lambda = 0.003;
  o.field_comp = "exact";
  const double tv_field = test::rel_l2(run_reconstruction(*dev, scans[0], o).methods.front().image, x0);
  o.field_comp = "none";
  const double tv_plain = test::rel_l2(run_reconstruction(*dev, scans[0], o).methods.front().image, x0);
  o.field_comp = "exact";
  o.reg = "l2";
  o.lambda = 0.0;
  const double l2_field = test::rel_l2(run_reconstruction(*dev, scans[0], o).methods.front().image, x0);
  INFO("TV with the field " << tv_field << ", TV without " << tv_plain << ", l2 with the field " << l2_field);
  CHECK(tv_field < 0.5 * tv_plain);
  CHECK(tv_field < l2_field);  // 2x undersampled: the prior fills what the samples leave
}

TEST_CASE("combinations: SENSE with TV and with the wavelet beat SENSE with l2 on undersampled data", "[combinations]") {
  const ImageGrid g{32, 32, 1};
  const Trajectory t = test::random_trajectory(g.voxels() / 6, g, 7);  // 6x undersampled per coil, 4 coils
  auto dev = make_cpu_device();
  const CoilData maps = ring_maps(g, 4);
  const std::vector<cfloat> x0 = blocks(g);
  auto plan = Plan::make(*dev, t, g, {});
  const std::vector<Scan> scans =
      coil_scans(g, t, {}, sense_op(plan->forward(), upload_maps(*dev, maps, g))->apply(x0), maps.size());
  ReconOptions o = sense_options(maps);
  o.iters = 60;
  o.lambda = 0.003;
  double err[3];
  const char* regs[3] = {"l2", "tv", "wavelet"};
  for (int i = 0; i < 3; ++i) {
    o.reg = regs[i];
    err[i] = test::rel_l2(reconstruct_coils(*dev, pointers(scans), o).methods.front().image, x0);
  }
  INFO("l2 " << err[0] << ", tv " << err[1] << ", wavelet " << err[2]);
  CHECK(err[1] < 0.5 * err[0]);
  CHECK(err[2] < err[0]);
}

TEST_CASE("PSNR per iteration: the last equals the final image's, on a grid of several upload pieces", "[reference]") {
  // The recorder's reference goes to the device in pieces of 2^17 voxels; a
  // 384^2 grid has two and a part. The last iterate's PSNR, summed where the
  // iterate lives, must equal the final image's, scored on the host.
  const ImageGrid g{384, 384, 1};
  const Trajectory t = test::random_trajectory(20000, g, 5);
  std::vector<cfloat> data(t.size());
  for (std::size_t m = 0; m < data.size(); ++m) data[m] = cfloat(std::cos(0.001f * float(m)), 0.5f);
  const std::vector<Scan> scans = coil_scans(g, t, {}, data, 1);
  ReconOptions o;
  o.gridding = false;
  o.iters = 3;
  o.fhd.method = FhdMethod::Nufft;
  auto truth = std::make_shared<Truth>();
  truth->image = [](const ImageGrid& grid) {  // varies over every piece
    std::vector<float> v(grid.voxels());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1e-4f * float(i % 977) + float(i) * 1e-7f;
    return v;
  };
  o.truth = truth;
  auto dev = make_cpu_device();
  const ReconResult r = reconstruct_coils(*dev, pointers(scans), o);
  const MethodResult& it = r.methods.front();
  REQUIRE(it.name == "iterative");
  REQUIRE(it.psnr_per_iter.size() == 3);
  REQUIRE(it.psnr);
  CHECK(it.psnr_per_iter.back() == Approx(*it.psnr).margin(1e-3));
}

TEST_CASE("a scan that leaves an axis unencoded is warned of, once a run", "[combinations]") {
  // 8x8x4 with every kz = 0: each value is spread over the 4 slices at a
  // quarter of itself, as the user's matrix says; nothing said it.
  const ImageGrid g{8, 8, 4};
  Scan s;
  s.grid = g;
  s.traj = test::random_trajectory(200, ImageGrid{8, 8, 1}, 3);
  s.data = test::random_complex(s.traj.size(), 4);
  std::unique_ptr<Device> be = make_cpu_device();
  ReconOptions opt;
  opt.iters = 2;
  opt.gridding = false;
  test::LogCapture log;
  reconstruct_coils(*be, {&s}, opt);
  const std::vector<std::string> lines = log.lines();
  const auto unencoded = std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("the trajectory does not encode z: every sample has kz = 0 while the matrix has 4 voxels") !=
           std::string::npos;
  });
  CHECK(unencoded == 1);
  CHECK(std::none_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find("encode x") != std::string::npos || l.find("encode y") != std::string::npos; }));
}
