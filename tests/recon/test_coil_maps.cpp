// Coil sensitivity estimation recovers known smooth maps (up to a common phase
// per voxel): ESPIRiT and the low-resolution method, from exact Cartesian
// calibration data and from radial data through the calibration images.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "catch.hpp"
#include "phantom/coils.hpp"
#include "phantom/phantom.hpp"
#include "phantom/trajectory.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/gather/direct_sum.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

using namespace fhd;

namespace {

struct Case {
  std::unique_ptr<Phantom> phantom = make_phantom("shepp2d");
  ImageGrid grid{64, 64, 1};
  CoilArray coils;
  Case() {
    CoilSpec spec;
    spec.coils = 8;
    spec.dims = 2;
    coils = make_coil_array(spec);
  }
  // Exact calibration data: the coils' analytic k-space on the integer grid.
  Calibration exact_calibration(int cal) const {
    Calibration out{calibration_size(grid, cal), {}};
    Trajectory t;
    for (int y = 0; y < out.size.ny; ++y)
      for (int x = 0; x < out.size.nx; ++x) {
        t.kx.push_back(float(x - out.size.nx / 2));
        t.ky.push_back(float(y - out.size.ny / 2));
        t.kz.push_back(0.f);
      }
    out.kspace = synthesize_coils(*phantom, coils, t, grid.nx, grid.ny, grid.nz);
    return out;
  }
};

// The true maps' error inside the skull's outer ellipse shrunk by `erode` (FOV units).
double map_error(const CoilData& est, const Case& k, double erode = 0) {
  const auto img = voxel_image(*k.phantom, k.grid.nx, k.grid.ny, k.grid.nz);
  std::vector<bool> mask(img.size());
  const double a = 0.69 / 2 - erode, b = 0.92 / 2 - erode;
  for (std::size_t v = 0; v < img.size(); ++v) {
    const double x = double(int(v % k.grid.nx) - k.grid.nx / 2) / k.grid.nx;
    const double y = double(int(v / k.grid.nx) - k.grid.ny / 2) / k.grid.ny;
    mask[v] = img[v] > 0 && x * x / (a * a) + y * y / (b * b) <= 1;
  }
  return map_difference(est, coil_maps(k.coils, k.grid.nx, k.grid.ny, k.grid.nz), mask);
}

}  // namespace

TEST_CASE("map_difference ignores a phase per voxel and sees anything else", "[recon][coils]") {
  const CoilData truth = {{cfloat(3, 0), cfloat(0, 1)}, {cfloat(0, 4), cfloat(1, 0)}};
  // Voxel 0: truth (3, 4i)/5 times e^{i 0.7}; voxel 1: (i, 1)/sqrt2 with coil 1 flipped.
  const cfloat p = std::polar(1.0f, 0.7f);
  const float s = float(1 / std::sqrt(2.0));
  const CoilData est = {{p * cfloat(0.6f, 0), cfloat(0, s)}, {p * cfloat(0, 0.8f), cfloat(-s, 0)}};
  CHECK(map_difference(est, truth, {true, false}) < 1e-6);
  // Voxel 1 alone: e = (i, -1)/sqrt2, t/|t| = (i, 1)/sqrt2, |<e,t>| = 0: distance^2 = 2.
  CHECK(std::abs(map_difference(est, truth, {false, true}) - std::sqrt(2.0)) < 1e-6);
}

TEST_CASE("centered_dft is the centred sum in both directions", "[recon][coils]") {
  const ImageGrid g{6, 5, 4};
  const auto r = test::random_complex(g.voxels(), 8);
  std::vector<cdouble> v(r.begin(), r.end());
  centered_dft(v, g, -1);
  const int q[3] = {4, 1, 3};  // X_q = sum_i x_i e^{-i 2 pi sum_axis (q - n/2)(i - n/2)/n}
  cdouble want = 0;
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 6; ++x) {
        double ph = (q[0] - 3) * (x - 3) / 6.0 + (q[1] - 2) * (y - 2) / 5.0 + (q[2] - 2) * (z - 2) / 4.0;
        want += cdouble(r[x + 6 * (y + 5 * z)]) * std::polar(1.0, -2 * M_PI * ph);
      }
  CHECK(std::abs(v[4 + 6 * (1 + 5 * 3)] - want) < 1e-10);
  centered_dft(v, g, +1);
  for (std::size_t i = 0; i < v.size(); ++i) CHECK(std::abs(v[i] / double(g.voxels()) - cdouble(r[i])) < 1e-12);
}

TEST_CASE("maps_lowres is the Hann-windowed, zero-padded centred inverse DFT over its RSS, odd sizes too",
          "[recon][coils]") {
  const ImageGrid grid{9, 8, 7};
  Calibration cal{calibration_size(grid, 4), {}};
  for (unsigned c = 0; c < 2; ++c) cal.kspace.push_back(test::random_complex(cal.size.voxels(), 60 + c));
  auto hann = [](int q, int n) { return 0.5 * (1 + std::cos(2 * M_PI * (q - n / 2) / n)); };
  const ImageGrid& c = cal.size;
  std::vector<std::vector<cdouble>> low;  // the float64 reference, by centered_dft
  for (const auto& k : cal.kspace) {
    std::vector<cdouble> full(grid.voxels());
    for (int z = 0; z < c.nz; ++z)
      for (int y = 0; y < c.ny; ++y)
        for (int x = 0; x < c.nx; ++x) {
          const std::size_t at = (grid.nx / 2 - c.nx / 2 + x) +
                                 grid.nx * ((grid.ny / 2 - c.ny / 2 + y) + std::size_t(grid.ny) * (grid.nz / 2 - c.nz / 2 + z));
          full[at] = cdouble(k[x + c.nx * (y + c.ny * z)]) * hann(x, c.nx) * hann(y, c.ny) * hann(z, c.nz);
        }
    centered_dft(full, grid, +1);
    low.push_back(std::move(full));
  }
  const CoilData maps = maps_lowres(cal, grid, 0.0);
  REQUIRE(maps.size() == 2);
  for (std::size_t v = 0; v < grid.voxels(); ++v) {
    const double rss = std::sqrt(std::norm(low[0][v]) + std::norm(low[1][v]));
    for (int coil = 0; coil < 2; ++coil) CHECK(std::abs(cdouble(maps[coil][v]) - low[coil][v] / rss) < 1e-5);
  }
}

// All-zero calibration data (a silent coil array, k-space that underflows):
// maps of zeros and an empty support, not 0/0 = NaN in every voxel.
TEST_CASE("maps_lowres of all-zero calibration data are zero, not NaN", "[recon][coils]") {
  const ImageGrid grid{32, 32, 1};
  Calibration cal{ImageGrid{12, 12, 1}, CoilData(3, std::vector<cfloat>(144))};
  for (double crop : {0.0, 0.1})
    for (const std::vector<cfloat>& m : maps_lowres(cal, grid, crop)) CHECK(m == std::vector<cfloat>(grid.voxels()));
  const std::vector<bool> keep = lowres_support(cal, grid, 0.1);
  CHECK(std::count(keep.begin(), keep.end(), true) == 0);
}

TEST_CASE("maps from radial data through the calibration images", "[recon][coils]") {
  Case k;
  TrajectorySpec spec;
  spec.kind = "radial2d";
  spec.nx = spec.ny = 64;
  spec.nz = 1;
  spec.spokes = 100;
  std::vector<Scan> coils(8);
  const Trajectory t = make_trajectory(spec);
  auto data = synthesize_coils(*k.phantom, k.coils, t, 64, 64, 1);
  for (int c = 0; c < 8; ++c) {
    coils[c].grid = k.grid;
    coils[c].traj = t;
    coils[c].data = std::move(data[c]);
    coils[c].provenance["trajectory"] = "radial2d";
  }
  auto be = make_cpu_device();
  const Calibration cal = calibration_from_scans(*be, coils, 24);
  const double espirit = map_error(maps_espirit(cal, k.grid), k);
  const double lowres = map_error(maps_lowres(cal, k.grid), k, 0.05);
  INFO("ESPIRiT error " << espirit << ", low-resolution error (eroded) " << lowres);
  CHECK(espirit < 0.04);  // measured 0.019
  CHECK(lowres < 0.06);   // measured 0.030
}

TEST_CASE("calibration images: every coil's weighted sum near the centre, as the float64 direct sum", "[recon][coils]") {
  Case k;
  TrajectorySpec spec;
  spec.kind = "radial3d";
  spec.nx = spec.ny = spec.nz = 32;
  spec.spokes = 300;
  spec.readout = 32;
  const Trajectory t = make_trajectory(spec);
  CoilSpec cs;
  cs.coils = 3;
  cs.dims = 3;
  const CoilArray array = make_coil_array(cs);
  const auto phantom = make_phantom("shepp3d");
  auto data = synthesize_coils(*phantom, array, t, 32, 32, 32);
  std::vector<Scan> coils(3);
  std::vector<const Scan*> ptrs;
  for (int c = 0; c < 3; ++c) {
    coils[c].grid = {32, 32, 32};
    coils[c].traj = t;
    coils[c].data = std::move(data[c]);
    coils[c].provenance["trajectory"] = "radial3d";
    ptrs.push_back(&coils[c]);
  }
  const CalibrationSamples s = calibration_samples(ptrs, 12);
  REQUIRE(s.traj.size() > 1000);
  REQUIRE(s.traj.size() < t.size());  // only the centre
  REQUIRE(s.weighted.size() == 3 * s.traj.size());
  {  // no sample near the centre: one line, not maps of zeros
    std::vector<Scan> far = coils;
    std::vector<const Scan*> fp;
    for (Scan& f : far) {
      for (float* k : {f.traj.kx.data(), f.traj.ky.data(), f.traj.kz.data()})
        for (std::size_t m = 0; m < f.traj.size(); ++m) k[m] = k[m] < 0 ? -15.f : 15.f;
      fp.push_back(&f);
    }
    CHECK_THROWS_WITH(calibration_samples(fp, 12), Catch::Contains("no sample lies in the calibration region"));
  }
  {  // the weighting: with a scan's own dcf (2 everywhere) each kept sample is twice its data
    std::vector<Scan> given = coils;
    std::vector<const Scan*> gp;
    for (Scan& g : given) {
      g.dcf.assign(t.size(), 2.f);
      gp.push_back(&g);
    }
    const CalibrationSamples w = calibration_samples(gp, 12);
    std::map<std::array<float, 3>, std::size_t> index;
    for (std::size_t m = 0; m < t.size(); ++m) index[{t.kx[m], t.ky[m], t.kz[m]}] = m;
    const std::size_t m = w.traj.size();
    for (int c = 0; c < 3; ++c)
      for (std::size_t j = 0; j < m; j += 97) {
        const std::size_t at = index.at({w.traj.kx[j], w.traj.ky[j], w.traj.kz[j]});
        CHECK(w.weighted[c * m + j] == 2.f * given[c].data[at]);
      }
  }
  auto be = make_cpu_device();
  for (int cal : {12, 13}) {  // a calibration grid of 20^3 and of 21^3 (odd)
    const CalibrationSamples cal_samples = calibration_samples(ptrs, cal);
    INFO("calibration " << cal << ", grid " << cal_samples.low.nx);
    const CoilData images = calibration_images(*be, cal_samples);
    REQUIRE(images.size() == 3);
    const std::size_t m = cal_samples.traj.size();
    for (int c = 0; c < 3; ++c) {
      const std::vector<cfloat> mu(cal_samples.weighted.begin() + std::ptrdiff_t(c * m),
                                   cal_samples.weighted.begin() + std::ptrdiff_t((c + 1) * m));
      const std::vector<cdouble> ref = fhd_reference(cal_samples.traj, mu, cal_samples.low);
      double num = 0, den = 0;
      for (std::size_t v = 0; v < ref.size(); ++v) {
        num += std::norm(cdouble(images[c][v]) - ref[v] / double(cal_samples.low.voxels()));
        den += std::norm(ref[v] / double(cal_samples.low.voxels()));
      }
      INFO("coil " << c << ": relative error " << std::sqrt(num / den));
      CHECK(std::sqrt(num / den) < 1e-4);  // the NUFFT's tolerance is 1e-5
    }
  }
}

TEST_CASE("ESPIRiT and the low-resolution method recover known smooth maps", "[recon][coils]") {
  Case k;
  const Calibration cal = k.exact_calibration(24);
  const double espirit = map_error(maps_espirit(cal, k.grid), k);
  const double lowres = map_error(maps_lowres(cal, k.grid), k, 0.05);
  INFO("ESPIRiT error " << espirit << ", low-resolution error (eroded) " << lowres);
  CHECK(espirit < 0.02);  // measured 0.0073
  CHECK(lowres < 0.05);   // measured 0.023
  // Maps of other coils (another seed: other phases per coil) are far off.
  CoilSpec other;
  other.coils = 8;
  other.dims = 2;
  other.seed = 99;
  const auto wrong = coil_maps(make_coil_array(other), 64, 64, 1);
  CHECK(map_error(wrong, k) > 0.3);
  // The crop zeroes the background only: the FOV's corner (no object, far from
  // every coil's signal) is zero, and inside the maps are those without crop.
  const CoilData cropped = maps_lowres(cal, k.grid), uncropped = maps_lowres(cal, k.grid, 0.0);
  CHECK(cropped[0][0] == cfloat(0));
  CHECK(uncropped[0][0] != cfloat(0));
  CHECK(map_error(cropped, k, 0.05) == Approx(lowres).margin(1e-9));
  // lowres_support is that crop: set exactly where the cropped maps are (the
  // support the true maps get for a comparison on equal terms).
  const std::vector<bool> keep = lowres_support(cal, k.grid);
  std::size_t kept = 0, mismatched = 0;
  for (std::size_t v = 0; v < keep.size(); ++v) {
    kept += keep[v];
    mismatched += keep[v] != (cropped[0][v] != cfloat(0));
  }
  CHECK(mismatched == 0);
  CHECK(kept > keep.size() / 4);  // the object, not nothing
  CHECK(kept < keep.size());      // and not everything
  // ESPIRiT given that support: the same maps inside it, zero outside.
  const CoilData whole = maps_espirit(cal, k.grid), inside = maps_espirit(cal, k.grid, {}, keep);
  std::size_t differ = 0;
  for (std::size_t c = 0; c < whole.size(); ++c)
    for (std::size_t v = 0; v < keep.size(); ++v) differ += inside[c][v] != (keep[v] ? whole[c][v] : cfloat(0));
  CHECK(differ == 0);
  CHECK_THROWS_AS(maps_espirit(cal, k.grid, {}, std::vector<bool>(7, true)), std::invalid_argument);
  EspiritOptions big;
  big.kernel = 30;
  CHECK_THROWS_AS(maps_espirit(cal, k.grid, big), InputError);
  // The line says what the matrix and calibration must reach (the CLI cannot set the kernel).
  CHECK_THROWS_WITH(maps_espirit(cal, k.grid, big),
                    Catch::Contains("ESPIRiT needs a matrix of at least 59 and a calibration of at least 30 per "
                                    "axis; use lowres maps below that"));
}

// A calibration region barely wider than the kernel leaves no null space:
// refused by name, not maps of zeros (which gave an empty image with exit 0).
TEST_CASE("ESPIRiT refuses a calibration region too small for its subspace", "[recon][coils]") {
  Case k;
  try {
    maps_espirit(k.exact_calibration(8), k.grid);
    FAIL("a calibration region of 8 for a kernel of 6 was accepted");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("--calibration"));
  }
  const double error = map_error(maps_espirit(k.exact_calibration(16), k.grid), k);
  INFO("ESPIRiT error at a region of 16: " << error);
  CHECK(error < 0.04);
}
