// Exact off-resonance synthesis (phantom/offresonance.hpp): zero field is
// synthesize(), a constant field is a phase, the region formula agrees with a
// brute-force integral, the regions really are uncut, and the time layout.
#include <cmath>
#include <algorithm>
#include <complex>
#include <random>
#include <stdexcept>

#include "catch.hpp"
#include "phantom/offresonance.hpp"

namespace {

constexpr double kPi = 3.14159265358979323846;

fhd::Trajectory few_points() {
  fhd::Trajectory t;
  t.kx = {0.f, 3.f, -5.f, 11.5f, -20.f};
  t.ky = {0.f, -2.f, 7.f, 4.f, 9.f};
  t.kz = {0.f, 1.f, -3.f, 6.f, 2.f};
  return t;
}

// s(k, t) = integral rho(x) exp(-i 2 pi (k.x + f(x) t)) dx by the midpoint
// rule on n x n points over the FOV (2D).
std::complex<double> brute_force(const fhd::Phantom& p, const fhd::PhantomField& f, double kx, double ky, double t,
                                 int n) {
  std::complex<double> sum = 0.0;
  const double h = 1.0 / n;
  for (int iy = 0; iy < n; ++iy)
    for (int ix = 0; ix < n; ++ix) {
      const double x = (ix + 0.5) * h - 0.5, y = (iy + 0.5) * h - 0.5;
      const double rho = p.image(x, y, 0);
      if (rho == 0) continue;
      double turns = kx * x + ky * y + f.at(p, x, y, 0) * t;
      turns -= std::rint(turns);
      sum += rho * std::polar(1.0, -2 * kPi * turns);
    }
  return sum * h * h;
}

}  // namespace

TEST_CASE("off-resonance: zero field gives synthesize()'s data exactly", "[phantom][offres]") {
  const fhd::Trajectory t = few_points();
  for (const char* name : {"shepp2d", "shepp3d"}) {
    auto p = fhd::make_phantom(name);
    const int nz = p->dims() == 3 ? 32 : 1;
    fhd::FieldSpec spec;  // max_hz = 0
    const fhd::PhantomField f = fhd::phantom_field(*p, spec);
    CHECK(f.regions.empty());
    const std::vector<float> times = fhd::sample_times(t.size(), 5, spec);
    const auto d = fhd::synthesize_offresonance(*p, t, times, f, 32, 32, nz);
    const auto ref = fhd::synthesize(*p, t, 32, 32, nz);
    REQUIRE(d.size() == ref.size());
    for (std::size_t m = 0; m < d.size(); ++m) CHECK(d[m] == ref[m]);
  }
}

TEST_CASE("off-resonance: a constant field is a phase exp(-i 2 pi f0 t)", "[phantom][offres]") {
  const fhd::Trajectory t = few_points();
  auto p = fhd::make_phantom("shepp3d");
  fhd::PhantomField f;
  f.f0 = 73.0;
  const std::vector<float> times = {0.f, 0.001f, 0.0042f, 0.0137f, 0.02f};
  const auto d = fhd::synthesize_offresonance(*p, t, times, f, 32, 32, 32);
  const auto ref = fhd::synthesize(*p, t, 32, 32, 32);
  for (std::size_t m = 0; m < d.size(); ++m) {
    const std::complex<double> want = std::complex<double>(ref[m]) * std::polar(1.0, -2 * kPi * 73.0 * times[m]);
    CHECK(std::abs(std::complex<double>(d[m]) - want) <= 1e-5 * std::abs(want) + 1e-3);
  }
}

TEST_CASE("off-resonance: regions and gradient agree with a brute-force integral", "[phantom][offres]") {
  // The midpoint rule on 2048^2 points errs at the outlines by O(h); the same
  // rule without off-resonance shows how much (err0, 1e-5 to 1e-4 of S(0)).
  // With the field the error must stay of that size (measured: at most 7e-5
  // of S(0)), while leaving the regions' own fields out changes the integral
  // by far more (checked below), so a wrong region term cannot pass.
  auto p = fhd::make_phantom("shepp2d");
  fhd::FieldSpec spec;
  spec.max_hz = 150;
  const fhd::PhantomField f = fhd::phantom_field(*p, spec);
  REQUIRE(f.regions.size() == 2);
  const double s0 = std::abs(p->kspace(0, 0, 0));
  const fhd::Trajectory k = few_points();
  const std::vector<float> times = {0.002f, 0.006f, 0.01f, 0.004f, 0.008f};
  const int n = 32;
  const auto data = fhd::synthesize_offresonance(*p, k, times, f, n, n, 1);
  const fhd::PhantomField none;
  fhd::PhantomField gradient_only = f;
  gradient_only.regions.clear();
  double region_effect = 0;
  for (std::size_t m = 0; m < k.size(); ++m) {
    const std::complex<double> exact = std::complex<double>(data[m]) / double(n * n);
    const std::complex<double> brute = brute_force(*p, f, k.kx[m], k.ky[m], times[m], 2048);
    const double err0 = std::abs(brute_force(*p, none, k.kx[m], k.ky[m], 0, 2048) - p->kspace(k.kx[m], k.ky[m], 0));
    INFO("sample " << m << ": error " << std::abs(brute - exact) / s0 << " of S(0), without field " << err0 / s0);
    CHECK(std::abs(brute - exact) <= 2 * err0 + 5e-5 * s0);
    region_effect = std::max(region_effect, std::abs(brute - brute_force(*p, gradient_only, k.kx[m], k.ky[m], times[m], 2048)));
  }
  INFO("largest effect of the regions' fields: " << region_effect / s0 << " of S(0)");
  CHECK(region_effect > 10 * (2e-4 + 5e-5) * s0);
}

TEST_CASE("off-resonance: each region's intensity is constant inside it", "[phantom][offres]") {
  // The region term assumes no other shape cuts the region; check it on
  // 20000 random points inside each, far finer than phantom_field's grid.
  fhd::FieldSpec spec;
  spec.max_hz = 100;
  for (const char* name : {"shepp2d", "shepp3d"}) {
    auto p = fhd::make_phantom(name);
    const fhd::PhantomField f = fhd::phantom_field(*p, spec);
    REQUIRE(f.regions.size() == 2);
    CHECK(f.regions[0].hz == 100.0);
    CHECK(f.regions[1].hz == -100.0);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    for (const auto& r : f.regions) {
      int found = 0, off = 0;
      for (int i = 0; i < 8000000 && found < 20000; ++i) {
        const double x = u(rng), y = u(rng), z = p->dims() == 3 ? u(rng) : 0.0;
        if (!p->inside(r.shape, x, y, z)) continue;
        ++found;
        if (std::abs(p->image(x, y, z) - r.density) > 1e-12) ++off;
        CHECK(f.at(*p, x, y, z) == r.hz);
      }
      INFO(name << " region " << r.shape << ": " << found << " points");
      CHECK(found > 300);  // shepp3d's second region is small: 1.8e-4 of the FOV
      CHECK(off == 0);
    }
    // Outside the regions the field is the gradient along y, within +-max/2.
    CHECK(std::abs(f.at(*p, 0.49, 0.49, 0.0) - 49.0) < 1e-9);
  }
}

TEST_CASE("off-resonance: sample times run readout fastest", "[phantom][offres]") {
  fhd::FieldSpec spec;
  spec.readout_s = 0.01;
  spec.te_s = 0.002;
  const std::vector<float> t = fhd::sample_times(12, 4, spec);
  REQUIRE(t.size() == 12);
  for (int s = 0; s < 3; ++s)
    for (int j = 0; j < 4; ++j) CHECK(std::abs(t[std::size_t(4 * s + j)] - (0.002 + j * 0.01 / 3)) < 1e-8);
  CHECK_THROWS_AS(fhd::sample_times(4, 0, spec), std::invalid_argument);
  spec.readout_s = -1;
  CHECK_THROWS_AS(fhd::sample_times(4, 2, spec), std::invalid_argument);
  spec.readout_s = 0.01;
  spec.max_hz = -5;
  auto p = fhd::make_phantom("shepp2d");
  CHECK_THROWS_AS(fhd::phantom_field(*p, spec), std::invalid_argument);
  spec.max_hz = std::nan("");
  CHECK_THROWS_AS(fhd::phantom_field(*p, spec), std::invalid_argument);
}

TEST_CASE("off-resonance coils: a constant field is the coils' data times exp(-i 2 pi f0 t)", "[phantom][offres]") {
  const fhd::Trajectory t = few_points();
  auto p = fhd::make_phantom("shepp3d");
  fhd::CoilSpec spec;
  spec.coils = 3;
  spec.dims = 3;
  const fhd::CoilArray coils = fhd::make_coil_array(spec);
  fhd::PhantomField f;
  f.f0 = -41.0;
  const std::vector<float> times = {0.f, 0.002f, 0.0051f, 0.011f, 0.019f};
  const auto d = fhd::synthesize_offresonance_coils(*p, coils, t, times, f, 32, 32, 32);
  const auto ref = fhd::synthesize_coils(*p, coils, t, 32, 32, 32);
  REQUIRE(d.size() == 3);
  for (int c = 0; c < 3; ++c)
    for (std::size_t m = 0; m < t.size(); ++m) {
      const std::complex<double> want =
          std::complex<double>(ref[c][m]) * std::polar(1.0, -2 * kPi * f.f0 * double(times[m]));
      CHECK(std::abs(std::complex<double>(d[c][m]) - want) <= 1e-5 * std::abs(std::complex<double>(ref[c][0])));
    }
  spec.dims = 2;  // coils of a 2D array on a 3D phantom
  CHECK_THROWS_AS(fhd::synthesize_offresonance_coils(*p, fhd::make_coil_array(spec), t, times, f, 32, 32, 32),
                  std::invalid_argument);
}
