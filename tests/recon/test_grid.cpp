// Gridding: kernel formulas, the scatter against a brute-force sum, and the
// whole gridding reconstruction against direct inverse DFTs in float64.
#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/device/device.hpp"
#include "recon/gridding/gridding_cpu.hpp"
#include "recon/gridding/kaiser_bessel.hpp"

using namespace fhd;

namespace {

const double kPi = 3.14159265358979323846;

// (1/Nvox) sum_m a_m exp(+i 2 pi k_m . x_n) at voxel centers, float64.
std::vector<cdouble> direct_adjoint(const Trajectory& t, const std::vector<cfloat>& a, const ImageGrid& g) {
  std::vector<cdouble> out(g.voxels());
  for (int iz = 0; iz < g.nz; ++iz)
    for (int iy = 0; iy < g.ny; ++iy)
      for (int ix = 0; ix < g.nx; ++ix) {
        double x = axis_coord(ix, g.nx, g.nx), y = axis_coord(iy, g.ny, g.ny), z = axis_coord(iz, g.nz, g.nz);
        cdouble s = 0;
        for (std::size_t m = 0; m < t.size(); ++m)
          s += cdouble(a[m]) * std::polar(1.0, 2 * kPi * (double(t.kx[m]) * x + double(t.ky[m]) * y +
                                                          double(t.kz[m]) * z));
        out[ix + g.nx * (iy + std::size_t(g.ny) * iz)] = s / double(g.voxels());
      }
  return out;
}

// ||out - ref|| / ||ref|| (tests/test_util.hpp); NaN anywhere gives NaN.
double relerr(const std::vector<cfloat>& out, const std::vector<cdouble>& ref) { return fhd::test::rel_l2(out, ref); }

// Every integer k in [-N/2, N/2) per axis (kz = 0 when nz = 1).
Trajectory cartesian(const ImageGrid& g) {
  Trajectory t;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        t.kx.push_back(float(x - g.nx / 2));
        t.ky.push_back(float(y - g.ny / 2));
        t.kz.push_back(float(z - g.nz / 2));
      }
  return t;
}

std::vector<cfloat> gaussian_vector(std::size_t m, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<cfloat> d(m);
  for (auto& v : d) v = cfloat(n(rng), n(rng));
  return d;
}

GridKernel kb(double width, double sigma = 2.0) {
  GridKernel k;
  k.type = GridKernel::Type::KaiserBessel;
  k.width = width;
  k.oversampling = sigma;
  return k;
}

GridKernel trilinear(double sigma = 2.0) {
  GridKernel k;
  k.type = GridKernel::Type::Trilinear;
  k.oversampling = sigma;
  return k;
}

// Simpson's rule for the transform of an even kernel of half width h.
double numeric_transform(double (*f)(double, double, double), double w, double beta, double nu) {
  const int n = 20000;
  const double h = w / 2, dx = 2 * h / n;
  double s = 0;
  for (int i = 0; i <= n; ++i) {
    double x = -h + i * dx;
    double c = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    s += c * f(x, w, beta) * std::cos(2 * kPi * nu * x);
  }
  return s * dx / 3;
}

double tri_fn(double x, double, double) { return tri_value(x); }

}  // namespace

TEST_CASE("Bessel I0 matches its power series", "[grid]") {
  for (double x : {0.0, 0.5, 2.0, 3.7, 3.8, 8.0, 13.9, 25.0}) {
    double term = 1, sum = 1;
    for (int k = 1; k < 200; ++k) {
      term *= (x / 2) * (x / 2) / (double(k) * k);
      sum += term;
    }
    INFO("x = " << x);
    CHECK(std::fabs(bessel_i0(x) / sum - 1) < 3e-7);
  }
}

TEST_CASE("kernel transforms match numerical integrals", "[grid]") {
  for (double w : {2.0, 4.0, 6.0}) {
    double beta = kb_beatty_beta(w, 2.0);
    for (double nu : {0.0, 0.1, 0.25, 0.5, 0.9}) {
      INFO("W = " << w << " nu = " << nu);
      double num = numeric_transform(kb_value, w, beta, nu);
      CHECK(std::fabs(kb_transform(nu, w, beta) - num) < 1e-6 * kb_transform(0, w, beta));
    }
  }
  for (double nu : {0.0, 0.2, 0.5, 1.3})
    CHECK(std::fabs(tri_transform(nu) - numeric_transform(tri_fn, 2.0, 0.0, nu)) < 1e-7);
  // Beatty's beta for W = 4, sigma = 2: pi * sqrt(9 - 0.8).
  CHECK(std::fabs(kb_beatty_beta(4.0, 2.0) - kPi * std::sqrt(8.2)) < 1e-12);
}

TEST_CASE("oversampled grid sizes are even and keep singleton axes", "[grid]") {
  ImageGrid g = oversampled_grid({64, 33, 1}, 1.25);
  CHECK(g.nx == 80);
  CHECK(g.ny == 42);  // round(41.25) = 41, made even
  CHECK(g.nz == 1);
}

// Brute force: every (grid cell, sample) pair with the periodic distance.
static std::vector<cdouble> brute_scatter(const Trajectory& t, const std::vector<cfloat>& a,
                                          const ImageGrid& img, const ImageGrid& over, const GridKernel& gk) {
  ResolvedKernel k = resolve_kernel(gk);
  const int n[3] = {img.nx, img.ny, img.nz}, g[3] = {over.nx, over.ny, over.nz};
  std::vector<cdouble> out(over.voxels());
  for (std::size_t m = 0; m < t.size(); ++m) {
    const double kk[3] = {t.kx[m], t.ky[m], t.kz[m]};
    double u[3];
    for (int ax = 0; ax < 3; ++ax) u[ax] = kk[ax] * g[ax] / n[ax] + g[ax] / 2;
    for (int z = 0; z < g[2]; ++z)
      for (int y = 0; y < g[1]; ++y)
        for (int x = 0; x < g[0]; ++x) {
          const int j[3] = {x, y, z};
          double w = 1;
          for (int ax = 0; ax < 3; ++ax) {
            if (g[ax] == 1) continue;
            double d = j[ax] - u[ax];
            d -= g[ax] * std::round(d / g[ax]);
            w *= k.value(d);
          }
          out[x + g[0] * (y + std::size_t(g[1]) * z)] += w * cdouble(a[m]);
        }
  }
  return out;
}

TEST_CASE("scatter equals the brute-force periodic sum", "[grid]") {
  std::mt19937 rng(7);
  for (ImageGrid img : {ImageGrid{12, 10, 8}, ImageGrid{20, 14, 1}}) {
    for (GridKernel gk : {kb(4.0), kb(5.5, 1.5), trilinear()}) {
      ImageGrid over = oversampled_grid(img, gk.oversampling);
      // Many samples (the parallel slab path starts at 1024), some at the band edge to hit the wrap.
      Trajectory t;
      std::uniform_real_distribution<float> ux(-img.nx / 2.f, img.nx / 2.f), uy(-img.ny / 2.f, img.ny / 2.f),
          uz(-img.nz / 2.f, img.nz / 2.f);
      for (int m = 0; m < 2000; ++m) {
        t.kx.push_back(m % 50 == 0 ? -img.nx / 2.f : ux(rng));
        t.ky.push_back(m % 70 == 0 ? img.ny / 2.f - 0.01f : uy(rng));
        t.kz.push_back(img.nz == 1 ? 0.f : uz(rng));
      }
      auto a = gaussian_vector(t.size(), 3);
      auto got = cpu_grid_scatter(t, a, img, over, gk);
      auto want = brute_scatter(t, a, img, over, gk);
      double maxref = 0, maxdiff = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        maxref = std::max(maxref, std::abs(want[i]));
        maxdiff = std::max(maxdiff, std::abs(cdouble(got[i]) - want[i]));
      }
      INFO("grid " << over.nx << "x" << over.ny << "x" << over.nz << " width " << gk.width);
      CHECK(maxdiff < 1e-5 * maxref);
    }
  }
}

TEST_CASE("KB gridding of a full Cartesian grid reproduces the inverse DFT", "[grid]") {
  auto dev = make_cpu_device();
  Device& be = *dev;
  for (ImageGrid img : {ImageGrid{16, 12, 1}, ImageGrid{8, 8, 6}}) {
    Trajectory t = cartesian(img);
    auto d = gaussian_vector(t.size(), 11);
    auto want = direct_adjoint(t, d, img);
    // Aliasing of KB at sigma = 2 (Beatty 2005 fig. 3): measured 7e-4 at W = 4, 1e-6 at W = 7.
    double e4 = relerr(gridding_recon(be, t, d, {}, img, kb(4.0)), want);
    double e7 = relerr(gridding_recon(be, t, d, {}, img, kb(7.0)), want);
    INFO("W=4: " << e4 << "  W=7: " << e7);
    CHECK(e4 < 2e-3);
    CHECK(e7 < 1e-5);
  }
}

TEST_CASE("trilinear on grid points: the result times sinc^2 is the exact DFT", "[grid]") {
  // With sigma = 2 Cartesian samples sit on grid points, where the triangle
  // acts as a delta: the only error left is the sinc^2 deapodization itself.
  auto dev = make_cpu_device();
  Device& be = *dev;
  ImageGrid img{8, 6, 4};
  Trajectory t = cartesian(img);
  auto d = gaussian_vector(t.size(), 5);
  auto want = direct_adjoint(t, d, img);
  auto got = gridding_recon(be, t, d, {}, img, trilinear());
  ImageGrid over = oversampled_grid(img, 2.0);
  double worst = 0;
  for (int z = 0; z < img.nz; ++z)
    for (int y = 0; y < img.ny; ++y)
      for (int x = 0; x < img.nx; ++x) {
        std::size_t i = x + img.nx * (y + std::size_t(img.ny) * z);
        double apod = tri_transform(double(x - img.nx / 2) / over.nx) *
                      tri_transform(double(y - img.ny / 2) / over.ny) *
                      tri_transform(double(z - img.nz / 2) / over.nz);
        worst = std::max(worst, std::abs(cdouble(got[i]) * apod - want[i]));
      }
  double peak = 0;
  for (auto v : want) peak = std::max(peak, std::abs(v));
  CHECK(worst < 1e-5 * peak);
}

TEST_CASE("one off-grid sample gives its plane wave", "[grid]") {
  auto dev = make_cpu_device();
  Device& be = *dev;
  ImageGrid img{16, 16, 16};
  Trajectory t;
  t.kx = {3.3f};
  t.ky = {-5.71f};
  t.kz = {0.45f};
  std::vector<cfloat> d = {cfloat(0.6f, -0.8f)};
  std::vector<float> w = {1.0f};
  auto want = direct_adjoint(t, d, img);
  double e4 = relerr(gridding_recon(be, t, d, w, img, kb(4.0)), want);
  double e6 = relerr(gridding_recon(be, t, d, w, img, kb(6.0)), want);
  double etri = relerr(gridding_recon(be, t, d, w, img, trilinear()), want);
  INFO("W=4: " << e4 << "  W=6: " << e6 << "  trilinear: " << etri);
  CHECK(e4 < 2e-3);
  CHECK(e6 < 5e-5);
  // Trilinear aliasing bound per axis at sigma = 2: (1 - sinc^2(1/4)) / sinc^2(1/4) = 0.23.
  CHECK(etri < 0.25);
  CHECK(etri > 10 * e4);
}

TEST_CASE("deapodization flattens the image of a DC sample", "[grid]") {
  // Without deapodization the image of a DC sample is the kernel's bell
  // (about 0.5 at the edge for W = 4); with it, a constant 1/Nvox.
  auto dev = make_cpu_device();
  Device& be = *dev;
  ImageGrid img{32, 24, 1};
  Trajectory t;
  t.kx = {0.f};
  t.ky = {0.f};
  t.kz = {0.f};
  auto got = gridding_recon(be, t, {cfloat(1.f, 0.f)}, {1.0f}, img, kb(4.0));
  double worst = 0;
  for (auto v : got) worst = std::max(worst, std::abs(cdouble(v) * double(img.voxels()) - 1.0));
  CHECK(worst < 2e-3);
}

TEST_CASE("gridding rejects mismatched inputs", "[grid]") {
  auto dev = make_cpu_device();
  Device& be = *dev;
  ImageGrid img{8, 8, 1};
  Trajectory t = cartesian(img);
  CHECK_THROWS(gridding_recon(be, t, std::vector<cfloat>(3), {}, img, kb(4.0)));
  CHECK_THROWS(gridding_recon(be, t, std::vector<cfloat>(t.size()), std::vector<float>(2), img, kb(4.0)));
  GridKernel bad = kb(4.0, 0.5);
  CHECK_THROWS(gridding_recon(be, t, std::vector<cfloat>(t.size()), {}, img, bad));
}
