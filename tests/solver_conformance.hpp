#pragma once
// Proxes against their direct solutions and solvers against known minimisers
// (recon/solvers/), on any device: the CPU in CI (tests/recon/test_solvers.cpp),
// the GPU in the device script (tests/gpu/test_conformance.cpp).
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "catch.hpp"
#include "recon/ops/diff.hpp"
#include "recon/solvers/cg.hpp"
#include "recon/solvers/prox.hpp"
#include "recon/solvers/solvers.hpp"
#include "test_util.hpp"

namespace fhd::solver_conformance {

// A small dense matrix as an operator (the reference solvers need its entries).
class DenseOp : public LinOp {
 public:
  DenseOp(Device& dev, std::size_t rows, std::size_t cols, std::vector<cdouble> a)
      : LinOp(dev, samples_shape(cols), samples_shape(rows), "dense"), rows_(rows), cols_(cols), a_(std::move(a)) {}
  cdouble at(std::size_t i, std::size_t j) const { return a_[i * cols_ + j]; }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    const std::vector<cfloat> xs = device().download(x);
    std::vector<cfloat> ys(rows_);
    for (std::size_t i = 0; i < rows_; ++i) {
      cdouble s = 0;
      for (std::size_t j = 0; j < cols_; ++j) s += at(i, j) * cdouble(xs[j]);
      ys[i] = cfloat(s);
    }
    device().to_device(ys.data(), y);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    const std::vector<cfloat> ys = device().download(y);
    std::vector<cfloat> xs(cols_);
    for (std::size_t j = 0; j < cols_; ++j) {
      cdouble s = 0;
      for (std::size_t i = 0; i < rows_; ++i) s += std::conj(at(i, j)) * cdouble(ys[i]);
      xs[j] = cfloat(s);
    }
    device().to_device(xs.data(), x);
  }

 private:
  std::size_t rows_, cols_;
  std::vector<cdouble> a_;
};

// A well-conditioned random matrix: identity plus small noise.
inline std::shared_ptr<DenseOp> dense(Device& dev, std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 0.15);
  std::vector<cdouble> a(rows * cols);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) a[i * cols + j] = cdouble(i == j ? 1.0 : 0.0) + cdouble(g(rng), g(rng));
  return std::make_shared<DenseOp>(dev, rows, cols, std::move(a));
}

// x_j = v_j max(0, 1 - t / |v_j|): the complex soft threshold.
inline cdouble soft(cdouble v, double t) {
  const double m = std::abs(v);
  return m > t ? v * (1.0 - t / m) : cdouble(0);
}

// The LASSO min 1/2 ||A x - y||^2 + lambda ||x||_1 by coordinate descent in
// float64 (exact per coordinate), run to convergence.
inline std::vector<cdouble> lasso_reference(const DenseOp& a, const std::vector<cfloat>& y, double lambda) {
  const std::size_t rows = a.out().size(), cols = a.in().size();
  std::vector<cdouble> x(cols), r(y.begin(), y.end());  // r = y - A x
  for (int sweep = 0; sweep < 2000; ++sweep)
    for (std::size_t j = 0; j < cols; ++j) {
      cdouble aty = 0;
      double nrm = 0;
      for (std::size_t i = 0; i < rows; ++i) {
        aty += std::conj(a.at(i, j)) * (r[i] + a.at(i, j) * x[j]);
        nrm += std::norm(a.at(i, j));
      }
      const cdouble next = soft(aty, lambda) / nrm;
      for (std::size_t i = 0; i < rows; ++i) r[i] -= a.at(i, j) * (next - x[j]);
      x[j] = next;
    }
  return x;
}

// ---- proxes against their closed forms, and TV's against the optimality of its result

inline void proxes(Device& dev) {
  const std::vector<cfloat> v = test::random_complex(60, 7);
  const double t = 0.8;
  VecPtr vv = dev.upload(v), out = dev.zeros(v.size());
  SECTION("l2: (v + t y) / (1 + t)") {
    const std::vector<cfloat> y = test::random_complex(60, 8);
    l2_squared_prox(dev, std::shared_ptr<const DeviceVector>(dev.upload(y)))->apply(t, *vv, *out);
    std::vector<cfloat> want(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) want[i] = cfloat((cdouble(v[i]) + t * cdouble(y[i])) / (1.0 + t));
    CHECK(test::rel_l2(dev.download(*out), want) < 1e-6);
  }
  SECTION("l1: the complex soft threshold") {
    l1_prox(dev)->apply(t, *vv, *out);
    std::vector<cfloat> want(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) want[i] = cfloat(soft(v[i], t));
    CHECK(test::rel_l2(dev.download(*out), want) < 1e-6);
  }
  SECTION("group l1: each group shrunk by its norm") {
    const std::size_t n = 20;
    group_l1_prox(dev, n, 3)->apply(t, *vv, *out);
    std::vector<cfloat> want(v.size());
    for (std::size_t i = 0; i < n; ++i) {
      double g = 0;
      for (int k = 0; k < 3; ++k) g += std::norm(cdouble(v[k * n + i]));
      const double keep = std::sqrt(g) > t ? 1.0 - t / std::sqrt(g) : 0.0;
      for (int k = 0; k < 3; ++k) want[k * n + i] = cfloat(keep * cdouble(v[k * n + i]));
    }
    CHECK(test::rel_l2(dev.download(*out), want) < 1e-6);
  }
  SECTION("tv: its result beats every nearby point, and a step's known solution") {
    // 1D step a (n1 voxels) | b (n2 voxels): prox_{t TV} moves each level toward
    // the other by t / its length, while they do not cross.
    const int n1 = 5, n2 = 7;
    const ImageGrid g{n1 + n2, 1, 1};
    std::vector<cfloat> step(g.voxels());
    for (int i = 0; i < n1 + n2; ++i) step[i] = i < n1 ? cfloat(1.0f, 0.5f) : cfloat(3.0f, -0.5f);
    const ProxPtr tv = tv_prox(dev, g, 500);
    VecPtr sv = dev.upload(step), so = dev.zeros(step.size());
    tv->apply(t, *sv, *so);
    const std::vector<cfloat> got = dev.download(*so);
    const cdouble a(1.0, 0.5), b(3.0, -0.5), dir = (b - a) / std::abs(b - a);
    std::vector<cfloat> want(step.size());
    for (int i = 0; i < n1 + n2; ++i) want[i] = cfloat(i < n1 ? a + dir * (t / n1) : b - dir * (t / n2));
    CHECK(test::rel_l2(got, want) < 1e-4);
    // A random 2D image: the objective at the result is below nearby points'.
    const ImageGrid g2{6, 5, 1};
    const std::vector<cfloat> img = test::random_complex(g2.voxels(), 9);
    const ProxPtr tv2 = tv_prox(dev, g2, 2000);
    VecPtr iv = dev.upload(img), io = dev.zeros(img.size());
    tv2->apply(t, *iv, *io);
    const std::vector<cfloat> z = dev.download(*io);
    auto objective = [&](const std::vector<cfloat>& w) {
      double dist = 0;
      for (std::size_t i = 0; i < w.size(); ++i) dist += std::norm(cdouble(w[i]) - cdouble(img[i]));
      VecPtr wv = dev.upload(w);
      return t * tv2->value(*wv) + 0.5 * dist;
    };
    const double best = objective(z);
    for (unsigned s = 0; s < 8; ++s) {
      std::vector<cfloat> w = z;
      const std::vector<cfloat> d = test::random_complex(w.size(), 40 + s);
      for (std::size_t i = 0; i < w.size(); ++i) w[i] += 1e-2f * d[i];
      CHECK(objective(w) >= best - 1e-6);
    }
  }
}

// ---- solvers against known minimisers

inline void solvers(Device& dev) {
  const std::size_t n = 12;
  SECTION("CG: the least-squares solution of a dense system") {
    auto a = dense(dev, 16, n, 3);
    const std::vector<cfloat> x_true = test::random_complex(n, 4);
    const std::vector<cfloat> y = a->apply(x_true);  // consistent: the minimiser is x_true
    VecPtr rhs = dev.upload(a->adjoint(y)), x = dev.zeros(n);
    CgOptions o;
    o.iters = 200;
    o.tol = 1e-7;
    conjugate_gradient(*a->normal(), *rhs, *x, o);
    CHECK(test::rel_l2(dev.download(*x), x_true) < 1e-4);
  }
  // The LASSO's minimiser by float64 coordinate descent; ADMM (G = I), FISTA and
  // primal-dual must reach it.
  auto a = dense(dev, 16, n, 5);
  const std::vector<cfloat> y = test::random_complex(16, 6);
  const double lambda = 0.6;
  const std::vector<cdouble> ref = lasso_reference(*a, y, lambda);
  const std::vector<cfloat> want(ref.begin(), ref.end());
  VecPtr rhs = dev.upload(a->adjoint(y)), x = dev.zeros(n);
  SECTION("ADMM: the LASSO") {
    AdmmOptions o;
    o.rho = 1.0;
    o.outer = 400;
    o.inner = 20;
    admm(a->normal(), *rhs, {{identity(dev, a->in()), l1_prox(dev), lambda}}, *x, o);
    CHECK(test::rel_l2(dev.download(*x), want) < 1e-3);
  }
  SECTION("FISTA: the LASSO") {
    FistaOptions o;
    o.iters = 800;
    auto prox = l1_prox(dev);
    fista(a->normal(), *rhs, *prox, lambda, *x, o);
    CHECK(test::rel_l2(dev.download(*x), want) < 1e-3);
  }
  SECTION("primal-dual: the LASSO, the data term as a term") {
    PdhgOptions o;
    o.iters = 4000;
    auto yv = std::shared_ptr<const DeviceVector>(dev.upload(y));
    pdhg({{a, l2_squared_prox(dev, yv), 1.0}, {identity(dev, a->in()), l1_prox(dev), lambda}}, *x, o);
    CHECK(test::rel_l2(dev.download(*x), want) < 1e-3);
  }
  SECTION("ADMM with (D, group l1): a step's TV denoising") {
    const int n1 = 6, n2 = 10;
    const ImageGrid g{n1 + n2, 1, 1};
    std::vector<cfloat> step(g.voxels());
    for (int i = 0; i < n1 + n2; ++i) step[i] = i < n1 ? cfloat(2.0f) : cfloat(-1.0f);
    const double t = 0.9;
    VecPtr b = dev.upload(step), xs = dev.zeros(step.size());
    AdmmOptions o;
    o.rho = 1.0;
    o.outer = 600;
    o.inner = 10;
    admm(identity(dev, image_shape(g)), *b,
         {{finite_differences(dev, g), group_l1_prox(dev, g.voxels(), gradient_axes(g)), t}}, *xs, o);
    std::vector<cfloat> expect(step.size());
    for (int i = 0; i < n1 + n2; ++i) expect[i] = cfloat(i < n1 ? 2.0 - t / n1 : -1.0 + t / n2);
    CHECK(test::rel_l2(dev.download(*xs), expect) < 1e-3);
  }
}

}  // namespace fhd::solver_conformance
