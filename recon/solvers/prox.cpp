#include "recon/solvers/prox.hpp"

#include <cmath>
#include <stdexcept>

#include "recon/device/cpu_device.hpp"
#include "recon/ops/diff.hpp"

namespace fhd {
namespace {

class L2Squared : public Prox {
 public:
  L2Squared(Device& dev, std::shared_ptr<const DeviceVector> y) : dev_(dev), y_(std::move(y)) {}
  void apply(double t, const DeviceVector& v, DeviceVector& out) override {
    dev_.copy(v, out);
    if (y_) dev_.axpy(t, *y_, out);
    dev_.scale(1.0 / (1.0 + t), out);
  }
  double value(const DeviceVector& v) override {
    std::vector<cfloat> z = dev_.download(v);
    std::vector<cfloat> y = y_ ? dev_.download(*y_) : std::vector<cfloat>(z.size());
    double s = 0;
    for (std::size_t i = 0; i < z.size(); ++i) s += std::norm(cdouble(z[i]) - cdouble(y[i]));
    return 0.5 * s;
  }
  std::string name() const override { return "l2"; }

 private:
  Device& dev_;
  std::shared_ptr<const DeviceVector> y_;
};

class L1 : public Prox {
 public:
  explicit L1(Device& dev) : dev_(dev) {}
  void apply(double t, const DeviceVector& v, DeviceVector& out) override {
    dev_.kernels<ProxKernels>().soft_threshold(v, t, out);
  }
  double value(const DeviceVector& v) override {
    double s = 0;
    for (const cfloat& z : dev_.download(v)) s += std::abs(cdouble(z));
    return s;
  }
  std::string name() const override { return "l1"; }

 private:
  Device& dev_;
};

class GroupL1 : public Prox {
 public:
  GroupL1(Device& dev, std::size_t n, int parts) : dev_(dev), n_(n), parts_(parts) {}
  void apply(double t, const DeviceVector& v, DeviceVector& out) override {
    dev_.kernels<ProxKernels>().group_soft_threshold(v, t, n_, parts_, out);
  }
  double value(const DeviceVector& v) override {
    const std::vector<cfloat> z = dev_.download(v);
    double s = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      double g = 0;
      for (int k = 0; k < parts_; ++k) g += std::norm(cdouble(z[std::size_t(k) * n_ + i]));
      s += std::sqrt(g);
    }
    return s;
  }
  std::string name() const override { return "group l1"; }

 private:
  Device& dev_;
  std::size_t n_;
  int parts_;
};

class L1Wavelet : public Prox {
 public:
  explicit L1Wavelet(OpPtr w) : w_(std::move(w)), l1_(w_->device()) {}
  void apply(double t, const DeviceVector& v, DeviceVector& out) override {
    Device& dev = w_->device();
    if (!c_ || c_->size() != w_->out().size()) c_ = dev.zeros(w_->out().size());
    w_->apply(v, *c_);
    l1_.apply(t, *c_, *c_);
    w_->adjoint(*c_, out);
  }
  double value(const DeviceVector& v) override {
    Device& dev = w_->device();
    VecPtr c = dev.zeros(w_->out().size());
    w_->apply(v, *c);
    return l1_.value(*c);
  }
  std::string name() const override { return "l1-wavelet"; }

 private:
  OpPtr w_;
  L1 l1_;
  VecPtr c_;
};

// prox_{t TV}(v) = v - t D^H p, p the dual solution of
// min_{|p_i| <= 1} ||v - t D^H p||^2, by fast gradient projection with step
// 1 / (8 t^2) in 2D, 1 / (12 t^2) in 3D (||D||^2 <= 4 per axis).
class Tv : public Prox {
 public:
  Tv(Device& dev, const ImageGrid& grid, int iters)
      : dev_(dev), grid_(grid), iters_(iters), d_(finite_differences(dev, grid)), group_(dev, grid.voxels(), gradient_axes(grid)) {}
  void apply(double t, const DeviceVector& v, DeviceVector& out) override {
    if (t <= 0) return dev_.copy(v, out);
    const std::size_t n = v.size(), ng = d_->out().size();
    VecPtr p = dev_.zeros(ng), prev = dev_.zeros(ng), r = dev_.zeros(ng), g = dev_.zeros(ng), tmp = dev_.zeros(ng);
    VecPtr x = dev_.zeros(n);
    const double step = 1.0 / (4.0 * gradient_axes(grid_) * t);  // 1 / (t ||D||^2), ||D||^2 <= 4 per axis
    double s = 1.0;
    for (int k = 0; k < iters_; ++k) {
      d_->adjoint(*r, *x);
      dev_.axpby(1.0, v, -t, *x);         // x = v - t D^H r
      d_->apply(*x, *g);
      dev_.axpby(1.0, *r, step, *g);      // g = r + D x / (t ||D||^2)
      project(*g, *tmp, *p);              // p = g projected onto |p_i| <= 1
      const double s_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * s * s)), w = (s - 1.0) / s_next;
      dev_.copy(*prev, *r);
      dev_.axpby(1.0 + w, *p, -w, *r);    // r = p + w (p - prev)
      dev_.copy(*p, *prev);
      s = s_next;
    }
    d_->adjoint(*p, *x);
    dev_.copy(v, out);
    dev_.axpy(-t, *x, out);
  }
  double value(const DeviceVector& v) override {
    VecPtr g = dev_.zeros(d_->out().size());
    d_->apply(v, *g);
    return group_.value(*g);
  }
  std::string name() const override { return "tv"; }

 private:
  // out = g / max(1, |g_i|) per group: g - shrink(g, 1) (Moreau); scratch holds the shrink.
  void project(const DeviceVector& g, DeviceVector& scratch, DeviceVector& out) {
    group_.apply(1.0, g, scratch);
    dev_.copy(g, out);
    dev_.axpy(-1.0, scratch, out);
  }
  Device& dev_;
  ImageGrid grid_;
  int iters_;
  OpPtr d_;
  GroupL1 group_;
};

class CpuProx : public ProxKernels {
 public:
  void soft_threshold(const DeviceVector& v, double t, DeviceVector& out) override {
    require_same_size(v, out, "soft_threshold");
    const cfloat* a = host_data(v);
    cfloat* b = host_data(out);
#pragma omp parallel for
    for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(v.size()); ++i) {
      const double m = std::abs(cdouble(a[i]));
      b[i] = m > t ? cfloat(float(1.0 - t / m) * a[i]) : cfloat(0.0f);
    }
  }
  // The arithmetic of the fused TV shrink this replaced (norms in double from
  // float terms, the factor rounded to float once).
  void group_soft_threshold(const DeviceVector& v, double t, std::size_t n, int parts, DeviceVector& out) override {
    require_same_size(v, out, "group_soft_threshold");
    if (v.size() != n * std::size_t(parts)) throw std::invalid_argument("group_soft_threshold: size is not n * parts");
    const cfloat* a = host_data(v);
    cfloat* b = host_data(out);
#pragma omp parallel for
    for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(n); ++i) {
      double norm2 = 0.0;
      for (int k = 0; k < parts; ++k) norm2 += std::norm(a[std::size_t(k) * n + i]);
      const double norm = std::sqrt(norm2);
      const float keep = norm > t ? float(1.0 - t / norm) : 0.0f;
      for (int k = 0; k < parts; ++k) b[std::size_t(k) * n + i] = keep * a[std::size_t(k) * n + i];
    }
  }
};

}  // namespace

ProxPtr l2_squared_prox(Device& dev, std::shared_ptr<const DeviceVector> y) {
  return std::make_shared<L2Squared>(dev, std::move(y));
}
ProxPtr l1_prox(Device& dev) { return std::make_shared<L1>(dev); }
ProxPtr group_l1_prox(Device& dev, std::size_t n, int parts) { return std::make_shared<GroupL1>(dev, n, parts); }
ProxPtr l1_wavelet_prox(OpPtr w) { return std::make_shared<L1Wavelet>(std::move(w)); }
ProxPtr tv_prox(Device& dev, const ImageGrid& grid, int iters) { return std::make_shared<Tv>(dev, grid, iters); }
std::unique_ptr<ProxKernels> make_cpu_prox(Device&) { return std::make_unique<CpuProx>(); }

}  // namespace fhd
