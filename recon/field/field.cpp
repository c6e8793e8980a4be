// Field-inhomogeneity compensation: checks, the time-segmented model's
// interpolators and operators, the exact model's normal operator
// (recon/field/field.hpp, docs/field-maps.md).
#include "recon/field/field.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/phase.hpp"
#include "recon/coils/coil_linalg.hpp"
#include "recon/solvers/tv.hpp"

namespace fhd {
namespace {

constexpr int kHistogramBins = 64;
constexpr double kMaxHz = 1e5;     // beyond any off-resonance in an MR scanner: a unit mix-up
constexpr double kMaxSeconds = 10; // likewise for a sample's time after excitation

// The field map as a histogram: bin centres (Hz) and weights summing to 1.
struct Histogram {
  std::vector<double> hz, weight;
};

Histogram histogram(const std::vector<float>& hz) {
  const auto [lo, hi] = std::minmax_element(hz.begin(), hz.end());
  Histogram h;
  if (*lo == *hi) {
    h.hz = {double(*lo)};
    h.weight = {1.0};
    return h;
  }
  const double a = *lo, w = (double(*hi) - a) / kHistogramBins;
  h.hz.resize(kHistogramBins);
  h.weight.assign(kHistogramBins, 0.0);
  for (int b = 0; b < kHistogramBins; ++b) h.hz[b] = a + (b + 0.5) * w;
  for (float f : hz) h.weight[std::min(kHistogramBins - 1, int((f - a) / w))] += 1.0 / double(hz.size());
  return h;
}

std::vector<double> segment_times(const std::vector<float>& times, int segments) {
  const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  if (segments == 1) return {0.5 * (double(*lo) + double(*hi))};
  std::vector<double> tau(static_cast<std::size_t>(segments));
  for (int l = 0; l < segments; ++l) tau[std::size_t(l)] = *lo + (double(*hi) - *lo) * l / (segments - 1);
  return tau;
}

// x with L L^H x = b (L from recon/coil_linalg's cholesky).
std::vector<cdouble> cholesky_solve(const CMatrix& l, std::vector<cdouble> b) {
  const int n = l.rows;
  for (int i = 0; i < n; ++i) {  // L y = b
    for (int k = 0; k < i; ++k) b[i] -= l(i, k) * b[k];
    b[i] /= l(i, i);
  }
  for (int i = n - 1; i >= 0; --i) {  // L^H x = y
    for (int k = i + 1; k < n; ++k) b[i] -= std::conj(l(k, i)) * b[k];
    b[i] /= l(i, i);
  }
  return b;
}

// The least-squares interpolators at every distinct sample time (Fessler et
// al. 2005): a(t) = argmin sum_b h_b |exp(-i2pi f_b t) - sum_l a_l exp(-i2pi f_b tau_l)|^2,
// and the weighted mean square error over the samples.
struct Interpolators {
  std::map<float, std::vector<cdouble>> at;
  double mse = 0;
};

Interpolators interpolators(const FieldData& f, const std::vector<double>& tau) {
  const Histogram h = histogram(f.hz);
  const int L = int(tau.size()), B = int(h.hz.size());
  std::vector<cdouble> e(std::size_t(B) * L);  // e[b, l] = exp(-i2pi f_b tau_l)
  for (int b = 0; b < B; ++b)
    for (int l = 0; l < L; ++l) e[std::size_t(b) * L + l] = off_resonance_phase(h.hz[b], tau[l]);
  CMatrix g(L, L);
  for (int i = 0; i < L; ++i)
    for (int j = 0; j < L; ++j)
      for (int b = 0; b < B; ++b) g(i, j) += h.weight[b] * std::conj(e[b * L + i]) * e[b * L + j];
  // A small ridge keeps the many-segment case (nearly dependent columns) solvable.
  for (int i = 0; i < L; ++i) g(i, i) += 1e-10;  // the diagonal is sum_b h_b = 1
  const CMatrix chol = cholesky(g);
  std::map<float, std::size_t> count;
  for (float t : f.times) ++count[t];
  Interpolators out;
  for (const auto& [t, n] : count) {
    std::vector<cdouble> rhs(static_cast<std::size_t>(L));
    for (int b = 0; b < B; ++b)
      for (int l = 0; l < L; ++l) rhs[l] += h.weight[b] * std::conj(e[b * L + l]) * off_resonance_phase(h.hz[b], t);
    std::vector<cdouble> a = cholesky_solve(chol, rhs);
    double err = 0;
    for (int b = 0; b < B; ++b) {
      cdouble approx = 0;
      for (int l = 0; l < L; ++l) approx += a[l] * e[b * L + l];
      err += h.weight[b] * std::norm(off_resonance_phase(h.hz[b], t) - approx);
    }
    out.mse += err * double(n) / double(f.times.size());
    out.at.emplace(t, std::move(a));
  }
  return out;
}

void add_roughness(Plan& plan, const BackendVector& x, BackendVector& y, BackendVector& grad, BackendVector& tmp,
                   double lambda) {
  // R^H R x = D^H D x, D the first differences (as Plan::normal's roughness).
  Backend& be = plan.backend();
  be.gradient(x, grad, plan.grid());
  be.gradient_adjoint(grad, tmp, plan.grid());
  be.vec().axpy(lambda, tmp, y);
}

VecPtr gradient_buffer(Plan& plan, double lambda) {
  if (lambda == 0.0) return nullptr;
  return plan.backend().vec().zeros(std::size_t(gradient_axes(plan.grid())) * plan.grid().voxels());
}

std::vector<float> phi_power(const Plan& plan) {
  std::vector<float> w;
  for (const cfloat& p : plan.options().phi) w.push_back(std::norm(p));
  return w;
}

}  // namespace

void check_field(const FieldData& f, const ImageGrid& grid, std::size_t samples, const std::string& where) {
  if (f.hz.size() != grid.voxels())
    throw InputError(where, "field map values", std::to_string(f.hz.size()),
                     "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
  if (f.times.size() != samples)
    throw InputError(where, "sample times", std::to_string(f.times.size()),
                     "must number the samples, " + std::to_string(samples));
  for (std::size_t i = 0; i < f.hz.size(); ++i)
    if (!std::isfinite(f.hz[i]) || std::fabs(f.hz[i]) > kMaxHz)
      throw InputError(where, "field map[" + std::to_string(i) + "]", std::to_string(f.hz[i]),
                       "must be finite Hz within +-1e5");
  for (std::size_t m = 0; m < f.times.size(); ++m)
    if (!std::isfinite(f.times[m]) || f.times[m] < 0 || f.times[m] > kMaxSeconds)
      throw InputError(where, "sample time[" + std::to_string(m) + "]", std::to_string(f.times[m]),
                       "must be seconds in [0, 10]");
}

TimeSegments time_segments(const FieldData& f, int segments) {
  if (segments < 1 || segments > 256)
    throw InputError("--segments", "value", std::to_string(segments), "must be in 1..256");
  if (f.hz.empty() || f.times.empty()) throw InputError("time segments: no field map or sample times");
  TimeSegments s;
  s.tau = segment_times(f.times, segments);
  const Interpolators in = interpolators(f, s.tau);
  const std::size_t m = f.times.size();
  s.a.resize(std::size_t(segments) * m);
  for (std::size_t i = 0; i < m; ++i) {
    const std::vector<cdouble>& a = in.at.at(f.times[i]);
    for (int l = 0; l < segments; ++l) s.a[std::size_t(l) * m + i] = cfloat(a[std::size_t(l)]);
  }
  s.rms_error = std::sqrt(in.mse);
  return s;
}

int choose_segments(const FieldData& f) {
  for (int l = 1; l < kMaxSegments; ++l)
    if (std::sqrt(interpolators(f, segment_times(f.times, l)).mse) <= kSegmentTolerance) return l;
  return kMaxSegments;
}

std::vector<cfloat> field_phase(const std::vector<float>& hz, double tau) {
  std::vector<cfloat> e(hz.size());
  for (std::size_t n = 0; n < hz.size(); ++n) e[n] = cfloat(off_resonance_phase(hz[n], tau));
  return e;
}

// ---- exact model

FieldExactNormal::FieldExactNormal(Plan& plan, const FieldData& f, double lambda)
    : plan_(plan), f_(f), w_(phi_power(plan)), lambda_(lambda) {
  check_field(f, plan.grid(), plan.samples(), "field model");
  t_ = plan.backend().vec().zeros(plan.grid().voxels());
  grad_ = gradient_buffer(plan, lambda);
}

void FieldExactNormal::apply(const BackendVector& x, BackendVector& y) {
  VectorOps& v = plan_.backend().vec();
  std::vector<cfloat> d = plan_.field_forward(f_, v.download(x));
  for (std::size_t m = 0; m < w_.size(); ++m) d[m] *= w_[m];
  v.copy(*v.upload(plan_.field_adjoint(f_, d)), y);
  if (grad_) add_roughness(plan_, x, y, *grad_, *t_, lambda_);
}

std::vector<cfloat> field_exact_adjoint(Plan& plan, const FieldData& f, const std::vector<cfloat>& data) {
  check_field(f, plan.grid(), plan.samples(), "field model");
  std::vector<cfloat> mu = data;
  const std::vector<cfloat>& phi = plan.options().phi;
  for (std::size_t m = 0; m < phi.size() && m < mu.size(); ++m) mu[m] *= std::conj(phi[m]);
  return plan.field_adjoint(f, mu);
}

// ---- time-segmented model

SegmentedNormal::SegmentedNormal(Plan& plan, const FieldData& f, const TimeSegments& seg, double lambda)
    : plan_(plan), segments_(seg.tau.size()), lambda_(lambda) {
  check_field(f, plan.grid(), plan.samples(), "field model");
  VectorOps& v = plan.backend().vec();
  const std::size_t L = segments_, m = plan.samples(), n = plan.grid().voxels();
  if (seg.samples() != m) throw InputError("time segments", "samples", std::to_string(seg.samples()), "");
  const std::vector<float> phi2 = phi_power(plan);
  for (double tau : seg.tau) {
    e_.push_back(v.upload(field_phase(f.hz, tau)));
    z_.push_back(v.zeros(n));
  }
  t_.resize(L * L);
  std::vector<float> wr(m), wi(m);
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t k = l; k < L; ++k) {
      // Weights conj(a_l) a_k |Phi|^2; Q is linear in them, so a complex
      // weight is Q(Re w) + i Q(Im w), and T_kl (weights conj w) is Q(Re w) - i Q(Im w).
      for (std::size_t i = 0; i < m; ++i) {
        cfloat w = std::conj(seg.a[l * m + i]) * seg.a[k * m + i];
        if (!phi2.empty()) w *= phi2[i];
        wr[i] = w.real();
        wi[i] = w.imag();
      }
      VecPtr q = plan.q_weighted(wr);
      ++q_computed_;
      if (k != l) {
        VecPtr qi = plan.q_weighted(wi);
        ++q_computed_;
        VecPtr conj_q = v.zeros(q->size());
        v.copy(*q, *conj_q);
        v.axpy(cdouble(0, 1), *qi, *q);
        v.axpy(cdouble(0, -1), *qi, *conj_q);
        t_[k * L + l] = plan.normal_of(*conj_q, 0.0);
      }
      t_[l * L + k] = plan.normal_of(*q, 0.0);
    }
  tmp_ = v.zeros(n);
  acc_ = v.zeros(n);
  grad_ = gradient_buffer(plan, lambda);
}

void SegmentedNormal::apply(const BackendVector& x, BackendVector& y) {
  VectorOps& v = plan_.backend().vec();
  const std::size_t L = segments_;
  for (std::size_t k = 0; k < L; ++k) v.multiply(*e_[k], x, *z_[k], false);
  for (std::size_t l = 0; l < L; ++l) {
    for (std::size_t k = 0; k < L; ++k) {  // acc = sum_k T_lk (e_k . x)
      t_[l * L + k]->apply(*z_[k], k == 0 ? *acc_ : *tmp_);
      if (k > 0) v.axpy(1.0, *tmp_, *acc_);
    }
    if (l == 0) {
      v.multiply(*e_[l], *acc_, y, true);
    } else {
      v.multiply(*e_[l], *acc_, *tmp_, true);
      v.axpy(1.0, *tmp_, y);
    }
  }
  if (grad_) add_roughness(plan_, x, y, *grad_, *tmp_, lambda_);
}

std::vector<cfloat> segmented_adjoint(Plan& plan, const FieldData& f, const TimeSegments& seg,
                                      const std::vector<cfloat>& data) {
  check_field(f, plan.grid(), plan.samples(), "field model");
  const std::size_t m = plan.samples();
  std::vector<cfloat> out(plan.grid().voxels()), d(m);
  for (std::size_t l = 0; l < seg.tau.size(); ++l) {
    for (std::size_t i = 0; i < m; ++i) d[i] = std::conj(seg.a[l * m + i]) * data[i];
    const std::vector<cfloat> fhd = plan.fhd(d);
    const std::vector<cfloat> e = field_phase(f.hz, seg.tau[l]);
    for (std::size_t n = 0; n < out.size(); ++n) out[n] += std::conj(e[n]) * fhd[n];
  }
  return out;
}

std::vector<cfloat> segmented_forward(Plan& plan, const FieldData& f, const TimeSegments& seg,
                                      const std::vector<cfloat>& image) {
  check_field(f, plan.grid(), plan.samples(), "field model");
  const std::size_t m = plan.samples();
  std::vector<cfloat> out(m), x(image.size());
  for (std::size_t l = 0; l < seg.tau.size(); ++l) {
    const std::vector<cfloat> e = field_phase(f.hz, seg.tau[l]);
    for (std::size_t n = 0; n < x.size(); ++n) x[n] = e[n] * image[n];
    const std::vector<cfloat> d = plan.forward(x);
    for (std::size_t i = 0; i < m; ++i) out[i] += seg.a[l * m + i] * d[i];
  }
  return out;
}

}  // namespace fhd
