// The phantoms against references built here from the published tables:
// analytic volumes, a long-double evaluation of the transform formulas, and
// direct numerical integration of the ellipsoids' indicator functions.
#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "catch.hpp"
#include "phantom/phantom.hpp"

namespace {

constexpr double kPi = 3.14159265358979323846;

// A table row in u units (docs/phantom.md / MATLAB's modified Shepp-Logan).
struct Row {
  double p, a, b, c, x0, y0, z0, phi;
};

std::vector<Row> koay_rows() {
  return {{2, .69, .92, .90, 0, 0, 0, 0},
          {-.8, .6624, .874, .88, 0, 0, 0, 0},
          {-.2, .41, .16, .21, -.22, 0, -.25, 3 * kPi / 5},
          {-.2, .31, .11, .22, .22, 0, -.25, 2 * kPi / 5},
          {.2, .21, .25, .5, 0, .35, -.25, 0},
          {.2, .046, .046, .046, 0, .1, -.25, 0},
          {.1, .046, .023, .02, -.08, -.65, -.25, 0},
          {.1, .046, .023, .02, .06, -.65, -.25, kPi / 2},
          {.2, .056, .04, .1, .06, -.105, .625, kPi / 2},
          {-.2, .056, .056, .1, 0, .1, .625, 0}};
}

std::vector<Row> toft_rows() {
  const double d = kPi / 180;
  return {{1, .69, .92, 0, 0, 0, 0, 0},          {-.8, .6624, .874, 0, 0, -.0184, 0, 0},
          {-.2, .11, .31, 0, .22, 0, 0, -18 * d}, {-.2, .16, .41, 0, -.22, 0, 0, 18 * d},
          {.1, .21, .25, 0, 0, .35, 0, 0},        {.1, .046, .046, 0, 0, .1, 0, 0},
          {.1, .046, .046, 0, 0, -.1, 0, 0},      {.1, .046, .023, 0, -.08, -.605, 0, 0},
          {.1, .023, .023, 0, 0, -.606, 0, 0},    {.1, .023, .046, 0, .06, -.605, 0, 0}};
}

// In FOV units (x = u/2).
Row to_fov(Row r) { return {r.p, r.a / 2, r.b / 2, r.c / 2, r.x0 / 2, r.y0 / 2, r.z0 / 2, r.phi}; }

// Quadratic form of the in-plane part at (x, y), FOV units.
double plane_form(const Row& e, double x, double y) {
  double X = x - e.x0, Y = y - e.y0, c = std::cos(e.phi), s = std::sin(e.phi);
  double u = (c * X + s * Y) / e.a, v = (-s * X + c * Y) / e.b;
  return u * u + v * v;
}

// The conventions' transform formulas, evaluated in long double.
std::complex<double> reference_kspace(const std::vector<Row>& rows, bool is3d, double kx,
                                      double ky, double kz) {
  std::complex<long double> sum = 0;
  const long double pi = 3.141592653589793238462643L;
  for (Row u : rows) {
    Row e = to_fov(u);
    long double c = std::cos((long double)e.phi), s = std::sin((long double)e.phi);
    long double ka = e.a * (c * kx + s * ky), kb = e.b * (-s * kx + c * ky);
    long double kc = is3d ? e.c * kz : 0;
    long double t = 2 * pi * std::sqrt(ka * ka + kb * kb + kc * kc);
    long double mag = is3d ? e.p * 4 / 3.0L * pi * e.a * e.b * e.c * 3 *
                                 (std::sin(t) - t * std::cos(t)) / (t * t * t)
                           : e.p * pi * e.a * e.b * 2 * std::cyl_bessel_j(1.0L, t) / t;
    long double ph = -2 * pi * (kx * (long double)e.x0 + ky * (long double)e.y0 +
                                (is3d ? kz * (long double)e.z0 : 0));
    sum += std::polar(mag, ph);
  }
  return {double(sum.real()), double(sum.imag())};
}

// integral over [lo, hi] of exp(-i 2 pi k t) dt.
std::complex<double> segment(double k, double lo, double hi) {
  if (k == 0) return hi - lo;
  const std::complex<double> i(0, 1);
  return (std::exp(-2 * kPi * i * k * lo) - std::exp(-2 * kPi * i * k * hi)) / (2 * kPi * i * k);
}

// 3D: exact along z per (x, y) column (the ellipsoids rotate about z only, so a
// column meets each in one interval), midpoint rule with n x n columns in x, y.
std::vector<std::complex<double>> integrate3d(const std::vector<double>& ks, int n) {
  std::vector<std::complex<double>> out(ks.size() / 3, 0.0);
  const double h = 1.0 / n;
  for (Row u : koay_rows()) {
    Row e = to_fov(u);
    for (int iy = 0; iy < n; ++iy)
      for (int ix = 0; ix < n; ++ix) {
        double x = -0.5 + (ix + 0.5) * h, y = -0.5 + (iy + 0.5) * h, q = plane_form(e, x, y);
        if (q > 1) continue;
        double half = e.c * std::sqrt(1 - q);
        for (std::size_t m = 0; m < out.size(); ++m) {
          double kx = ks[3 * m], ky = ks[3 * m + 1], kz = ks[3 * m + 2];
          out[m] += e.p * h * h * std::polar(1.0, -2 * kPi * (kx * x + ky * y)) *
                    segment(kz, e.z0 - half, e.z0 + half);
        }
      }
  }
  return out;
}

// 2D: exact along y per x column (the column meets a rotated ellipse in one
// interval, the roots of a quadratic), midpoint rule with n columns in x.
std::complex<double> integrate2d(double kx, double ky, int n) {
  std::complex<double> sum = 0;
  const double h = 1.0 / n;
  for (Row u : toft_rows()) {
    Row e = to_fov(u);
    double c = std::cos(e.phi), s = std::sin(e.phi), ia = 1 / (e.a * e.a), ib = 1 / (e.b * e.b);
    double A = s * s * ia + c * c * ib;
    for (int ix = 0; ix < n; ++ix) {
      double x = -0.5 + (ix + 0.5) * h, X = x - e.x0;
      double B = 2 * X * c * s * (ia - ib), C = X * X * (c * c * ia + s * s * ib) - 1;
      double disc = B * B - 4 * A * C;
      if (disc <= 0) continue;
      double y1 = e.y0 + (-B - std::sqrt(disc)) / (2 * A), y2 = e.y0 + (-B + std::sqrt(disc)) / (2 * A);
      sum += e.p * h * std::polar(1.0, -2 * kPi * kx * x) * segment(ky, y1, y2);
    }
  }
  return sum;
}

double dc_analytic(const std::vector<Row>& rows, bool is3d) {
  double sum = 0;
  for (Row u : rows) {
    Row e = to_fov(u);
    sum += is3d ? e.p * 4.0 / 3.0 * kPi * e.a * e.b * e.c : e.p * kPi * e.a * e.b;
  }
  return sum;
}

double table_image(const std::vector<Row>& rows, bool is3d, double x, double y, double z) {
  double sum = 0;
  for (Row u : rows) {
    Row e = to_fov(u);
    double w = is3d ? (z - e.z0) / e.c : 0;
    if (plane_form(e, x, y) + w * w <= 1) sum += e.p;
  }
  return sum;
}

}  // namespace

TEST_CASE("phantom factory: names, dims and errors", "[phantom]") {
  REQUIRE(fhd::phantom_names().size() == 2);
  for (const auto& n : fhd::phantom_names()) CHECK(fhd::make_phantom(n)->name() == n);
  CHECK(fhd::make_phantom("shepp3d")->dims() == 3);
  CHECK(fhd::make_phantom("shepp2d")->dims() == 2);
  bool threw = false;
  try {
    fhd::make_phantom("foo");
  } catch (const std::invalid_argument& e) {
    threw = std::string(e.what()).find("phantom = foo: unknown") != std::string::npos;
  }
  CHECK(threw);
}

TEST_CASE("DC term equals the sum of p*V (3D) and p*area (2D)", "[phantom]") {
  auto p3 = fhd::make_phantom("shepp3d");
  auto p2 = fhd::make_phantom("shepp2d");
  double dc3 = dc_analytic(koay_rows(), true), dc2 = dc_analytic(toft_rows(), false);
  CHECK(std::abs(p3->kspace(0, 0, 0) - dc3) <= 1e-14 * dc3);
  CHECK(std::abs(p2->kspace(0, 0, 0) - dc2) <= 1e-14 * dc2);
  // Near k = 0 the closed forms cancel catastrophically. At |k| ~ 1e-8 the
  // shape factors differ from 1 by ~(2 pi K)^2/10 < 1e-16, so only the shifts remain.
  const double k[3] = {1e-9, -8e-9, 3e-9};
  auto shifted = [&](const std::vector<Row>& rows, bool is3d) {
    std::complex<double> sum = 0;
    for (Row u : rows) {
      Row e = to_fov(u);
      double v = is3d ? 4.0 / 3.0 * kPi * e.a * e.b * e.c : kPi * e.a * e.b;
      double ph = k[0] * e.x0 + k[1] * e.y0 + (is3d ? k[2] * e.z0 : 0);
      sum += e.p * v * std::polar(1.0, -2 * kPi * ph);
    }
    return sum;
  };
  CHECK(std::abs(p3->kspace(k[0], k[1], k[2]) - shifted(koay_rows(), true)) <= 1e-15 * dc3);
  CHECK(std::abs(p2->kspace(k[0], k[1], k[2]) - shifted(toft_rows(), false)) <= 1e-15 * dc2);
}

TEST_CASE("kspace matches the formulas in long double at many k", "[phantom]") {
  auto p3 = fhd::make_phantom("shepp3d");
  auto p2 = fhd::make_phantom("shepp2d");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> dir(-1, 1);
  // Magnitudes from 0.02 (series region for every ellipsoid) to 60 cycles/FOV.
  for (double mag : {0.02, 0.3, 1.0, 2.9, 7.0, 20.0, 60.0}) {
    for (int r = 0; r < 5; ++r) {
      double kx = mag * dir(rng), ky = mag * dir(rng), kz = mag * dir(rng);
      INFO("k = " << kx << ", " << ky << ", " << kz);
      auto ref3 = reference_kspace(koay_rows(), true, kx, ky, kz);
      auto ref2 = reference_kspace(toft_rows(), false, kx, ky, 0);
      // Absolute bound relative to S(0): float64 rounding across 10 terms.
      CHECK(std::abs(p3->kspace(kx, ky, kz) - ref3) <= 1e-12);
      CHECK(std::abs(p2->kspace(kx, ky, 5.0) - ref2) <= 1e-12);
    }
  }
}

TEST_CASE("image() is the table's indicator sum, boundary inclusive", "[phantom]") {
  auto p3 = fhd::make_phantom("shepp3d");
  auto p2 = fhd::make_phantom("shepp2d");
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> pos(-0.5, 0.5);
  for (int i = 0; i < 20000; ++i) {
    double x = pos(rng), y = pos(rng), z = pos(rng);
    REQUIRE(std::abs(p3->image(x, y, z) - table_image(koay_rows(), true, x, y, z)) <= 1e-12);
    REQUIRE(std::abs(p2->image(x, y, z) - table_image(toft_rows(), false, x, y, 0)) <= 1e-12);
  }
}

TEST_CASE("kspace equals the numerically integrated transform of the ellipsoids", "[phantom]") {
  // Columns are integrated exactly; the midpoint rule over the other axes errs
  // O(h^2) in smooth cells and O(h^1.5) in the O(1/h) cells an outline cuts
  // (the column length goes like sqrt(distance to the outline)). With h = 1/1024
  // (3D) the measured error is below 6e-7 against |S(0)| ~ 0.2: 1e-5 leaves room.
  // 2D uses 4e5 columns: measured below 1.1e-9 (8.7e-9 at 1e5 columns, the
  // h^1.5 rate), bound 1e-8.
  auto p3 = fhd::make_phantom("shepp3d");
  std::vector<double> ks = {0.4, -0.3, 0.2, 3, -5, 7, 0.5, 12, -2.5, -9, 1, 4};
  auto num = integrate3d(ks, 1024);
  for (std::size_t m = 0; m < num.size(); ++m) {
    auto an = p3->kspace(ks[3 * m], ks[3 * m + 1], ks[3 * m + 2]);
    INFO("k = " << ks[3 * m] << ", " << ks[3 * m + 1] << ", " << ks[3 * m + 2] << " analytic "
                << an << " numeric " << num[m]);
    CHECK(std::abs(an - num[m]) <= 1e-5);
  }
  auto p2 = fhd::make_phantom("shepp2d");
  for (auto k : {std::pair<double, double>{0.3, 0.1}, {4, -6}, {-11, 2.5}, {17, 23}}) {
    auto an = p2->kspace(k.first, k.second, 0), num2 = integrate2d(k.first, k.second, 400000);
    INFO("k = " << k.first << ", " << k.second << " analytic " << an << " numeric " << num2);
    CHECK(std::abs(an - num2) <= 1e-8);
  }
}

TEST_CASE("kspace is Hermitian: the phantom is real", "[phantom]") {
  for (const auto& n : fhd::phantom_names()) {
    auto p = fhd::make_phantom(n);
    auto a = p->kspace(3.3, -7.1, 2.2), b = p->kspace(-3.3, 7.1, -2.2);
    CHECK(std::abs(a - std::conj(b)) <= 1e-15);
  }
}

TEST_CASE("voxel_image at known points, x fastest", "[phantom]") {
  // Grid 8 x 100 x 8: voxel (4, 50, 4) is the origin; (4, 54, 3) is
  // x = (0, 0.04, -0.125), inside the small ball of row 6 (u = (0, .1, -.25),
  // radius .046) and outside row 5 (its y edge is at 0.05).
  auto p3 = fhd::make_phantom("shepp3d");
  auto img = fhd::voxel_image(*p3, 8, 100, 8);
  REQUIRE(img.size() == 8u * 100 * 8);
  auto at = [&](int ix, int iy, int iz) { return img[ix + 8 * (iy + 100 * iz)]; };
  CHECK(std::abs(at(4, 50, 4) - (2.0 - 0.8)) <= 1e-6);
  CHECK(std::abs(at(4, 54, 3) - (2.0 - 0.8 + 0.2)) <= 1e-6);
  CHECK(at(0, 0, 0) == 0.0f);  // corner (-0.5, -0.5, -0.5): outside the skull

  auto p2 = fhd::make_phantom("shepp2d");
  auto img2 = fhd::voxel_image(*p2, 8, 100, 1);
  CHECK(std::abs(img2[4 + 8 * 50] - (1.0 - 0.8)) <= 1e-6);
  CHECK(std::abs(img2[4 + 8 * 54] - (1.0 - 0.8 + 0.1)) <= 1e-6);  // row 6, (0, .08) in u
}

TEST_CASE("rotation is counterclockwise by phi (MATLAB's convention)", "[phantom]") {
  // Row 3 of the 2D table: center (.22, 0), a = .11, b = .31, phi = -18 deg.
  // 0.25 back along its rotated b axis (-sin phi, cos phi) is inside; the
  // mirror point across x = .22 is outside (quadratic form 1.79). Both lie in
  // no other inner ellipse.
  auto p2 = fhd::make_phantom("shepp2d");
  double s = std::sin(18 * kPi / 180), c = std::cos(18 * kPi / 180);
  double inside = p2->image((.22 - .25 * s) / 2, -.25 * c / 2, 0);
  double mirror = p2->image((.22 + .25 * s) / 2, -.25 * c / 2, 0);
  CHECK(std::abs(inside - mirror - (-0.2)) <= 1e-12);
  // 3D row 3: center (-.22, 0, -.25), a = .41 along (cos 108, sin 108); 0.35
  // back along it is inside, the mirror across x = -.22 outside (form 2.1).
  auto p3 = fhd::make_phantom("shepp3d");
  double a = 3 * kPi / 5;
  double in3 = p3->image((-.22 - .35 * std::cos(a)) / 2, -.35 * std::sin(a) / 2, -.125);
  double out3 = p3->image((-.22 + .35 * std::cos(a)) / 2, -.35 * std::sin(a) / 2, -.125);
  CHECK(std::abs(in3 - out3 - (-0.2)) <= 1e-12);
}

TEST_CASE("peak is the skull value and bounds every voxel", "[phantom]") {
  // By hand: no positive inner ellipsoid reaches the skull shell (value 2, 2D:
  // 1), and inside it at most two 0.1/0.2 ellipsoids overlap on top of 1.2 / 0.2.
  auto p3 = fhd::make_phantom("shepp3d");
  auto p2 = fhd::make_phantom("shepp2d");
  CHECK(std::abs(p3->peak() - 2.0) <= 1e-12);
  CHECK(std::abs(p2->peak() - 1.0) <= 1e-12);
  for (auto* p : {p3.get(), p2.get()}) {
    int nz = p->dims() == 3 ? 48 : 1;
    auto img = fhd::voxel_image(*p, 96, 96, nz);
    float mx = *std::max_element(img.begin(), img.end());
    CHECK(mx <= p->peak() + 1e-6);
    CHECK(mx >= p->peak() - 1e-6);
  }
}
