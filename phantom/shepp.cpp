// The 3D (Koay 2007) and 2D (modified, Toft) Shepp-Logan phantoms as sums of
// ellipsoids with analytic Fourier transforms. Tables are in u units ([-1,1]);
// docs/conventions.md maps them to FOV units by x = u/2, done once at construction.
#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "phantom/phantom.hpp"

namespace fhd {
namespace {

constexpr double kPi = 3.14159265358979323846;

// One ellipsoid (or ellipse: c and z unused) in FOV units. Inside means
// |diag(1/a,1/b,1/c) R^T (x - d)| <= 1, R = rotation by phi about z.
struct Ellipsoid {
  double p, a, b, c, dx, dy, dz;
  double cphi, sphi;  // cos and sin of the rotation angle, kept for speed
};

// Row of a table in u units: (p; a,b,c; x0,y0,z0; phi).
Ellipsoid from_u(double p, double a, double b, double c, double x0, double y0, double z0,
                 double phi) {
  return {p, a / 2, b / 2, c / 2, x0 / 2, y0 / 2, z0 / 2, std::cos(phi), std::sin(phi)};
}

std::vector<Ellipsoid> koay_table() {
  const double pi = kPi;
  return {from_u(2.0, .69, .92, .90, 0, 0, 0, 0),
          from_u(-.8, .6624, .874, .88, 0, 0, 0, 0),
          from_u(-.2, .41, .16, .21, -.22, 0, -.25, 3 * pi / 5),
          from_u(-.2, .31, .11, .22, .22, 0, -.25, 2 * pi / 5),
          from_u(.2, .21, .25, .5, 0, .35, -.25, 0),
          from_u(.2, .046, .046, .046, 0, .1, -.25, 0),
          from_u(.1, .046, .023, .02, -.08, -.65, -.25, 0),
          from_u(.1, .046, .023, .02, .06, -.65, -.25, pi / 2),
          from_u(.2, .056, .04, .1, .06, -.105, .625, pi / 2),
          from_u(-.2, .056, .056, .1, 0, .1, .625, 0)};
}

// MATLAB's phantom('Modified Shepp-Logan'): angles there are in degrees.
std::vector<Ellipsoid> toft_table() {
  const double deg = kPi / 180;
  return {from_u(1.0, .69, .92, 1, 0, 0, 0, 0),
          from_u(-.8, .6624, .874, 1, 0, -.0184, 0, 0),
          from_u(-.2, .11, .31, 1, .22, 0, 0, -18 * deg),
          from_u(-.2, .16, .41, 1, -.22, 0, 0, 18 * deg),
          from_u(.1, .21, .25, 1, 0, .35, 0, 0),
          from_u(.1, .046, .046, 1, 0, .1, 0, 0),
          from_u(.1, .046, .046, 1, 0, -.1, 0, 0),
          from_u(.1, .046, .023, 1, -.08, -.605, 0, 0),
          from_u(.1, .023, .023, 1, 0, -.606, 0, 0),
          from_u(.1, .023, .046, 1, .06, -.605, 0, 0)};
}

// 3 (sin t - t cos t) / t^3, the unit ball's transform over its volume. The
// closed form loses digits to cancellation for small t, so use its series there.
double ball_factor(double t) {
  if (t > 1.0) return 3.0 * (std::sin(t) - t * std::cos(t)) / (t * t * t);
  // 3 sum_{n>=1} (-1)^{n+1} 2n t^{2n-2} / (2n+1)!; 10 terms leave < 1e-17 at t = 1.
  double sum = 0, term = 1.0 / 6.0;  // t^{2n-2}/(2n+1)! at n = 1
  for (int n = 1; n <= 10; ++n) {
    sum += (n % 2 ? 1 : -1) * 2 * n * term;
    term *= t * t / ((2 * n + 2) * (2 * n + 3));
  }
  return 3.0 * sum;
}

// 2 J1(t) / t (the jinc), equal to 1 at t = 0: series for small t.
double disk_factor(double t) {
  if (t > 1.0) return 2.0 * std::cyl_bessel_j(1.0, t) / t;
  // sum_m (-1)^m (t/2)^{2m} / (m! (m+1)!); 10 terms leave < 1e-20 at t = 1.
  double sum = 0, term = 1.0, q = t * t / 4;
  for (int m = 0; m < 10; ++m) {
    sum += term;
    term *= -q / ((m + 1.0) * (m + 2.0));
  }
  return sum;
}

class EllipsoidPhantom : public Phantom {
 public:
  EllipsoidPhantom(std::string name, int dims, std::vector<Ellipsoid> shapes)
      : name_(std::move(name)), dims_(dims), shapes_(std::move(shapes)) {}
  std::string name() const override { return name_; }
  int dims() const override { return dims_; }
  // The search takes ~0.1 s, so it runs on first use only (thread-safe).
  double peak() const override {
    std::call_once(peak_once_, [this] { peak_ = search_peak(); });
    return peak_;
  }

  double image(double x, double y, double z) const override {
    double sum = 0;
    for (const auto& e : shapes_)
      if (quad_form(e, x, y, z) <= 1.0) sum += e.p;
    return sum;
  }

  std::complex<double> kspace(double kx, double ky, double kz) const override {
    std::complex<double> sum = 0;
    for (const auto& e : shapes_) sum += transform(e, kx, ky, kz);
    return sum;
  }

  int shapes() const override { return int(shapes_.size()); }
  bool inside(int e, double x, double y, double z) const override {
    return quad_form(shapes_.at(std::size_t(e)), x, y, z) <= 1.0;
  }
  std::complex<double> shape_kspace(int e, double kx, double ky, double kz) const override {
    Ellipsoid unit = shapes_.at(std::size_t(e));
    unit.p = 1.0;
    return transform(unit, kx, ky, kz);
  }

 private:
  double quad_form(const Ellipsoid& e, double x, double y, double z) const {
    double X = x - e.dx, Y = y - e.dy, c = e.cphi, s = e.sphi;
    double u = (c * X + s * Y) / e.a, v = (-s * X + c * Y) / e.b;
    double w = dims_ == 3 ? (z - e.dz) / e.c : 0.0;
    return u * u + v * v + w * w;
  }

  std::complex<double> transform(const Ellipsoid& e, double kx, double ky, double kz) const {
    double c = e.cphi, s = e.sphi;
    double ku = e.a * (c * kx + s * ky), kv = e.b * (-s * kx + c * ky);
    double kw = dims_ == 3 ? e.c * kz : 0.0;
    double t = 2 * kPi * std::sqrt(ku * ku + kv * kv + kw * kw);
    double phase = kx * e.dx + ky * e.dy + (dims_ == 3 ? kz * e.dz : 0.0);
    phase -= std::rint(phase);  // keeps the argument small for accuracy
    std::complex<double> shift = std::polar(1.0, -2 * kPi * phase);
    double mag = dims_ == 3 ? e.p * (4.0 / 3.0) * kPi * e.a * e.b * e.c * ball_factor(t)
                            : e.p * kPi * e.a * e.b * disk_factor(t);
    return mag * shift;
  }

  // The image is piecewise constant and every region of the arrangement is
  // bounded by some ellipsoid surface, so points just inside and just outside
  // each surface (plus the centers) visit every region whose boundary patch is
  // wider than the angular grid (about 1.4 degrees). See docs/phantom.md.
  double search_peak() const {
    const std::vector<std::array<double, 3>> dirs = unit_directions();
    double best = -1e300;
    for (const auto& e : shapes_) {
      best = std::max(best, image(e.dx, e.dy, e.dz));
      for (double scale : {1 - 1e-9, 1 + 1e-9})
        for (const auto& d : dirs) best = std::max(best, image_at_local(e, scale, d));
    }
    return best;
  }

  // A polar x azimuth grid of the unit sphere (the unit circle in 2D).
  std::vector<std::array<double, 3>> unit_directions() const {
    const int nt = dims_ == 3 ? 128 : 1, np = 256;
    std::vector<std::array<double, 3>> dirs;
    for (int it = 0; it < nt; ++it) {
      double theta = dims_ == 3 ? kPi * (it + 0.5) / nt : kPi / 2;
      for (int ip = 0; ip < np; ++ip) {
        double ph = 2 * kPi * ip / np;
        dirs.push_back({std::sin(theta) * std::cos(ph), std::sin(theta) * std::sin(ph), std::cos(theta)});
      }
    }
    return dirs;
  }

  // image() at d + R diag(a,b,c) * scale * dir.
  double image_at_local(const Ellipsoid& e, double scale, const std::array<double, 3>& dir) const {
    double lu = scale * e.a * dir[0], lv = scale * e.b * dir[1], lw = scale * e.c * dir[2];
    double c = e.cphi, s = e.sphi;
    return image(e.dx + c * lu - s * lv, e.dy + s * lu + c * lv, e.dz + lw);
  }

  std::string name_;
  int dims_;
  std::vector<Ellipsoid> shapes_;
  mutable std::once_flag peak_once_;
  mutable double peak_ = 0;
};

}  // namespace

const std::vector<std::string>& phantom_names() {
  static const std::vector<std::string> names = {"shepp3d", "shepp2d"};
  return names;
}

std::unique_ptr<Phantom> make_phantom(const std::string& name) {
  if (name == "shepp3d") return std::make_unique<EllipsoidPhantom>(name, 3, koay_table());
  if (name == "shepp2d") return std::make_unique<EllipsoidPhantom>(name, 2, toft_table());
  throw std::invalid_argument("phantom = " + name + ": unknown (known: shepp3d, shepp2d)");
}

}  // namespace fhd
