// Exact off-resonance data (phantom/offresonance.hpp). With f(x) = f0 + g . x
// outside the regions and b_E inside region E (intensity rho_E there):
//   s(k, t) = exp(-i 2 pi f0 t) S(k + g t)
//           + sum_E rho_E [exp(-i 2 pi b_E t) 1^_E(k) - exp(-i 2 pi f0 t) 1^_E(k + g t)],
// S the phantom's transform and 1^_E that of E's indicator.
#include "phantom/offresonance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/phase.hpp"

namespace fhd {
namespace {

struct ShapeStats {
  int points = 0;
  double lo = 1e300, hi = -1e300;
};

// For each shape: how many points of a grid over the FOV fall inside it, and
// the range of the image there. A shape whose range is a single value is
// uncut: no other shape crosses or lies inside it (down to the grid's
// spacing, 1/96 of the FOV in 2D, 1/48 in 3D).
std::vector<ShapeStats> shape_stats(const Phantom& p) {
  const int n = p.dims() == 3 ? 48 : 96, nz = p.dims() == 3 ? n : 1;
  std::vector<ShapeStats> s(std::size_t(p.shapes()));
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < n; ++iy)
      for (int ix = 0; ix < n; ++ix) {
        const double x = (ix + 0.5) / n - 0.5, y = (iy + 0.5) / n - 0.5, z = nz > 1 ? (iz + 0.5) / n - 0.5 : 0.0;
        const double v = p.image(x, y, z);
        for (int e = 0; e < p.shapes(); ++e)
          if (p.inside(e, x, y, z)) {
            ShapeStats& st = s[std::size_t(e)];
            ++st.points;
            st.lo = std::min(st.lo, v);
            st.hi = std::max(st.hi, v);
          }
      }
  return s;
}

}  // namespace

double PhantomField::at(const Phantom& p, double x, double y, double z) const {
  for (const Region& r : regions)
    if (p.inside(r.shape, x, y, z)) return r.hz;
  return f0 + gx * x + gy * y + gz * z;
}

PhantomField phantom_field(const Phantom& p, const FieldSpec& spec) {
  if (!std::isfinite(spec.max_hz) || spec.max_hz < 0)
    throw std::invalid_argument("off-resonance = " + std::to_string(spec.max_hz) + " Hz: must be finite and >= 0");
  PhantomField f;
  if (spec.max_hz == 0) return f;
  f.gy = spec.max_hz;  // y in [-1/2, 1/2): +-max_hz/2 across the FOV
  const std::vector<ShapeStats> stats = shape_stats(p);
  std::vector<int> uncut;
  for (int e = 0; e < int(stats.size()); ++e)
    if (stats[std::size_t(e)].points > 0 && stats[std::size_t(e)].lo == stats[std::size_t(e)].hi) uncut.push_back(e);
  // The two largest uncut shapes take the extremes.
  std::sort(uncut.begin(), uncut.end(),
            [&](int a, int b) { return stats[std::size_t(a)].points > stats[std::size_t(b)].points; });
  const double sign[2] = {1.0, -1.0};
  for (std::size_t i = 0; i < uncut.size() && i < 2; ++i)
    f.regions.push_back({uncut[i], sign[i] * spec.max_hz, stats[std::size_t(uncut[i])].lo});
  return f;
}

std::vector<float> sample_times(std::size_t samples, int readout_samples, const FieldSpec& spec) {
  if (readout_samples < 1) throw std::invalid_argument("readout samples = " + std::to_string(readout_samples));
  if (!(spec.readout_s >= 0) || !(spec.te_s >= 0) || !std::isfinite(spec.readout_s + spec.te_s))
    throw std::invalid_argument("readout timing: readout and TE must be finite and >= 0");
  const double dt = readout_samples > 1 ? spec.readout_s / (readout_samples - 1) : 0.0;
  std::vector<float> t(samples);
  for (std::size_t m = 0; m < samples; ++m) t[m] = float(spec.te_s + double(m % std::size_t(readout_samples)) * dt);
  return t;
}

std::vector<float> field_at_voxels(const Phantom& p, const PhantomField& f, int nx, int ny, int nz) {
  std::vector<float> hz(std::size_t(nx) * ny * nz);
#pragma omp parallel for collapse(2) schedule(static)
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix)
        hz[ix + std::size_t(nx) * (iy + std::size_t(ny) * iz)] =
            float(f.at(p, voxel_center(ix, nx), voxel_center(iy, ny), voxel_center(iz, nz)));
  return hz;
}

namespace {

// The phantom's signal at k and time t in the field f (unscaled, float64).
std::complex<double> offres_sample(const Phantom& p, const PhantomField& f, double kx, double ky, double kz,
                                   double t) {
  const double sx = kx + f.gx * t, sy = ky + f.gy * t, sz = kz + f.gz * t;  // k + g t
  const std::complex<double> base = off_resonance_phase(f.f0, t);
  std::complex<double> s = base * p.kspace(sx, sy, sz);
  for (const PhantomField::Region& r : f.regions)
    s += r.density * (off_resonance_phase(r.hz, t) * p.shape_kspace(r.shape, kx, ky, kz) -
                      base * p.shape_kspace(r.shape, sx, sy, sz));
  return s;
}

void check_times(const Trajectory& t, const std::vector<float>& times) {
  if (times.size() != t.size())
    throw std::invalid_argument("times = " + std::to_string(times.size()) + " values: must number the samples, " +
                                std::to_string(t.size()));
}

}  // namespace

std::vector<std::complex<float>> synthesize_offresonance(const Phantom& p, const Trajectory& t,
                                                         const std::vector<float>& times, const PhantomField& f,
                                                         int nx, int ny, int nz) {
  check_synthesis_grid(p, nx, ny, nz);
  check_times(t, times);
  const double scale = double(nx) * ny * nz;
  const std::int64_t m = std::int64_t(t.size());
  std::vector<std::complex<float>> data(t.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i)
    data[std::size_t(i)] = std::complex<float>(offres_sample(p, f, t.kx[i], t.ky[i], t.kz[i], times[i]) * scale);
  return data;
}

std::vector<std::vector<std::complex<float>>> synthesize_offresonance_coils(const Phantom& p, const CoilArray& coils,
                                                                           const Trajectory& t,
                                                                           const std::vector<float>& times,
                                                                           const PhantomField& f, int nx, int ny,
                                                                           int nz) {
  check_synthesis_grid(p, nx, ny, nz);
  check_times(t, times);
  return coil_samples(p, coils, t, nx, ny, nz, [&](std::size_t i, double kx, double ky, double kz) {
    return offres_sample(p, f, kx, ky, kz, times[i]);
  });
}

}  // namespace fhd
