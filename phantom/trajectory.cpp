// Trajectory specs: validation, the sizes they resolve to, the sample
// generators and the kind table. Formulas and defaults: docs/phantom.md.
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "phantom/trajectory.hpp"

namespace fhd {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kGoldenRadial = kPi * 0.6180339887498949;  // pi/phi: 111.25 deg, for full spokes
constexpr double kGoldenFull = kPi * 0.7639320225002103;    // pi (3 - sqrt 5): 137.51 deg
constexpr double kSpiralTurns = 4;  // default: each interleave makes this many turns

constexpr int kMaxAxis = 16384;
constexpr int kMaxReadout = 65535;  // ISMRMRD's number_of_samples is 16-bit
constexpr std::size_t kMaxSamples = std::size_t(1) << 30;

[[noreturn]] void fail(const std::string& field, const std::string& value,
                       const std::string& problem) {
  throw std::invalid_argument("trajectory " + field + " = " + value + ": " + problem);
}

std::string known_kinds() {
  std::string s;
  for (const auto& k : trajectory_kinds()) s += (s.empty() ? "" : ", ") + k;
  return s;
}

void check_axis(const char* field, int n) {
  if (n < 1 || n > kMaxAxis)
    fail(field, std::to_string(n), "must be in 1.." + std::to_string(kMaxAxis));
}

void check_spec(const TrajectorySpec& s) {
  const auto& kinds = trajectory_kinds();
  if (std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end())
    fail("kind", s.kind, "unknown (known: " + known_kinds() + ")");
  check_axis("nx", s.nx);
  check_axis("ny", s.ny);
  check_axis("nz", s.nz);
  if (s.readout < 0 || s.readout > kMaxReadout)
    fail("readout", std::to_string(s.readout),
         "must be in 0.." + std::to_string(kMaxReadout) + " (0 = default)");
  if (s.spokes < 0) fail("spokes", std::to_string(s.spokes), "must be >= 0 (0 = default)");
  if (s.total > kMaxSamples)
    fail("total", std::to_string(s.total), "more than 2^30 samples");
  if ((s.kind == "radial2d" || s.kind == "spiral2d") && s.nz != 1)
    fail("nz", std::to_string(s.nz), s.kind + " is 2D and needs nz = 1");
  if (s.kind == "radial3d" && s.nz == 1)
    fail("nz", "1", "radial3d needs nz > 1 (use radial2d for one slice)");
}

// Archimedean spiral r = b*theta, theta in [0, 2 pi turns], r up to kmax.
// Its arc length from 0 has the closed form s = b/2 (theta sqrt(1+theta^2) + asinh theta).
struct Spiral {
  double kmax, turns;
  double theta_end() const { return 2 * kPi * turns; }
  double b() const { return kmax / theta_end(); }
  double arc(double th) const { return 0.5 * b() * (th * std::sqrt(1 + th * th) + std::asinh(th)); }
  double speed(double th) const { return b() * std::sqrt(1 + th * th); }  // ds/dtheta
};

// In-plane radius of the spiral, in the units of the longer in-plane axis.
double spiral_kmax(const TrajectorySpec& s) { return std::max(s.nx, s.ny) / 2.0; }

// Samples for arc spacing <= 0.5 cycle/FOV along the curve.
double spiral_nyquist_readout(double kmax, double turns) {
  Spiral sp{kmax, turns};
  return std::ceil(sp.arc(sp.theta_end()) / 0.5) + 1;
}

// A count computed in double (a default or from `total`), checked before the cast.
int to_count(const char* field, double v) {
  if (!(v <= double(kMaxSamples))) fail(field, std::to_string(std::llround(v)), "more than 2^30");
  return std::max(1, int(v));
}

int spokes_for_total(std::size_t total, std::size_t per_spoke) {
  return to_count("spokes", std::round(double(total) / double(per_spoke)));
}

// Radial and random: readout and spoke count are independent of each other.
void resolve_lines(const TrajectorySpec& s, TrajectoryLayout& l) {
  const bool volume = s.kind == "radial3d" || s.kind == "random";
  const int n = volume ? std::max({s.nx, s.ny, s.nz}) : std::max(s.nx, s.ny);
  l.readout = s.readout > 0 ? s.readout : 2 * n;
  if (s.spokes > 0) {
    l.spokes = s.spokes;
  } else if (s.total > 0) {
    l.spokes = spokes_for_total(s.total, std::size_t(l.readout) * l.partitions);
    // One in-plane spoke (the default 0.4 N^3 samples of a stack of stars at
    // N <= 7) lies at angle 0: ky = 0 everywhere, y not encoded at all.
    if (s.kind == "radial2d" || s.kind == "stack-of-stars") l.spokes = std::max(2, l.spokes);
  } else if (s.kind == "random") {
    double voxels = double(s.nx) * s.ny * s.nz;
    l.spokes = to_count("spokes", std::ceil(2 * voxels / l.readout));
  } else {
    // Nyquist at the edge of k-space: pi/2 N full spokes in 2D, pi/2 N^2 in 3D.
    double nyq = volume ? kPi / 2 * double(n) * n : kPi / 2 * n;
    l.spokes = to_count("spokes", std::ceil(nyq));
  }
}

// Spirals: the interleave count sets the turns, the turns set the Nyquist readout.
void resolve_spiral(const TrajectorySpec& s, TrajectoryLayout& l) {
  const double kmax = spiral_kmax(s);
  if (s.spokes > 0)
    l.spokes = s.spokes;
  else if (s.total > 0 && s.readout > 0)
    l.spokes = spokes_for_total(s.total, std::size_t(s.readout) * l.partitions);
  else
    l.spokes = to_count("spokes", std::ceil(kmax / kSpiralTurns));
  if (s.readout > 0)
    l.readout = s.readout;
  else if (s.total > 0)
    l.readout = to_count("readout", std::round(double(s.total) / (double(l.spokes) * l.partitions)));
  else
    l.readout = to_count("readout", spiral_nyquist_readout(kmax, kmax / l.spokes));
  if (l.readout < 2) fail("readout", std::to_string(l.readout), "a spiral needs at least 2 samples");
}

// Position j of `readout` on a full spoke, in [-1, 1) at spacing 2/readout;
// sample readout/2 is the center k = 0.
double spoke_position(int j, int readout) { return double(j - readout / 2) * 2.0 / readout; }

void put(Trajectory& t, std::size_t i, double kx, double ky, double kz) {
  t.kx[i] = float(kx);
  t.ky[i] = float(ky);
  t.kz[i] = float(kz);
}

// Kooshball: spoke s points along a generalized (Fibonacci) spiral on the half
// sphere z > 0: equal steps in z = cos(polar) give equal areas, the golden
// angle in azimuth spreads neighbours evenly. The ellipsoid (nx,ny,nz)/2 scales it.
void fill_kooshball(const TrajectorySpec& s, const TrajectoryLayout& l, Trajectory& t) {
  for (int sp = 0; sp < l.spokes; ++sp) {
    double z = (sp + 0.5) / l.spokes, r = std::sqrt(1 - z * z), az = sp * kGoldenFull;
    double dx = r * std::cos(az) * s.nx / 2, dy = r * std::sin(az) * s.ny / 2, dz = z * s.nz / 2;
    for (int j = 0; j < l.readout; ++j) {
      double p = spoke_position(j, l.readout);
      put(t, j + std::size_t(l.readout) * sp, p * dx, p * dy, p * dz);
    }
  }
}

// Angle of spoke s: uniform over [0, pi) or the golden-angle sequence mod pi.
double spoke_angle(const TrajectorySpec& s, int sp, int spokes) {
  return s.golden ? std::fmod(sp * kGoldenRadial, kPi) : kPi * sp / spokes;
}

// radial2d and stack-of-stars: the same spokes in every kz partition.
void fill_stars(const TrajectorySpec& s, const TrajectoryLayout& l, Trajectory& t) {
  for (int sp = 0; sp < l.spokes; ++sp) {
    double a = spoke_angle(s, sp, l.spokes);
    double dx = std::cos(a) * s.nx / 2, dy = std::sin(a) * s.ny / 2;
    for (int pz = 0; pz < l.partitions; ++pz)
      for (int j = 0; j < l.readout; ++j) {
        double p = spoke_position(j, l.readout);
        put(t, j + std::size_t(l.readout) * (sp + std::size_t(l.spokes) * pz), p * dx, p * dy,
            pz - s.nz / 2);
      }
  }
}

// Angles theta_j on the spiral at equal arc-length steps (Newton on arc(theta)).
std::vector<double> spiral_angles(const Spiral& sp, int readout) {
  std::vector<double> th(readout, 0.0);
  const double end = sp.theta_end(), length = sp.arc(end);
  double x = 0;
  for (int j = 1; j < readout; ++j) {
    const double target = length * j / (readout - 1);
    for (int it = 0; it < 60; ++it) {
      double step = (sp.arc(x) - target) / sp.speed(x);
      x = std::clamp(x - step, 0.0, end);
      if (std::abs(step) < 1e-13 * (1 + x)) break;
    }
    th[j] = x;
  }
  return th;
}

// spiral2d and stack-of-spirals: interleave l is the base spiral rotated by
// 2 pi l / L (or l golden angles); the in-plane axes scale it to (nx, ny)/2.
void fill_spirals(const TrajectorySpec& s, const TrajectoryLayout& l, Trajectory& t) {
  const double kmax = spiral_kmax(s);
  const Spiral sp{kmax, kmax / l.spokes};
  const std::vector<double> th = spiral_angles(sp, l.readout);
  const double fx = s.nx / (2 * kmax), fy = s.ny / (2 * kmax);
  for (int il = 0; il < l.spokes; ++il) {
    double rot = s.golden ? il * kGoldenFull : 2 * kPi * il / l.spokes;
    for (int pz = 0; pz < l.partitions; ++pz)
      for (int j = 0; j < l.readout; ++j) {
        double r = sp.b() * th[j];
        // Rounding must not push the last sample past the band edge.
        double kx = std::clamp(fx * r * std::cos(th[j] + rot), -s.nx / 2.0, s.nx / 2.0);
        double ky = std::clamp(fy * r * std::sin(th[j] + rot), -s.ny / 2.0, s.ny / 2.0);
        put(t, j + std::size_t(l.readout) * (il + std::size_t(l.spokes) * pz), kx, ky,
            pz - s.nz / 2);
      }
  }
}

// Uniform in [0, 1) from the top 53 bits: portable, unlike std::uniform_real_distribution.
double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * (1.0 / 9007199254740992.0); }

// Uniform in the box [-N/2, N/2) per axis; kz = 0 when nz = 1.
void fill_random(const TrajectorySpec& s, const TrajectoryLayout& l, Trajectory& t) {
  std::mt19937_64 rng(s.seed);
  for (std::size_t i = 0; i < l.samples(); ++i) {
    double kx = (uniform01(rng) - 0.5) * s.nx, ky = (uniform01(rng) - 0.5) * s.ny;
    double kz = s.nz > 1 ? (uniform01(rng) - 0.5) * s.nz : 0.0;
    put(t, i, kx, ky, kz);
  }
}

}  // namespace

const std::vector<std::string>& trajectory_kinds() {
  static const std::vector<std::string> kinds = {"radial3d", "stack-of-stars", "stack-of-spirals",
                                                 "radial2d", "spiral2d",       "random"};
  return kinds;
}

TrajectoryLayout trajectory_layout(const TrajectorySpec& s) {
  check_spec(s);
  TrajectoryLayout l;
  l.partitions = s.kind.rfind("stack-of-", 0) == 0 ? s.nz : 1;
  if (s.kind == "spiral2d" || s.kind == "stack-of-spirals")
    resolve_spiral(s, l);
  else
    resolve_lines(s, l);
  if (l.readout > kMaxReadout)
    fail("readout", std::to_string(l.readout),
         "more than " + std::to_string(kMaxReadout) + " per readout (ISMRMRD's limit); set more spokes");
  if (l.samples() > kMaxSamples)
    fail("samples", std::to_string(l.samples()), "more than 2^30 (readout x spokes x partitions)");
  return l;
}

}  // namespace fhd

namespace fhd {

Trajectory make_trajectory(const TrajectorySpec& spec) {
  const TrajectoryLayout l = trajectory_layout(spec);
  Trajectory t;
  t.resize(l.samples());
  if (spec.kind == "radial3d")
    fill_kooshball(spec, l, t);
  else if (spec.kind == "radial2d" || spec.kind == "stack-of-stars")
    fill_stars(spec, l, t);
  else if (spec.kind == "random")
    fill_random(spec, l, t);
  else
    fill_spirals(spec, l, t);
  return t;
}

}  // namespace fhd
