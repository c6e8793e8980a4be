// NUFFT kernel maths: widths and shapes for a tolerance, the ES kernel's
// values, fine-grid sizes, and the deapodization against a brute-force
// Fourier integral of the kernel.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "core/error.hpp"
#include "recon/nufft/nufft_kernel.hpp"

using namespace fhd;
using namespace fhd::nufft;

namespace {

const double kPi = 3.14159265358979323846;

// integral_{-w/2}^{w/2} phi(z) cos(2 pi nu z) dz by composite Simpson in z
// (no change of variable): independent of es_transform's quadrature.
double brute_transform(double nu, const KernelParams& p) {
  const int n = 200000;  // even
  const double a = -0.5 * p.width, h = double(p.width) / n;
  double s = 0.0;
  for (int i = 0; i <= n; ++i) {
    double z = a + i * h;
    double f = es_kernel(z, p) * std::cos(2 * kPi * nu * z);
    s += (i == 0 || i == n) ? f : (i % 2 ? 4 * f : 2 * f);
  }
  return s * h / 3;
}

// The same integral after z = (w/2) sin(theta) (smooth integrand), by
// composite Simpson with many points: checks the quadrature's 1e-14 claim.
double smooth_transform(double nu, const KernelParams& p) {
  const int n = 20000;
  const double h = 0.5 * kPi / n, half = 0.5 * p.width;
  double s = 0.0;
  for (int i = 0; i <= n; ++i) {
    double th = i * h, c = std::cos(th);
    double f = std::exp(p.beta * (c - 1)) * c * std::cos(2 * kPi * nu * half * std::sin(th));
    s += (i == 0 || i == n) ? f : (i % 2 ? 4 * f : 2 * f);
  }
  return 2 * half * s * h / 3;
}

bool five_smooth(int m) {
  for (int f : {2, 3, 5})
    while (m % f == 0) m /= f;
  return m == 1;
}

}  // namespace

TEST_CASE("kernel_for: FINUFFT's widths and shapes", "[nufft]") {
  KernelParams a = kernel_for(1e-6, 2.0);
  CHECK(a.width == 7);
  CHECK(a.beta == Approx(2.30 * 7));
  CHECK(kernel_for(1e-3, 2.0).width == 4);
  CHECK(kernel_for(1e-1, 2.0).width == 2);
  // sigma 1.25: ceil(ln(1e6) / (pi sqrt(0.2))) + 1 = ceil(9.83) + 1 = 11.
  KernelParams b = kernel_for(1e-6, 1.25);
  CHECK(b.width == 11);
  CHECK(b.beta == Approx(0.97 * kPi * 0.6 * 11));
  CHECK(b.sigma == 1.25);
  CHECK(kernel_for(1e-14, 1.25).width == 16);  // capped
  CHECK(kernel_for(1e-14, 2.0).width == 15);
}

TEST_CASE("kernel_for rejects tolerances outside [1e-14, 1e-1]", "[nufft]") {
  CHECK_THROWS_AS(kernel_for(1e-15, 2.0), InputError);
  CHECK_THROWS_AS(kernel_for(0.5, 2.0), InputError);
  CHECK_THROWS_AS(kernel_for(std::numeric_limits<double>::quiet_NaN(), 2.0), InputError);
  CHECK_THROWS_AS(kernel_for(1e-6, 1.0), InputError);
  std::string msg;
  try {
    kernel_for(2.0, 2.0);
  } catch (const InputError& e) {
    msg = e.what();
  }
  CHECK(msg.find("tolerance = 2") != std::string::npos);
}

TEST_CASE("es_kernel: value, symmetry and support", "[nufft]") {
  for (double sigma : {2.0, 1.25}) {
    KernelParams p = kernel_for(1e-6, sigma);
    const double h = 0.5 * p.width;
    CHECK(es_kernel(0.0, p) == 1.0);
    CHECK(es_kernel(0.5 * h, p) == Approx(std::exp(p.beta * (std::sqrt(0.75) - 1.0))).epsilon(1e-14));
    for (double z : {0.1, 0.7, 1.3, 2.9, h - 1e-9}) CHECK(es_kernel(z, p) == es_kernel(-z, p));
    CHECK(es_kernel(h, p) == 0.0);
    CHECK(es_kernel(-h - 0.1, p) == 0.0);
    CHECK(es_kernel(1.0, p) < es_kernel(0.5, p));
  }
}

TEST_CASE("fine_size: smallest even 5-smooth length covering sigma n and 2w", "[nufft]") {
  for (double sigma : {2.0, 1.25}) {
    KernelParams p = kernel_for(1e-6, sigma);
    CHECK(fine_size(1, p) == 1);
    for (int n = 2; n <= 300; ++n) {
      int m = fine_size(n, p);
      INFO("n = " << n << ", sigma = " << sigma << ", m = " << m);
      REQUIRE(m % 2 == 0);
      REQUIRE(five_smooth(m));
      REQUIRE(m >= sigma * n);
      REQUIRE(m >= 2 * p.width);
      for (int s = m - 2; s >= std::max(sigma * n, 2.0 * p.width); s -= 2) REQUIRE_FALSE(five_smooth(s));
    }
  }
  CHECK(fine_size(64, kernel_for(1e-6, 2.0)) == 128);
  CHECK(fine_size(64, kernel_for(1e-6, 1.25)) == 80);
  CHECK(fine_size(16, kernel_for(1e-6, 1.25)) == 24);  // 2w = 22 -> 24
}

TEST_CASE("deapodization: 1/phihat against the direct quadrature sum, and at 7 and 16 modes a brute-force Fourier integral", "[nufft]") {
  for (double tol : {1e-3, 1e-6, 1e-10})
    for (double sigma : {2.0, 1.25})
      for (int n : {7, 16, 256}) {  // 256: the recurrence over many modes
        KernelParams p = kernel_for(tol, sigma);
        int nf = fine_size(n, p);
        std::vector<double> d = deapodization(n, nf, p);
        REQUIRE(d.size() == std::size_t(n));
        const double bound = 1e-13 * es_transform(0.0, p);
        for (int i = 0; i < n; ++i) {
          int k = i - n / 2;
          INFO("tol " << tol << " sigma " << sigma << " n " << n << " k " << k);
          CHECK(d[i] > 0.0);
          // The modes' cosines come by recurrence: against the quadrature
          // summed with a cosine a node (es_transform), at every mode. Both
          // sums' rounding is absolute, of the order of phihat(0) eps, so the
          // bound is too (phihat near n/2 can be 1e-3 of phihat(0)).
          CHECK(1.0 / d[i] == Approx(es_transform(double(k) / nf, p)).epsilon(0).margin(bound));
          if (n <= 16) {
            // Simpson across the kernel's square-root edge converges slowly: 1e-8.
            CHECK(1.0 / d[i] == Approx(brute_transform(double(k) / nf, p)).epsilon(1e-8));
            // The quadrature's 1e-14 claim. Not at 256 modes: near n/2, where
            // phihat is small, the cosine-a-node sum misses 1e-13 too.
            CHECK(1.0 / d[i] == Approx(smooth_transform(double(k) / nf, p)).epsilon(1e-13));
          }
          int j = n / 2 - k;  // the index of mode -k, where it exists
          if (j < n) CHECK(d[i] == Approx(d[j]).epsilon(1e-14));
        }
      }
  CHECK(deapodization(1, 1, kernel_for(1e-6, 2.0)) == std::vector<double>{1.0});
}

TEST_CASE("axis_order: axes of one mode last, the others in their order", "[nufft]") {
  using Order = std::array<int, 3>;
  const int slab_y[3] = {7, 1, 5}, slab_x[3] = {1, 7, 5}, flat[3] = {8, 6, 1}, line[3] = {1, 1, 9}, cube[3] = {4, 5, 6};
  CHECK(fhd::nufft::axis_order(slab_y) == Order{0, 2, 1});
  CHECK(fhd::nufft::axis_order(slab_x) == Order{1, 2, 0});
  CHECK(fhd::nufft::axis_order(flat) == Order{0, 1, 2});
  CHECK(fhd::nufft::axis_order(line) == Order{2, 0, 1});
  CHECK(fhd::nufft::axis_order(cube) == Order{0, 1, 2});
}
