// NUFFT kernel maths (see nufft_kernel.hpp for units and conventions).
#include "recon/nufft/nufft_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.hpp"

namespace fhd::nufft {

namespace {

const double kPi = 3.14159265358979323846;
const int kMaxWidth = 16;

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n from the
// Chebyshev-like initial guesses; converges to machine precision).
struct GaussLegendre {
  std::vector<double> x, w;
  explicit GaussLegendre(int n) : x(n), w(n) {
    for (int i = 0; i < n; ++i) {
      double t = std::cos(kPi * (i + 0.75) / (n + 0.5));
      double dp = 1.0;
      for (int it = 0; it < 100; ++it) {
        double p0 = 1.0, p1 = t;  // P_0, P_1; recurrence up to P_n
        for (int k = 2; k <= n; ++k) {
          double p2 = ((2.0 * k - 1.0) * t * p1 - (k - 1.0) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (t * p1 - p0) / (t * t - 1.0);
        double step = p1 / dp;
        t -= step;
        if (std::fabs(step) < 1e-16) break;
      }
      x[i] = t;
      w[i] = 2.0 / ((1.0 - t * t) * dp * dp);
    }
  }
};

// After z = (w/2) sin(theta) the integrand is entire in theta with at most
// beta + pi w / 2 (< 70) radians of variation over the interval; 120 nodes
// resolve that to rounding (tests compare with a brute-force integral).
const GaussLegendre& quadrature() {
  static const GaussLegendre gl(120);
  return gl;
}

}  // namespace

KernelParams kernel_for(double tol, double sigma) {
  if (!(tol >= 1e-14 && tol <= 1e-1))
    throw InputError("nufft", "tolerance", num(tol), "must lie in [1e-14, 1e-1]");
  if (!(sigma > 1.0 && sigma <= 4.0))
    throw InputError("nufft", "upsampling", num(sigma), "must lie in (1, 4] (use 2 or 1.25)");
  int w;
  double beta_per_w;
  if (sigma == 2.0) {
    w = int(std::ceil(std::log10(1.0 / tol))) + 1;
    beta_per_w = 2.30;
  } else {  // + 1: see the header
    w = int(std::ceil(std::log(1.0 / tol) / (kPi * std::sqrt(1.0 - 1.0 / sigma)))) + 1;
    beta_per_w = 0.97 * kPi * (1.0 - 1.0 / (2.0 * sigma));
  }
  w = std::clamp(w, 2, kMaxWidth);
  return {w, beta_per_w * w, sigma};
}

double es_kernel(double z, const KernelParams& p) {
  double t = 2.0 * z / p.width;
  double s = 1.0 - t * t;
  return s > 0.0 ? std::exp(p.beta * (std::sqrt(s) - 1.0)) : 0.0;
}

int fine_size(int n, const KernelParams& p) {
  if (n <= 1) return 1;
  double need = std::max(std::ceil(p.sigma * n), 2.0 * p.width);
  for (long m = long(need);; ++m) {
    if (m % 2) continue;
    long r = m;
    for (int f : {2, 3, 5})
      while (r % f == 0) r /= f;
    if (r == 1) return int(m);
  }
}

namespace {

// phihat(nu) = 2 int_0^{w/2} phi(z) cos(2 pi nu z) dz; z = (w/2) sin(theta),
// theta in [0, pi/2], dz = (w/2) cos(theta) dtheta, sqrt(1 - (2z/w)^2) = cos(theta).
// The kernel's values at the quadrature nodes do not depend on nu: made once
// per table, so each nu costs one cosine per node (a plan's three tables took
// 2-4 ms with the exponentials inside the loop, on the GPU machine's host).
class EsTransform {
 public:
  explicit EsTransform(const KernelParams& p) {
    const GaussLegendre& gl = quadrature();
    const double half = 0.5 * p.width, a = 0.25 * kPi;  // theta = a (x + 1)
    for (std::size_t i = 0; i < gl.x.size(); ++i) {
      const double th = a * (gl.x[i] + 1.0), c = std::cos(th);
      weight_.push_back(2.0 * half * a * gl.w[i] * std::exp(p.beta * (c - 1.0)) * c);
      phase_.push_back(2.0 * kPi * half * std::sin(th));
    }
  }
  double at(double nu) const {
    double sum = 0.0;
    for (std::size_t i = 0; i < weight_.size(); ++i) sum += weight_[i] * std::cos(nu * phase_[i]);
    return sum;
  }
  // at(k step) for k = 0..count-1. Each node's cos(k step phase) by turning
  // a unit vector, restarted from the exact angle every kRestart modes
  // (rounding grows with the turns): one sine and cosine a node per kRestart
  // modes instead of one cosine a node and mode, which at 256 modes an axis
  // was most of a GPU plan's 0.6-1.0 ms. The nodes are the inner loop: their
  // turns are independent, where one node's form a chain. Three 256-mode
  // tables: 0.55 -> 0.14 ms on the CPU machine.
  std::vector<double> at_multiples(double step, int count) const {
    constexpr int kRestart = 32;
    const std::size_t nodes = weight_.size();
    std::vector<double> sum(std::size_t(count), 0.0), c(nodes), s(nodes), c1(nodes), s1(nodes);
    for (std::size_t i = 0; i < nodes; ++i) {
      c1[i] = std::cos(step * phase_[i]);
      s1[i] = std::sin(step * phase_[i]);
    }
    for (int k = 0; k < count; ++k) {
      if (k % kRestart == 0)
        for (std::size_t i = 0; i < nodes; ++i) {
          c[i] = std::cos(k * step * phase_[i]);
          s[i] = std::sin(k * step * phase_[i]);
        }
      double total = 0.0;
      for (std::size_t i = 0; i < nodes; ++i) {
        total += weight_[i] * c[i];
        const double next = c[i] * c1[i] - s[i] * s1[i];
        s[i] = s[i] * c1[i] + c[i] * s1[i];
        c[i] = next;
      }
      sum[std::size_t(k)] = total;
    }
    return sum;
  }

 private:
  std::vector<double> weight_, phase_;
};

}  // namespace

double es_transform(double nu, const KernelParams& p) { return EsTransform(p).at(nu); }

std::vector<double> deapodization(int n, int nf, const KernelParams& p) {
  if (n <= 1) return std::vector<double>(std::max(n, 0), 1.0);
  // phihat is even: mode k takes the value at |k| <= n/2.
  const std::vector<double> phihat = EsTransform(p).at_multiples(1.0 / nf, n / 2 + 1);
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = 1.0 / phihat[std::size_t(std::abs(i - n / 2))];
  return d;
}

std::array<int, 3> axis_order(const int n[3]) {
  std::array<int, 3> axis{};
  int used = 0;
  for (int idle = 0; idle < 2; ++idle)
    for (int a = 0; a < 3; ++a)
      if ((n[a] == 1) == bool(idle)) axis[used++] = a;
  return axis;
}

}  // namespace fhd::nufft
