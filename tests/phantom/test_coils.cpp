// Multi-coil synthesis: each coil's k-space is exact (against quadrature of
// s_c(x) f(x) for a smooth phantom), the maps' layout and scale, and the
// correlated noise has the covariance its model says.
#include <cmath>
#include <complex>
#include <stdexcept>

#include "catch.hpp"
#include "phantom/coils.hpp"

using cd = std::complex<double>;

namespace {

constexpr double kPi = 3.14159265358979323846;

// A 2D Gaussian blob with its analytic transform: smooth, so a plain Riemann
// sum of s_c(x) f(x) e^{-i 2 pi k.x} converges spectrally (an independent check).
class Blob : public fhd::Phantom {
 public:
  std::string name() const override { return "blob"; }
  int dims() const override { return 2; }
  double image(double x, double y, double) const override {
    return std::exp(-((x - x0) * (x - x0) + y * y) / (2 * s * s));
  }
  cd kspace(double kx, double ky, double) const override {
    return 2 * kPi * s * s * std::exp(-2 * kPi * kPi * s * s * (kx * kx + ky * ky)) * std::polar(1.0, -2 * kPi * kx * x0);
  }
  double peak() const override { return 1; }
  double s = 0.08, x0 = 0.1;
};

cd quadrature(const Blob& f, const fhd::CoilArray& a, int c, double kx, double ky) {
  const int n = 160;  // [-1/2, 1/2)^2: the blob is < 1e-20 at the edge, h = sigma / 13
  const double h = 1.0 / n;
  cd sum = 0;
  for (int iy = 0; iy < n; ++iy)
    for (int ix = 0; ix < n; ++ix) {
      double x = -0.5 + (ix + 0.5) * h, y = -0.5 + (iy + 0.5) * h;
      sum += a.sensitivity(c, x, y, 0) * f.image(x, y, 0) * std::polar(1.0, -2 * kPi * (kx * x + ky * y));
    }
  return sum * h * h;
}

}  // namespace

TEST_CASE("coil k-space is the exact transform of s_c times the object", "[phantom][coils]") {
  Blob blob;
  fhd::CoilSpec spec;
  spec.coils = 4;
  spec.dims = 2;
  const fhd::CoilArray a = fhd::make_coil_array(spec);
  fhd::Trajectory t;
  t.kx = {0.f, 1.5f, -3.f, 6.25f};
  t.ky = {0.f, -2.f, 4.5f, 1.f};
  t.kz = {0.f, 0.f, 0.f, 0.f};
  const int nx = 32, ny = 24;
  auto d = fhd::synthesize_coils(blob, a, t, nx, ny, 1);
  REQUIRE(d.size() == 4);
  for (int c = 0; c < 4; ++c)
    for (std::size_t m = 0; m < t.size(); ++m) {
      cd ref = quadrature(blob, a, c, t.kx[m], t.ky[m]) * double(nx * ny);
      INFO("coil " << c << " sample " << m << ": " << d[c][m] << " vs " << ref);
      CHECK(std::abs(cd(d[c][m]) - ref) <= 1e-5 * std::abs(d[0][0]));
    }
}

TEST_CASE("coil maps: layout, scale at the origin, coils see their own side", "[phantom][coils]") {
  for (int dims : {2, 3}) {
    fhd::CoilSpec spec;
    spec.coils = 8;
    spec.dims = dims;
    const fhd::CoilArray a = fhd::make_coil_array(spec);
    REQUIRE(a.coils() == 8);
    const int n = 16, nz = dims == 3 ? n : 1;
    auto maps = fhd::coil_maps(a, n, n, nz);
    const std::size_t origin = n / 2 + n * (n / 2 + std::size_t(n) * (nz / 2));
    double rss2 = 0;
    for (int c = 0; c < 8; ++c) rss2 += std::norm(cd(maps[c][origin]));
    CHECK(std::abs(rss2 - 1.0) < 1e-5);
    // Voxel (3, 5, 2) is (3 - 8)/16, (5 - 8)/16, ...
    const std::size_t v = 3 + n * (5 + std::size_t(n) * (dims == 3 ? 2 : 0));
    cd want = a.sensitivity(5, -5.0 / 16, -3.0 / 16, dims == 3 ? -6.0 / 16 : 0.0);
    CHECK(std::abs(cd(maps[5][v]) - want) < 1e-6);
    // The 2D coil 0 sits at +x: it sees x = +0.4 more strongly than x = -0.4.
    if (dims == 2) CHECK(std::abs(a.sensitivity(0, 0.4, 0, 0)) > 4 * std::abs(a.sensitivity(0, -0.4, 0, 0)));
  }
  fhd::CoilSpec bad;
  bad.coils = 0;
  CHECK_THROWS_AS(fhd::make_coil_array(bad), std::invalid_argument);
  bad.coils = 4;
  bad.period = 0.5;
  CHECK_THROWS_AS(fhd::make_coil_array(bad), std::invalid_argument);
}

TEST_CASE("correlated noise has the model's covariance 2 sigma^2 A A^H", "[phantom][coils]") {
  const int nc = 6;
  const fhd::NoiseModel model = fhd::make_noise_model(nc, 5);
  const auto psi = model.covariance();
  double trace = 0, max_corr = 0;
  for (int i = 0; i < nc; ++i) trace += psi[i * nc + i].real();
  CHECK(std::abs(trace / nc - 1.0) < 1e-12);
  for (int i = 0; i < nc; ++i)
    for (int j = 0; j < nc; ++j) {
      CHECK(std::abs(psi[i * nc + j] - std::conj(psi[j * nc + i])) < 1e-12);
      if (i != j)
        max_corr = std::max(max_corr, std::abs(psi[i * nc + j]) / std::sqrt(psi[i * nc + i].real() * psi[j * nc + j].real()));
    }
  INFO("largest correlation " << max_corr);
  CHECK(max_corr > 0.05);  // realistically correlated, not white
  CHECK(max_corr < 0.8);
  const double sigma = 0.5;
  const std::size_t m = 40000;
  auto noise = fhd::noise_scan(model, sigma, m, 9);
  // Sample covariance against 2 sigma^2 Psi: statistical error ~ 1/sqrt(m) = 0.5%.
  double err = 0, ref = 0;
  for (int i = 0; i < nc; ++i)
    for (int j = 0; j < nc; ++j) {
      cd s = 0;
      for (std::size_t k = 0; k < m; ++k) s += cd(noise[i][k]) * std::conj(cd(noise[j][k]));
      err += std::norm(s / double(m) - 2 * sigma * sigma * psi[i * nc + j]);
      ref += std::norm(2 * sigma * sigma * psi[i * nc + j]);
    }
  CHECK(std::sqrt(err / ref) < 0.03);
}

TEST_CASE("add_coil_noise scales sigma to the RMS of every coil's data", "[phantom][coils]") {
  const fhd::NoiseModel model = fhd::make_noise_model(3, 1);
  std::vector<std::vector<std::complex<float>>> data(3, std::vector<std::complex<float>>(20000));
  for (int c = 0; c < 3; ++c)
    for (auto& v : data[c]) v = std::complex<float>(float(c + 1), 0.f);  // RMS sqrt(14/3)
  auto clean = data;
  const double sigma = fhd::add_coil_noise(data, model, 0.1, 3);
  CHECK(std::abs(sigma - 0.1 * std::sqrt(14.0 / 3.0)) < 1e-12);
  double power = 0;
  for (int c = 0; c < 3; ++c)
    for (std::size_t k = 0; k < data[c].size(); ++k) power += std::norm(cd(data[c][k]) - cd(clean[c][k]));
  // E|n_c|^2 = 2 sigma^2 Psi_cc, mean diagonal 1.
  CHECK(std::abs(power / (3 * 20000.0) / (2 * sigma * sigma) - 1.0) < 0.05);
  CHECK_THROWS_AS(fhd::add_coil_noise(data, fhd::make_noise_model(2, 1), 0.1, 3), std::invalid_argument);
  CHECK_THROWS_AS(fhd::add_coil_noise(data, model, -1, 3), std::invalid_argument);
}
