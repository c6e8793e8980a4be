// Coil sensitivities as plane-wave sums, their exact k-space, and correlated
// receiver noise (phantom/coils.hpp, docs/coils.md).
#include "phantom/coils.hpp"

#include <cstdint>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "phantom/random.hpp"

namespace fhd {
namespace {

constexpr double kPi = 3.14159265358979323846;

void require(bool ok, const std::string& field, double value, const std::string& why) {
  if (ok) return;
  std::ostringstream msg;
  msg << field << " = " << value << ": " << why;
  throw std::invalid_argument(msg.str());
}

void check_spec(const CoilSpec& s) {
  require(s.coils >= 1 && s.coils <= 1024, "coils", s.coils, "must be in 1..1024");
  require(s.dims == 2 || s.dims == 3, "coil dims", s.dims, "must be 2 or 3");
  require(s.width > 0 && std::isfinite(s.width), "coil width", s.width, "must be finite and > 0");
  require(s.period > 1 && std::isfinite(s.period), "coil period", s.period, "must be finite and > 1 (the FOV)");
  require(s.order >= 0 && s.order <= 8, "coil order", s.order, "must be in 0..8");
  require(std::isfinite(s.radius), "coil radius", s.radius, "must be finite");
}

// Coil centres: evenly on a circle (2D), on a Fibonacci sphere (3D).
std::array<double, 3> coil_centre(const CoilSpec& s, int c) {
  if (s.dims == 2) {
    double phi = 2 * kPi * c / s.coils;
    return {s.radius * std::cos(phi), s.radius * std::sin(phi), 0.0};
  }
  const double golden = kPi * (3.0 - std::sqrt(5.0));
  double z = 1.0 - (2.0 * c + 1.0) / s.coils, r = std::sqrt(1.0 - z * z), phi = golden * c;
  return {s.radius * r * std::cos(phi), s.radius * r * std::sin(phi), s.radius * z};
}

// Integer vectors n with |n| <= order (n_z = 0 in 2D).
std::vector<std::array<int, 3>> frequency_set(int order, int dims) {
  std::vector<std::array<int, 3>> out;
  const int kz = dims == 3 ? order : 0;
  for (int z = -kz; z <= kz; ++z)
    for (int y = -order; y <= order; ++y)
      for (int x = -order; x <= order; ++x)
        if (x * x + y * y + z * z <= order * order) out.push_back({x, y, z});
  return out;
}

// Fourier coefficient of exp(-|x - p|^2 / (2 w^2)) periodized with period L:
// prod_axis (sqrt(2 pi) w / L) exp(-2 pi^2 w^2 n^2 / L^2) exp(-i 2 pi n p / L).
std::complex<double> bump_coefficient(const std::array<int, 3>& n, const std::array<double, 3>& p,
                                      const CoilSpec& s) {
  const double amp1 = std::sqrt(2 * kPi) * s.width / s.period;
  const double decay = 2 * kPi * kPi * s.width * s.width / (s.period * s.period);
  std::complex<double> a = 1.0;
  for (int ax = 0; ax < s.dims; ++ax)
    a *= amp1 * std::exp(-decay * n[ax] * n[ax]) * std::polar(1.0, -2 * kPi * n[ax] * p[ax] / s.period);
  return a;
}

void normalize_at_origin(CoilArray& a) {
  double ss = 0;
  for (int c = 0; c < a.coils(); ++c) ss += std::norm(a.sensitivity(c, 0, 0, 0));
  const double scale = 1.0 / std::sqrt(ss);
  for (auto& row : a.coef)
    for (auto& v : row) v *= scale;
}

void check_coil_count(std::size_t got, int want) {
  if (got != std::size_t(want))
    throw std::invalid_argument("coil data = " + std::to_string(got) + " coils: the noise model has " +
                                std::to_string(want));
}

}  // namespace

std::complex<double> CoilArray::sensitivity(int c, double x, double y, double z) const {
  std::complex<double> s = 0;
  for (std::size_t j = 0; j < freq.size(); ++j) {
    double phase = freq[j][0] * x + freq[j][1] * y + (dims == 3 ? freq[j][2] * z : 0.0);
    s += coef[c][j] * std::polar(1.0, 2 * kPi * phase);
  }
  return s;
}

CoilArray make_coil_array(const CoilSpec& spec) {
  check_spec(spec);
  CoilArray a;
  a.dims = spec.dims;
  const auto ns = frequency_set(spec.order, spec.dims);
  for (const auto& n : ns) a.freq.push_back({n[0] / spec.period, n[1] / spec.period, n[2] / spec.period});
  std::mt19937_64 rng(spec.seed);
  for (int c = 0; c < spec.coils; ++c) {
    const auto p = coil_centre(spec, c);
    // A constant phase per coil, as receive chains have.
    const std::complex<double> phase = std::polar(1.0, 2 * kPi * uniform_open0(rng));
    std::vector<std::complex<double>> row;
    for (const auto& n : ns) row.push_back(phase * bump_coefficient(n, p, spec));
    a.coef.push_back(std::move(row));
  }
  normalize_at_origin(a);
  return a;
}

std::vector<std::vector<std::complex<float>>> coil_maps(const CoilArray& coils, int nx, int ny, int nz) {
  const std::size_t voxels = std::size_t(nx) * ny * nz;
  std::vector<std::vector<std::complex<float>>> maps(coils.coils(), std::vector<std::complex<float>>(voxels));
  for (int c = 0; c < coils.coils(); ++c) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int iz = 0; iz < nz; ++iz)
      for (int iy = 0; iy < ny; ++iy)
        for (int ix = 0; ix < nx; ++ix)
          maps[c][ix + std::size_t(nx) * (iy + std::size_t(ny) * iz)] = std::complex<float>(
              coils.sensitivity(c, voxel_center(ix, nx), voxel_center(iy, ny), voxel_center(iz, nz)));
  }
  return maps;
}

std::vector<std::vector<std::complex<float>>> synthesize_coils(const Phantom& p, const CoilArray& coils,
                                                              const Trajectory& t, int nx, int ny, int nz) {
  check_synthesis_grid(p, nx, ny, nz);
  // S(k - g_j) is shared by every coil: one phantom transform per plane wave.
  return coil_samples(p, coils, t, nx, ny, nz,
                      [&](std::size_t, double kx, double ky, double kz) { return p.kspace(kx, ky, kz); });
}

std::vector<std::complex<double>> NoiseModel::covariance() const {
  std::vector<std::complex<double>> psi(std::size_t(coils) * coils);
  for (int i = 0; i < coils; ++i)
    for (int j = 0; j < coils; ++j) {
      std::complex<double> s = 0;
      for (int k = 0; k < coils; ++k) s += mix[i * coils + k] * std::conj(mix[j * coils + k]);
      psi[i * coils + j] = s;
    }
  return psi;
}

NoiseModel make_noise_model(int coils, std::uint64_t seed) {
  require(coils >= 1 && coils <= 1024, "coils", coils, "must be in 1..1024");
  NoiseModel m;
  m.coils = coils;
  m.mix.assign(std::size_t(coils) * coils, 0.0);
  std::mt19937_64 rng(seed);
  // A = diag(gain) (I + 0.2 G), G complex normal: the diagonal keeps A well
  // conditioned, G gives every pair of coils some correlation.
  for (int i = 0; i < coils; ++i) {
    const double gain = std::sqrt(0.6 + 0.8 * uniform_open0(rng));
    for (int j = 0; j < coils; ++j)
      m.mix[i * coils + j] = gain * ((i == j ? 1.0 : 0.0) + complex_normal(rng, 0.2 / std::sqrt(2.0)));
  }
  double trace = 0;
  for (int i = 0; i < coils; ++i)
    for (int j = 0; j < coils; ++j) trace += std::norm(m.mix[i * coils + j]);
  const double scale = std::sqrt(coils / trace);
  for (auto& v : m.mix) v *= scale;
  return m;
}

namespace {

// One vector sigma A z into `out` (coils entries).
void correlated_sample(const NoiseModel& model, double sigma, std::mt19937_64& rng,
                       std::vector<std::complex<double>>& z, std::vector<std::complex<double>>& out) {
  const int nc = model.coils;
  for (int c = 0; c < nc; ++c) z[c] = complex_normal(rng, sigma);
  for (int i = 0; i < nc; ++i) {
    std::complex<double> s = 0;
    for (int k = 0; k < nc; ++k) s += model.mix[i * nc + k] * z[k];
    out[i] = s;
  }
}

}  // namespace

double add_coil_noise(std::vector<std::vector<std::complex<float>>>& data, const NoiseModel& model,
                      double rel_sigma, std::uint64_t seed) {
  if (!(rel_sigma >= 0) || !std::isfinite(rel_sigma)) {
    std::ostringstream msg;
    msg << "noise = " << rel_sigma << ": must be a finite value >= 0 (sigma relative to RMS |D|)";
    throw std::invalid_argument(msg.str());
  }
  check_coil_count(data.size(), model.coils);
  double sum = 0;
  std::size_t count = 0;
  for (const auto& coil : data) {
    for (const auto& d : coil) sum += std::norm(std::complex<double>(d));
    count += coil.size();
  }
  if (rel_sigma == 0 || count == 0) return 0;
  const double sigma = rel_sigma * std::sqrt(sum / double(count));
  std::mt19937_64 rng(seed);
  std::vector<std::complex<double>> z(model.coils), n(model.coils);
  for (std::size_t m = 0; m < data[0].size(); ++m) {
    correlated_sample(model, sigma, rng, z, n);
    for (int c = 0; c < model.coils; ++c) data[c][m] = std::complex<float>(std::complex<double>(data[c][m]) + n[c]);
  }
  return sigma;
}

std::vector<std::vector<std::complex<float>>> noise_scan(const NoiseModel& model, double sigma,
                                                         std::size_t samples, std::uint64_t seed) {
  std::vector<std::vector<std::complex<float>>> out(model.coils, std::vector<std::complex<float>>(samples));
  std::mt19937_64 rng(seed);
  std::vector<std::complex<double>> z(model.coils), n(model.coils);
  for (std::size_t m = 0; m < samples; ++m) {
    correlated_sample(model, sigma, rng, z, n);
    for (int c = 0; c < model.coils; ++c) out[c][m] = std::complex<float>(n[c]);
  }
  return out;
}

}  // namespace fhd
