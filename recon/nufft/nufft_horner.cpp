// The ES kernel as piecewise polynomials (see nufft_horner.hpp).
#include "recon/nufft/nufft_horner.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace fhd::nufft {

namespace {

const double kPi = 3.14159265358979323846;
const int kMinDegree = 4, kMaxDegree = 24;

// Monomial coefficients (lowest power first) of the degree-d Chebyshev
// interpolant of f on [-1, 1]: values at the d + 1 Chebyshev points, their
// Chebyshev coefficients, then T_j expanded by T_{j+1} = 2 s T_j - T_{j-1}.
// In double: the monomial form of a degree <= 24 fit on [-1, 1] loses only a
// few digits, far below the float the coefficients are stored in.
template <class F>
std::vector<double> chebyshev_fit(F f, int d) {
  const int n = d + 1;
  std::vector<double> y(n), a(n, 0.0);
  for (int k = 0; k < n; ++k) y[k] = f(std::cos(kPi * (k + 0.5) / n));
  for (int j = 0; j < n; ++j) {
    for (int k = 0; k < n; ++k) a[j] += y[k] * std::cos(kPi * j * (k + 0.5) / n);
    a[j] *= (j == 0 ? 1.0 : 2.0) / n;
  }
  std::vector<double> mono(n, 0.0), t_prev(n, 0.0), t_cur(n, 0.0);
  t_prev[0] = 1.0;  // T_0
  if (n > 1) t_cur[1] = 1.0;  // T_1
  mono[0] = a[0];
  for (int j = 1; j < n; ++j) {
    for (int i = 0; i < n; ++i) mono[i] += a[j] * t_cur[i];
    std::vector<double> t_next(n, 0.0);
    for (int i = 0; i < n; ++i) {
      if (i > 0) t_next[i] += 2.0 * t_cur[i - 1];
      t_next[i] -= t_prev[i];
    }
    t_prev.swap(t_cur);
    t_cur.swap(t_next);
  }
  return mono;
}

HornerTable fit(const KernelParams& kp, int d) {
  HornerTable t;
  t.width = kp.width;
  t.lanes = (kp.width + 7) / 8 * 8;
  t.degree = d;
  t.coef.assign(std::size_t(d + 1) * t.lanes, 0.f);
  const double half = 0.5 * kp.width;
  for (int i = 0; i < kp.width; ++i) {
    auto phi = [&](double s) { return es_kernel(0.5 * (s + 1.0) - half + i, kp); };
    const std::vector<double> mono = chebyshev_fit(phi, d);
    for (int p = 0; p <= d; ++p) t.coef[std::size_t(d - p) * t.lanes + i] = float(mono[p]);
  }
  // The error of what the spreader evaluates: float coefficients, at many s
  // inside the cell (at s = -1 of cell 0 the kernel jumps from exp(-beta) to
  // 0, a convention either way).
  const int samples = 256;
  for (int i = 0; i < kp.width; ++i)
    for (int k = 0; k < samples; ++k) {
      const double s = -1.0 + 2.0 * (k + 0.5) / samples;
      const double err = std::fabs(horner_value(t, i, s) - es_kernel(0.5 * (s + 1.0) - half + i, kp));
      t.max_error = std::max(t.max_error, err);
    }
  return t;
}

}  // namespace

double horner_value(const HornerTable& t, int cell, double s) {
  double v = 0.0;
  for (int j = 0; j <= t.degree; ++j) v = v * s + double(t.coef[std::size_t(j) * t.lanes + cell]);
  return v;
}

const HornerTable& horner_table(const KernelParams& kp, double tol) {
  static std::mutex lock;
  static std::map<std::tuple<int, double, double>, std::unique_ptr<HornerTable>> tables;
  std::lock_guard<std::mutex> guard(lock);
  auto& slot = tables[{kp.width, kp.beta, tol}];
  if (!slot) {
    // Float coefficients floor the error near 1e-7 (rounding of values <= 1):
    // stop at the first degree that meets the target or stops improving.
    const double target = 1e-2 * tol;
    HornerTable best = fit(kp, kMinDegree);
    for (int d = kMinDegree + 1; d <= kMaxDegree && best.max_error > target; ++d) {
      HornerTable next = fit(kp, d);
      if (next.max_error > 0.5 * best.max_error && best.max_error < 1e-6) break;
      best = std::move(next);
    }
    slot = std::make_unique<HornerTable>(std::move(best));
  }
  return *slot;
}

}  // namespace fhd::nufft
