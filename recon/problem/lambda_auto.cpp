#include "recon/problem/lambda_auto.hpp"

#include <algorithm>
#include <cmath>

#include "recon/plan/precond.hpp"
#include "recon/plan/toeplitz.hpp"

namespace fhd {
namespace {

const double kPi = 3.14159265358979323846;
const double kNoiseFrom = 0.6;        // FOV: |x| beyond which a readout's projection holds only noise
const std::size_t kMaxRuns = 512;     // readouts used (evenly spread): enough for a 1% median
const std::size_t kMinValues = 1000;  // noise values needed for an estimate

struct Run {
  std::size_t first, length;
  double spacing;  // |k step| in cycles/FOV
};

double step_length(const Trajectory& t, std::size_t m) {
  const double dx = t.kx[m + 1] - t.kx[m], dy = t.ky[m + 1] - t.ky[m], dz = t.kz[m + 1] - t.kz[m];
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

bool same_step(const Trajectory& t, std::size_t a, std::size_t b, double len) {
  const double tol = 1e-3 * len + 1e-6;  // float k up to N/2: rounding is ~1e-5 of a 0.5 step
  return std::fabs((t.kx[b + 1] - t.kx[b]) - (t.kx[a + 1] - t.kx[a])) <= tol &&
         std::fabs((t.ky[b + 1] - t.ky[b]) - (t.ky[a + 1] - t.ky[a])) <= tol &&
         std::fabs((t.kz[b + 1] - t.kz[b]) - (t.kz[a + 1] - t.kz[a])) <= tol;
}

// Maximal runs of equally spaced samples along one line (readouts), oversampled enough.
std::vector<Run> readout_runs(const Trajectory& t) {
  std::vector<Run> runs;
  const std::size_t m = t.size();
  std::size_t a = 0;
  while (a + 1 < m) {
    const double len = step_length(t, a);
    std::size_t b = a + 1;
    while (b + 1 < m && same_step(t, a, b, len)) ++b;
    const std::size_t length = b - a + 1;  // samples a..b
    if (length >= std::size_t(kMinReadout) && len > 0 && len < kMaxReadoutSpacing) runs.push_back({a, length, len});
    a = b;
  }
  return runs;
}

// |DFT(w . d)|^2 / sum w^2 of one readout at the frequencies that map beyond
// kNoiseFrom FOV; w a Hann window, whose sidelobes fall as 1/x^3, so the
// object's truncation ringing does not reach there.
void noise_powers(const Run& r, const std::vector<cfloat>& data, std::vector<double>& out) {
  const std::size_t n = r.length;
  std::vector<double> w(n);
  double w2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double s = std::sin(kPi * (double(i) + 0.5) / double(n));
    w[i] = s * s;
    w2 += w[i] * w[i];
  }
  const long half = long(n / 2);
  for (long j = -half + 1; j < half; ++j) {
    if (std::fabs(double(j)) / (double(n) * r.spacing) < kNoiseFrom) continue;
    cdouble y = 0, step = std::polar(1.0, -2.0 * kPi * double(j) / double(n)), e = 1.0;
    for (std::size_t i = 0; i < n; ++i, e *= step) y += w[i] * cdouble(data[r.first + i]) * e;
    out.push_back(std::norm(y) / w2);
  }
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

}  // namespace

std::optional<double> noise_from_readouts(const Trajectory& traj, const std::vector<cfloat>& data) {
  if (data.size() != traj.size()) return std::nullopt;
  const std::vector<Run> runs = readout_runs(traj);
  if (runs.empty()) return std::nullopt;
  const std::size_t use = std::min(runs.size(), kMaxRuns);
  std::vector<std::vector<double>> per(use);
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(use); ++i) noise_powers(runs[std::size_t(i) * runs.size() / use], data, per[i]);
  std::vector<double> all;
  for (auto& p : per) all.insert(all.end(), p.begin(), p.end());
  if (all.size() < kMinValues) return std::nullopt;
  // |y|^2 of complex Gaussian noise is exponential: its median is ln 2 times its mean.
  auto mid = all.begin() + std::ptrdiff_t(all.size() / 2);
  std::nth_element(all.begin(), mid, all.end());
  return *mid / std::log(2.0);
}

std::optional<NoiseEstimate> estimate_noise(const Trajectory& traj, const std::vector<cfloat>& data,
                                            const std::vector<cfloat>& noise) {
  if (!noise.empty()) {
    double s = 0;
    for (const cfloat& v : noise) s += std::norm(cdouble(v));
    return NoiseEstimate{s / double(noise.size()), "noise samples"};
  }
  if (auto v = noise_from_readouts(traj, data)) return NoiseEstimate{*v, "readout oversampling"};
  return std::nullopt;
}

namespace {

// The risk estimate's terms that depend on the frequency only.
struct Spectrum {
  std::vector<double> t, r, b2;  // kept frequencies: t_k, r_k, |b_k|^2
};

Spectrum spectrum(const std::vector<double>& t, const std::vector<cfloat>& fhd, const ImageGrid& grid) {
  std::vector<cfloat> b = fhd;
  FftwPlan(grid, b.data(), false).execute();
  const std::vector<double> lap = laplacian_eigenvalues(grid);
  const double floor = 1e-3 * mean_of(t);  // as the preconditioner's floor: unsampled frequencies
  const double unitary = 1.0 / double(grid.voxels());
  Spectrum s;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (!(t[k] > floor)) continue;
    s.t.push_back(t[k]);
    s.r.push_back(lap[k]);
    s.b2.push_back(std::norm(cdouble(b[k])) * unitary);
  }
  return s;
}

double risk(const Spectrum& s, double mu, double s2) {
  double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(s.t.size()); ++k) {
    const double t = s.t[k], mr = mu * s.r[k], d = t + mr;
    sum += (mr * mr * (s.b2[k] - s2 * t) / (t * t) + s2 * t) / (d * d);
  }
  return sum;
}

}  // namespace

double sure_lambda(const std::vector<double>& t, const std::vector<cfloat>& fhd, const ImageGrid& grid,
                   double noise_variance) {
  const Spectrum s = spectrum(t, fhd, grid);
  const double scale = mean_of(t);
  if (s.t.empty() || !(scale > 0)) return kAutoLambdaFloor * scale;
  // A log grid of 4 points per decade, then golden section between the best point's neighbours.
  const double decades = std::log10(10.0 / kAutoLambdaFloor);
  const int points = int(std::ceil(4 * decades)) + 1;
  auto mu_at = [&](double i) { return scale * kAutoLambdaFloor * std::pow(10.0, i / 4.0); };
  double best_mu = mu_at(0), best = risk(s, best_mu, noise_variance);
  int best_i = 0;
  for (int i = 1; i < points; ++i) {
    const double r = risk(s, mu_at(i), noise_variance);
    if (r < best) best = r, best_mu = mu_at(i), best_i = i;
  }
  double lo = std::max(0, best_i - 1), hi = std::min(points - 1, best_i + 1);
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int it = 0; it < 20; ++it) {
    const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    if (risk(s, mu_at(a), noise_variance) < risk(s, mu_at(b), noise_variance)) hi = b; else lo = a;
  }
  const double mu = mu_at(0.5 * (lo + hi));
  return risk(s, mu, noise_variance) < best ? mu : best_mu;
}

double tv_noise_ratio(double noise_variance, double q0, double scale) {
  if (!(q0 > 0) || !(scale > 0) || !(noise_variance >= 0)) return 0.0;
  return std::sqrt(noise_variance / q0) / scale;
}

double tv_noise_lambda(double noise_variance, double q0, double scale) {
  return std::max(kTvLambda, kTvNoiseFactor * tv_noise_ratio(noise_variance, q0, scale));
}

}  // namespace fhd
