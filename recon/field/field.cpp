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

namespace fhd {
namespace {

constexpr int kFieldNodes = 256;                 // field values the interpolators are fitted at
constexpr std::size_t kNodeSample = 1 << 16;     // map values sorted to find them
constexpr double kMaxHz = 1e5;     // beyond any off-resonance in an MR scanner: a unit mix-up
constexpr double kMaxSeconds = 10; // likewise for a sample's time after excitation

// The field values (Hz) the interpolators are fitted and judged at, with
// weights summing to 1: kFieldNodes quantiles of the map's values, equally
// weighted, its extremes among them (equal values merged). Quantiles follow
// the map where its voxels are. Fixed-width bins over [min, max] did not: a
// smooth +-57 Hz map with one background voxel at 2500 Hz fell into 3-4 bins
// 40 Hz wide, fitted exactly at their centres and wrong between them (rms
// error 6.3e-10 reported, 0.28 at the voxels' values; the image 1.75 off
// where the exact model was 0.12: hunt20).
struct FieldNodes {
  std::vector<double> hz, weight;
};

FieldNodes field_nodes(const std::vector<float>& hz) {
  const std::size_t stride = (hz.size() + kNodeSample - 1) / kNodeSample;  // at most kNodeSample values sorted
  std::vector<float> v;
  for (std::size_t i = 0; i < hz.size(); i += stride) v.push_back(hz[i]);
  const auto [lo, hi] = std::minmax_element(hz.begin(), hz.end());
  v.push_back(*lo);
  v.push_back(*hi);
  std::sort(v.begin(), v.end());
  const std::size_t k = std::min<std::size_t>(kFieldNodes, v.size());
  FieldNodes n;
  for (std::size_t q = 0; q < k; ++q) {
    const double f = v[k == 1 ? 0 : (q * (v.size() - 1) + (k - 1) / 2) / (k - 1)];
    if (!n.hz.empty() && n.hz.back() == f) {
      n.weight.back() += 1.0 / double(k);
    } else {
      n.hz.push_back(f);
      n.weight.push_back(1.0 / double(k));
    }
  }
  return n;
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
// al. 2005): a(t) = argmin sum_b h_b |exp(-i2pi f_b t) - sum_l a_l exp(-i2pi f_b tau_l)|^2
// over the map's nodes f_b (weights h_b), and the weighted mean square error
// over the samples.
struct Interpolators {
  std::map<float, std::vector<cdouble>> at;
  double mse = 0;
};

Interpolators interpolators(const FieldData& f, const std::vector<double>& tau) {
  const FieldNodes h = field_nodes(f.hz);
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

}  // namespace

void check_sample_times(const std::vector<float>& times, std::size_t samples, const std::string& where) {
  if (times.size() != samples)
    throw InputError(where, "sample times", std::to_string(times.size()),
                     "must number the samples, " + std::to_string(samples));
  for (std::size_t m = 0; m < times.size(); ++m)
    if (!std::isfinite(times[m]) || times[m] < 0 || times[m] > kMaxSeconds)
      throw InputError(where, "sample time[" + std::to_string(m) + "]", std::to_string(times[m]),
                       "must be seconds in [0, 10]");
}

void check_field(const FieldData& f, const ImageGrid& grid, std::size_t samples, const std::string& where) {
  if (f.hz.size() != grid.voxels())
    throw InputError(where, "field map values", std::to_string(f.hz.size()),
                     "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
  check_sample_times(f.times, samples, where);
  for (std::size_t i = 0; i < f.hz.size(); ++i)
    if (!std::isfinite(f.hz[i]) || std::fabs(f.hz[i]) > kMaxHz)
      throw InputError(where, "field map[" + std::to_string(i) + "]", std::to_string(f.hz[i]),
                       "must be finite Hz within +-1e5");
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

// ---- operators

namespace {

// A = Phi G_f: the exact model, its field model made once.
class FieldExactOp : public LinOp {
 public:
  FieldExactOp(std::shared_ptr<Plan> plan, const FieldData& f)
      : LinOp(plan->device(), image_shape(plan->grid()), samples_shape(plan->samples()), "Phi G_f"),
        plan_(std::move(plan)),
        model_(device().kernels<FieldKernels>().model(plan_->points(), f, plan_->grid())),
        phi_(plan_->phi()) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    model_->forward(x, y);
    phi_->apply(y, y);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    DeviceVector& mu = scratch(2, y.size());
    phi_->adjoint(y, mu);
    model_->adjoint(mu, x);
  }

 private:
  std::shared_ptr<Plan> plan_;
  std::unique_ptr<FieldModel> model_;
  OpPtr phi_;
};

// sum_{l,l'} diag(conj e_l) T_{ll'} diag(e_l'): the segmented model's normal.
class SegmentedNormal : public HermitianOp {
 public:
  SegmentedNormal(Plan& plan, const std::vector<std::shared_ptr<DeviceVector>>& e, const TimeSegments& seg)
      : HermitianOp(plan.device(), image_shape(plan.grid()), "segmented A^H A"), e_(e) {
    const std::size_t L = e.size(), m = plan.samples();
    Device& v = device();
    std::vector<float> phi2;
    for (const cfloat& p : plan.options().phi) phi2.push_back(std::norm(p));
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
        if (k != l) {
          VecPtr qi = plan.q_weighted(wi);
          VecPtr conj_q = v.clone(*q);
          v.axpy(cdouble(0, 1), *qi, *q);
          v.axpy(cdouble(0, -1), *qi, *conj_q);
          t_[k * L + l] = plan.toeplitz_of(*conj_q);
        }
        t_[l * L + k] = plan.toeplitz_of(*q);
      }
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    Device& v = device();
    const std::size_t L = e_.size(), n = x.size();
    DeviceVector& acc = scratch(2, n);
    DeviceVector& tmp = scratch(3, n);
    if (z_.size() != L)
      for (std::size_t k = 0; k < L; ++k) z_.push_back(v.zeros(n));
    for (std::size_t k = 0; k < L; ++k) v.multiply(*e_[k], x, *z_[k], false);
    for (std::size_t l = 0; l < L; ++l) {
      t_[l * L]->apply(*z_[0], acc);  // acc = sum_k T_lk (e_k . x)
      for (std::size_t k = 1; k < L; ++k) t_[l * L + k]->apply_add(*z_[k], acc, 1.0);
      if (l == 0) {
        v.multiply(*e_[l], acc, y, true);
      } else {
        v.multiply(*e_[l], acc, tmp, true);
        v.axpy(1.0, tmp, y);
      }
    }
  }

 private:
  std::vector<std::shared_ptr<DeviceVector>> e_;
  std::vector<OpPtr> t_;  // T_{ll'} at [l * L + l']
  std::vector<VecPtr> z_;
};

// A = Phi sum_l diag(a_l) F diag(e_l).
class FieldSegmentedOp : public LinOp {
 public:
  FieldSegmentedOp(std::shared_ptr<Plan> plan, const FieldData& f, const TimeSegments& seg)
      : LinOp(plan->device(), image_shape(plan->grid()), samples_shape(plan->samples()), "segmented A"),
        plan_(std::move(plan)),
        seg_(seg),
        f_(plan_->fourier()),
        phi_(plan_->phi()) {
    check_field(f, plan_->grid(), plan_->samples(), "field model");
    if (seg.samples() != plan_->samples())
      throw InputError("time segments", "samples", std::to_string(seg.samples()),
                       "must number the plan's samples, " + std::to_string(plan_->samples()));
    Device& v = device();
    const std::size_t m = plan_->samples();
    for (std::size_t l = 0; l < seg.tau.size(); ++l) {
      e_.push_back(std::shared_ptr<DeviceVector>(v.upload(field_phase(f.hz, seg.tau[l]))));
      a_.push_back(std::shared_ptr<DeviceVector>(
          v.upload(std::vector<cfloat>(seg.a.begin() + std::ptrdiff_t(l * m), seg.a.begin() + std::ptrdiff_t((l + 1) * m)))));
    }
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    Device& v = device();
    DeviceVector& xe = scratch(2, x.size());
    DeviceVector& d = scratch(3, y.size());
    for (std::size_t l = 0; l < e_.size(); ++l) {
      v.multiply(*e_[l], x, xe, false);
      f_->apply(xe, d);
      v.multiply(*a_[l], d, d, false);
      if (l == 0)
        v.copy(d, y);
      else
        v.axpy(1.0, d, y);
    }
    phi_->apply(y, y);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    Device& v = device();
    DeviceVector& mu = scratch(2, y.size());
    DeviceVector& d = scratch(3, y.size());
    DeviceVector& img = scratch(4, x.size());
    phi_->adjoint(y, mu);
    for (std::size_t l = 0; l < e_.size(); ++l) {
      v.multiply(*a_[l], mu, d, true);
      f_->adjoint(d, img);
      v.multiply(*e_[l], img, img, true);
      if (l == 0)
        v.copy(img, x);
      else
        v.axpy(1.0, img, x);
    }
  }
  OpPtr make_normal() override { return std::make_shared<SegmentedNormal>(*plan_, e_, seg_); }

 private:
  std::shared_ptr<Plan> plan_;
  TimeSegments seg_;
  OpPtr f_, phi_;
  std::vector<std::shared_ptr<DeviceVector>> e_, a_;
};

}  // namespace

OpPtr field_exact_op(const std::shared_ptr<Plan>& plan, const FieldData& f) {
  check_field(f, plan->grid(), plan->samples(), "field model");
  return std::make_shared<FieldExactOp>(plan, f);
}

OpPtr field_segmented_op(const std::shared_ptr<Plan>& plan, const FieldData& f, const TimeSegments& seg) {
  return std::make_shared<FieldSegmentedOp>(plan, f, seg);
}

}  // namespace fhd
