// synthesize() scaling and checks, add_noise() statistics and reproducibility.
#include <cmath>
#include <complex>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "phantom/phantom.hpp"

namespace {

bool throws_with(const std::function<void()>& f, const std::string& text) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return std::string(e.what()).find(text) != std::string::npos;
  }
  return false;
}

}  // namespace

TEST_CASE("synthesize is S(k) times the voxel count", "[phantom]") {
  fhd::Trajectory t;
  t.kx = {0.f, 3.5f, -12.f, 20.f};
  t.ky = {0.f, -1.f, 7.25f, -31.f};
  t.kz = {0.f, 2.f, -4.f, 15.f};
  auto p3 = fhd::make_phantom("shepp3d");
  auto d = fhd::synthesize(*p3, t, 64, 48, 32);
  REQUIRE(d.size() == 4);
  const double scale = 64.0 * 48 * 32;
  for (std::size_t m = 0; m < 4; ++m) {
    std::complex<double> ref = p3->kspace(t.kx[m], t.ky[m], t.kz[m]) * scale;
    CHECK(std::abs(std::complex<double>(d[m]) - ref) <= 1e-6 * std::abs(ref) + 1e-3);
  }
  auto p2 = fhd::make_phantom("shepp2d");
  auto d2 = fhd::synthesize(*p2, t, 40, 50, 1);
  for (std::size_t m = 0; m < 4; ++m) {
    std::complex<double> ref = p2->kspace(t.kx[m], t.ky[m], 0) * 2000.0;
    CHECK(std::abs(std::complex<double>(d2[m]) - ref) <= 1e-6 * std::abs(ref) + 1e-4);
  }
}

TEST_CASE("data scaling matches the reference image: D(0) ~ sum of voxels", "[phantom]") {
  // D(0) = N * integral of f, and the sum of the voxel image is N times its
  // midpoint rule, so the two agree up to the voxels cut by outlines. Measured
  // 0.04% (3D, 64^3) and 0.3% (2D, 256^2); any scaling error is far above 1%.
  fhd::Trajectory t;
  t.kx = {0.f};
  t.ky = {0.f};
  t.kz = {0.f};
  for (auto cfg : {std::pair<std::string, int>{"shepp3d", 64}, {"shepp2d", 256}}) {
    auto p = fhd::make_phantom(cfg.first);
    int n = cfg.second, nz = p->dims() == 3 ? n : 1;
    auto img = fhd::voxel_image(*p, n, n, nz);
    double sum = std::accumulate(img.begin(), img.end(), 0.0);
    double d0 = fhd::synthesize(*p, t, n, n, nz)[0].real();
    INFO(cfg.first << ": sum " << sum << " D(0) " << d0);
    CHECK(std::abs(sum - d0) <= 0.01 * d0);
  }
}

TEST_CASE("synthesize rejects a grid that does not fit the phantom", "[phantom]") {
  fhd::Trajectory t;
  t.resize(1);
  auto p2 = fhd::make_phantom("shepp2d");
  auto p3 = fhd::make_phantom("shepp3d");
  CHECK(throws_with([&] { fhd::synthesize(*p2, t, 32, 32, 8); }, "nz = 8"));
  CHECK(throws_with([&] { fhd::synthesize(*p3, t, 32, 32, 1); }, "nz = 1"));
  CHECK(throws_with([&] { fhd::synthesize(*p3, t, 0, 32, 8); }, "nx = 0"));
  CHECK(throws_with([&] { fhd::voxel_image(*p3, 8, -1, 8); }, "ny = -1"));
}

TEST_CASE("add_noise: sigma per part, white, reproducible", "[phantom]") {
  // Constant data of magnitude 2: RMS |D| = 2, so sigma = 0.1 * 2 = 0.2.
  const std::size_t m = 200000;
  std::vector<std::complex<float>> clean(m, std::complex<float>(1.2f, -1.6f));
  auto a = clean, b = clean, c = clean;
  fhd::add_noise(a, 0.1, 42);
  fhd::add_noise(b, 0.1, 42);
  fhd::add_noise(c, 0.1, 43);
  CHECK(a == b);
  CHECK(a != c);
  double sr = 0, si = 0, srr = 0, sii = 0, sri = 0;
  for (std::size_t i = 0; i < m; ++i) {
    double r = double(a[i].real()) - clean[i].real(), q = double(a[i].imag()) - clean[i].imag();
    sr += r, si += q, srr += r * r, sii += q * q, sri += r * q;
  }
  const double sigma = 0.2;
  // Standard errors: mean sigma/sqrt(m) = 4.5e-4, std sigma/sqrt(2m) = 3.2e-4;
  // the bounds are about 5 standard errors.
  CHECK(std::abs(sr / m) <= 2.5e-3);
  CHECK(std::abs(si / m) <= 2.5e-3);
  CHECK(std::abs(std::sqrt(srr / m) - sigma) <= 2e-3);
  CHECK(std::abs(std::sqrt(sii / m) - sigma) <= 2e-3);
  CHECK(std::abs(sri / m) <= 5 * sigma * sigma / std::sqrt(double(m)));
}

TEST_CASE("add_noise: zero leaves data alone, negative throws", "[phantom]") {
  std::vector<std::complex<float>> d = {{1, 2}, {3, 4}};
  auto e = d;
  fhd::add_noise(e, 0.0, 1);
  CHECK(e == d);
  CHECK(throws_with([&] { fhd::add_noise(e, -0.5, 1); }, "noise = -0.5"));
  std::vector<std::complex<float>> empty;
  fhd::add_noise(empty, 0.1, 1);
  CHECK(empty.empty());
}
