// Band-limited reference: exact on a band-limited Gaussian, equal to a direct
// float64 sum on a tiny grid, and sane against the Shepp-Logan voxel image.
#include <cmath>
#include <complex>
#include <vector>

#include "catch.hpp"
#include "phantom/phantom.hpp"
#include "recon/eval/metrics.hpp"
#include "recon/eval/reference.hpp"

using namespace fhd;

namespace {

// The object's continuous transform, as recon's band-limited image takes it.
KSpaceFn kspace_of(const Phantom& p) {
  return [&p](double kx, double ky, double kz) { return p.kspace(kx, ky, kz); };
}

const double kPi = 3.14159265358979323846;

// exp(-pi |x|^2 / s^2) in 2 or 3 dimensions: S(k) = s^d exp(-pi s^2 |k|^2).
// With s = 0.2 and N = 32 it is below 1e-8 past the FOV edge and past the
// band edge, so the band-limited reference must equal it at voxel centers.
class Gaussian : public Phantom {
 public:
  explicit Gaussian(int d) : d_(d) {}
  std::string name() const override { return "gaussian"; }
  int dims() const override { return d_; }
  double image(double x, double y, double z) const override {
    double r2 = x * x + y * y + (d_ == 3 ? z * z : 0.0);
    return std::exp(-kPi * r2 / (s_ * s_));
  }
  std::complex<double> kspace(double kx, double ky, double kz) const override {
    double k2 = kx * kx + ky * ky + (d_ == 3 ? kz * kz : 0.0);
    return std::pow(s_, d_) * std::exp(-kPi * s_ * s_ * k2);
  }
  double peak() const override { return 1.0; }

 private:
  int d_;
  double s_ = 0.2;
};

double max_abs_diff(const std::vector<cfloat>& a, const Phantom& p, const ImageGrid& g) {
  double worst = 0;
  for (int iz = 0; iz < g.nz; ++iz)
    for (int iy = 0; iy < g.ny; ++iy)
      for (int ix = 0; ix < g.nx; ++ix) {
        double v = p.image(axis_coord(ix, g.nx, g.nx), axis_coord(iy, g.ny, g.ny), axis_coord(iz, g.nz, g.nz));
        worst = std::max(worst, std::abs(cdouble(a[ix + g.nx * (iy + std::size_t(g.ny) * iz)]) - v));
      }
  return worst;
}

}  // namespace

TEST_CASE("reference of a band-limited Gaussian is the Gaussian", "[reference]") {
  Gaussian g2(2), g3(3);
  CHECK(max_abs_diff(band_limited_image(kspace_of(g2), {32, 32, 1}), g2, {32, 32, 1}) < 1e-6);
  CHECK(max_abs_diff(band_limited_image(kspace_of(g3), {32, 32, 32}), g3, {32, 32, 32}) < 1e-6);
  // Non-cubic: the band is an ellipsoid, still wide enough for this Gaussian.
  CHECK(max_abs_diff(band_limited_image(kspace_of(g3), {32, 40, 36}), g3, {32, 40, 36}) < 1e-6);
}

TEST_CASE("reference equals a direct sum over the band on a tiny grid", "[reference]") {
  auto p = make_phantom("shepp3d");
  ImageGrid g{8, 6, 4};
  auto ref = band_limited_image(kspace_of(*p), g);
  double worst = 0, peak = 0;
  for (int iz = 0; iz < g.nz; ++iz)
    for (int iy = 0; iy < g.ny; ++iy)
      for (int ix = 0; ix < g.nx; ++ix) {
        cdouble s = 0;
        for (int kz = -g.nz / 2; kz < g.nz - g.nz / 2; ++kz)
          for (int ky = -g.ny / 2; ky < g.ny - g.ny / 2; ++ky)
            for (int kx = -g.nx / 2; kx < g.nx - g.nx / 2; ++kx) {
              double e = std::pow(kx / (g.nx / 2.0), 2) + std::pow(ky / (g.ny / 2.0), 2) + std::pow(kz / (g.nz / 2.0), 2);
              if (e > 1) continue;
              double ph = 2 * kPi * (kx * axis_coord(ix, g.nx, g.nx) + ky * axis_coord(iy, g.ny, g.ny) +
                                     kz * axis_coord(iz, g.nz, g.nz));
              s += p->kspace(kx, ky, kz) * std::polar(1.0, ph);
            }
        cdouble got(ref[ix + g.nx * (iy + std::size_t(g.ny) * iz)]);
        worst = std::max(worst, std::abs(got - s));
        peak = std::max(peak, std::abs(s));
      }
  CHECK(worst < 1e-6 * peak);
}

TEST_CASE("Shepp-Logan reference: DC is the analytic mean, PSNR is sane", "[reference]") {
  for (std::string name : {"shepp3d", "shepp2d"}) {
    auto p = make_phantom(name);
    ImageGrid g = name == "shepp3d" ? ImageGrid{48, 48, 48} : ImageGrid{128, 128, 1};
    auto ref = band_limited_image(kspace_of(*p), g);
    cdouble mean = 0;
    for (auto v : ref) mean += cdouble(v);
    mean /= double(ref.size());
    cdouble s0 = p->kspace(0, 0, 0);  // the integral over the unit FOV = the mean
    INFO(name << " mean " << mean << " S(0) " << s0);
    CHECK(std::abs(mean - s0) < 1e-5 * std::abs(s0));
    double q = psnr(ref, voxel_image(*p, g.nx, g.ny, g.nz));
    INFO(name << " PSNR of the reference " << q << " dB");
    // Gibbs ringing at the ellipse edges keeps it well below float precision.
    CHECK(q > 15.0);
    CHECK(q < 45.0);
  }
}
