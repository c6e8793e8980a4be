// Trajectories: counts, band limits, geometry and coverage, seeds, errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "phantom/trajectory.hpp"

namespace {

constexpr double kPi = 3.14159265358979323846;

fhd::TrajectorySpec spec(const std::string& kind, int nx, int ny, int nz) {
  fhd::TrajectorySpec s;
  s.kind = kind;
  s.nx = nx, s.ny = ny, s.nz = nz;
  return s;
}

bool in_band(const fhd::Trajectory& t, const fhd::TrajectorySpec& s) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (std::abs(t.kx[i]) > s.nx / 2.0 || std::abs(t.ky[i]) > s.ny / 2.0 ||
        std::abs(t.kz[i]) > s.nz / 2.0)
      return false;
  return true;
}

std::string error_of(const fhd::TrajectorySpec& s) {
  try {
    fhd::make_trajectory(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool same(const fhd::Trajectory& a, const fhd::Trajectory& b) {
  return a.kx == b.kx && a.ky == b.ky && a.kz == b.kz;
}

}  // namespace

TEST_CASE("every kind: count = layout, inside the band, deterministic", "[phantom][trajectory]") {
  for (const auto& kind : fhd::trajectory_kinds()) {
    bool flat = kind == "radial2d" || kind == "spiral2d";
    auto s = spec(kind, 24, 16, flat ? 1 : 8);  // anisotropic on purpose
    auto l = fhd::trajectory_layout(s);
    auto t = fhd::make_trajectory(s);
    INFO(kind);
    CHECK(t.size() == l.samples());
    CHECK(t.kx.size() == t.size());
    CHECK(t.ky.size() == t.size());
    CHECK(t.kz.size() == t.size());
    CHECK(t.size() > 0);
    CHECK(in_band(t, s));
    CHECK(same(t, fhd::make_trajectory(s)));
    if (flat) CHECK(std::all_of(t.kz.begin(), t.kz.end(), [](float z) { return z == 0.f; }));
  }
}

TEST_CASE("radial3d: Nyquist defaults, spokes through the center, covering", "[phantom][trajectory]") {
  auto s = spec("radial3d", 16, 16, 16);
  auto l = fhd::trajectory_layout(s);
  CHECK(l.readout == 32);
  CHECK(l.spokes == int(std::ceil(kPi / 2 * 16 * 16)));
  CHECK(l.partitions == 1);
  auto t = fhd::make_trajectory(s);
  std::vector<std::array<double, 3>> dirs;
  for (int sp = 0; sp < l.spokes; ++sp) {
    std::size_t c = std::size_t(sp) * l.readout + l.readout / 2, first = std::size_t(sp) * l.readout;
    REQUIRE(t.kx[c] == 0.f);
    REQUIRE(t.ky[c] == 0.f);
    REQUIRE(t.kz[c] == 0.f);
    // Sample 0 is the -N/2 end: the spoke's unit direction is -k/(N/2).
    std::array<double, 3> d = {-t.kx[first] / 8.0, -t.ky[first] / 8.0, -t.kz[first] / 8.0};
    REQUIRE(std::abs(std::hypot(d[0], d[1], d[2]) - 1) <= 1e-6);
    REQUIRE(d[2] > 0);  // half sphere
    dirs.push_back(d);
  }
  // Coverage: any point on the sphere |k| = N/2 lies within 1 cycle/FOV of a
  // spoke end (the Nyquist distance); a spoke covers u and -u.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g;
  double worst = 0;
  for (int i = 0; i < 3000; ++i) {
    double u[3] = {g(rng), g(rng), g(rng)}, n = std::hypot(u[0], u[1], u[2]);
    double best = 0;
    for (const auto& d : dirs) best = std::max(best, std::abs(d[0] * u[0] + d[1] * u[1] + d[2] * u[2]) / n);
    worst = std::max(worst, 8.0 * std::acos(std::min(1.0, best)));
  }
  INFO("largest distance to a spoke end at |k| = 8: " << worst);
  CHECK(worst <= 1.0);
}

TEST_CASE("radial2d: uniform and golden angles, Nyquist spokes", "[phantom][trajectory]") {
  auto s = spec("radial2d", 32, 32, 1);
  auto l = fhd::trajectory_layout(s);
  CHECK(l.readout == 64);
  CHECK(l.spokes == int(std::ceil(kPi / 2 * 32)));
  // Nyquist at the edge: adjacent spoke ends are <= 1 cycle/FOV apart.
  CHECK(16 * kPi / l.spokes <= 1.0);
  for (bool golden : {false, true}) {
    s.golden = golden;
    auto t = fhd::make_trajectory(s);
    double step = golden ? kPi * (std::sqrt(5.0) - 1) / 2 : kPi / l.spokes;
    for (int sp = 0; sp < l.spokes; ++sp) {
      std::size_t first = std::size_t(sp) * l.readout;
      double a = std::atan2(-t.ky[first], -t.kx[first]);  // angle of the + direction
      double want = std::fmod(sp * step, kPi);
      double diff = std::remainder(a - want, 2 * kPi);
      INFO("golden " << golden << " spoke " << sp << " angle " << a << " want " << want);
      REQUIRE(std::abs(diff) <= 1e-6);
      // Spacing along the spoke: N / readout = 0.5.
      REQUIRE(std::abs(std::hypot(t.kx[first + 1] - t.kx[first], t.ky[first + 1] - t.ky[first]) - 0.5) <= 1e-5);
    }
  }
}

TEST_CASE("stack-of-stars and stack-of-spirals: integer kz, same plane per partition", "[phantom][trajectory]") {
  for (std::string kind : {"stack-of-stars", "stack-of-spirals"}) {
    auto s = spec(kind, 32, 32, 6);
    auto l = fhd::trajectory_layout(s);
    CHECK(l.partitions == 6);
    auto t = fhd::make_trajectory(s);
    std::size_t per = std::size_t(l.readout) * l.spokes;
    for (int p = 0; p < 6; ++p)
      for (std::size_t i = 0; i < per; ++i) {
        REQUIRE(t.kz[i + p * per] == float(p - 3));
        REQUIRE(t.kx[i + p * per] == t.kx[i]);
        REQUIRE(t.ky[i + p * per] == t.ky[i]);
      }
  }
}

TEST_CASE("spiral2d: reaches the edge, arc spacing <= 0.5, radial gaps <= 1", "[phantom][trajectory]") {
  auto s = spec("spiral2d", 64, 64, 1);
  auto l = fhd::trajectory_layout(s);
  CHECK(l.spokes == 8);  // default: 4 turns per interleave, kmax = 32
  auto t = fhd::make_trajectory(s);
  for (int il = 0; il < l.spokes; ++il) {
    std::size_t a = std::size_t(il) * l.readout, e = a + l.readout - 1;
    CHECK(std::hypot(t.kx[a], t.ky[a]) <= 1e-6);
    CHECK(std::abs(std::hypot(t.kx[e], t.ky[e]) - 32) <= 1e-4);
    // The end angle is 4 full turns plus the interleave's rotation 2 pi il / L.
    double end_angle = std::atan2(t.ky[e], t.kx[e]);
    CHECK(std::abs(std::remainder(end_angle - 2 * kPi * il / l.spokes, 2 * kPi)) <= 1e-5);
    double worst = 0;
    for (std::size_t j = a + 1; j <= e; ++j)
      worst = std::max(worst, double(std::hypot(t.kx[j] - t.kx[j - 1], t.ky[j] - t.ky[j - 1])));
    CHECK(worst <= 0.5 + 1e-5);
  }
  // Coverage: with radial gaps of 1 and steps of 0.5 along the curve, a point
  // of the disk is within about sqrt(0.5^2 + 0.25^2) = 0.56 of a sample.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-32, 32);
  double worst = 0;
  for (int i = 0; i < 400; ++i) {
    double x = u(rng), y = u(rng);
    if (std::hypot(x, y) > 31.5) continue;
    double best = 1e9;
    for (std::size_t j = 0; j < t.size(); ++j) best = std::min(best, std::hypot(t.kx[j] - x, t.ky[j] - y));
    worst = std::max(worst, best);
  }
  INFO("largest distance to a sample: " << worst);
  CHECK(worst <= 0.6);
}

TEST_CASE("random: uniform over the box, seeded", "[phantom][trajectory]") {
  auto s = spec("random", 32, 16, 8);
  s.total = 100000;
  auto t = fhd::make_trajectory(s);
  CHECK(std::abs(double(t.size()) - 100000) <= 64 / 2.0);  // readout 2*32 = 64
  double mx = 0, my = 0, mz = 0;
  int octant[8] = {};
  for (std::size_t i = 0; i < t.size(); ++i) {
    mx += t.kx[i], my += t.ky[i], mz += t.kz[i];
    octant[(t.kx[i] >= 0) + 2 * (t.ky[i] >= 0) + 4 * (t.kz[i] >= 0)]++;
  }
  const double m = double(t.size());
  // Uniform on [-N/2, N/2): mean 0, std N/sqrt(12); 5 standard errors.
  CHECK(std::abs(mx / m) <= 5 * 32 / std::sqrt(12 * m));
  CHECK(std::abs(my / m) <= 5 * 16 / std::sqrt(12 * m));
  CHECK(std::abs(mz / m) <= 5 * 8 / std::sqrt(12 * m));
  for (int o : octant) CHECK(std::abs(o - m / 8) <= 5 * std::sqrt(m / 8));
  auto again = fhd::make_trajectory(s);
  CHECK(same(t, again));
  s.seed = 2;
  CHECK(!same(t, fhd::make_trajectory(s)));
  // Deterministic kinds ignore the seed.
  auto r = spec("radial3d", 8, 8, 8);
  auto r1 = fhd::make_trajectory(r);
  r.seed = 99;
  CHECK(same(r1, fhd::make_trajectory(r)));
}

TEST_CASE("sizing by spokes, readout and total", "[phantom][trajectory]") {
  auto s = spec("stack-of-stars", 32, 32, 4);
  s.readout = 50;
  s.spokes = 7;
  CHECK(fhd::make_trajectory(s).size() == 50u * 7 * 4);
  s.spokes = 0;
  s.total = 20000;  // 100 spokes of 50 x 4
  CHECK(fhd::trajectory_layout(s).spokes == 100);
  auto k = spec("radial3d", 32, 32, 32);
  k.total = 100000;
  CHECK(std::abs(double(fhd::make_trajectory(k).size()) - 100000) <= 64 / 2.0);
  auto sp = spec("spiral2d", 64, 64, 1);
  sp.total = 5000;  // default 8 interleaves, readout chosen to match
  auto l = fhd::trajectory_layout(sp);
  CHECK(l.spokes == 8);
  CHECK(std::abs(double(l.samples()) - 5000) <= 8 / 2.0);
  sp.readout = 250;  // readout fixed: interleaves chosen
  CHECK(fhd::trajectory_layout(sp).spokes == 20);
}

TEST_CASE("bad specs throw naming field and value", "[phantom][trajectory]") {
  auto has = [](const fhd::TrajectorySpec& s, const std::string& text) {
    std::string e = error_of(s);
    INFO("message: " << e);
    return e.find(text) != std::string::npos;
  };
  auto s = spec("foo", 16, 16, 16);
  CHECK(has(s, "trajectory kind = foo: unknown (known: radial3d, stack-of-stars"));
  CHECK(has(spec("radial2d", 16, 16, 4), "nz = 4"));
  CHECK(has(spec("spiral2d", 16, 16, 2), "nz = 2"));
  CHECK(has(spec("radial3d", 16, 16, 1), "nz = 1"));
  CHECK(has(spec("random", 0, 16, 16), "nx = 0"));
  CHECK(has(spec("random", 16, -3, 16), "ny = -3"));
  CHECK(has(spec("random", 16, 16, 100000), "nz = 100000"));
  s = spec("radial3d", 16, 16, 16);
  s.readout = -1;
  CHECK(has(s, "readout = -1"));
  s.readout = 70000;
  CHECK(has(s, "readout = 70000"));
  s.readout = 0;
  s.spokes = -2;
  CHECK(has(s, "spokes = -2"));
  s.spokes = 0;
  s.total = std::size_t(1) << 40;
  CHECK(has(s, "total = 1099511627776"));
  s = spec("spiral2d", 16, 16, 1);
  s.readout = 1;
  CHECK(has(s, "readout = 1"));
  // Default Nyquist kooshball at 16384^3: far too many samples.
  CHECK(has(spec("radial3d", 16384, 16384, 16384), "samples = "));
}

TEST_CASE("a spoke count from a total is at least 2 in-plane spokes: small stacks of stars encode y",
          "[phantom][trajectory]") {
  for (int n = 4; n <= 8; ++n)
    for (const char* kind : {"stack-of-stars", "radial2d"}) {
      auto s = spec(kind, n, n, std::string(kind) == "radial2d" ? 1 : n);
      s.total = std::size_t(0.4 * n * n * n);  // the CLI's 3D default (app/source.cpp default_samples)
      const fhd::Trajectory t = fhd::make_trajectory(s);
      INFO(kind << " N = " << n);
      CHECK(fhd::trajectory_layout(s).spokes >= 2);  // 1 for N <= 7 before
      std::vector<float> ky(t.ky);
      std::sort(ky.begin(), ky.end());
      CHECK(std::unique(ky.begin(), ky.end()) - ky.begin() > 1);  // ky = 0 for every sample before
    }
}
