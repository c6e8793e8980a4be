// Toeplitz normal operator, D^H D, the centered DFT, cmpMu and vector ops of the CPU device.
#include <cmath>

#include "catch.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/gather/cpu_fhd.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/ops/diff.hpp"
#include "recon/ops/fft.hpp"
#include "recon/plan/plan.hpp"
#include "recon/plan/toeplitz.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

// F^H F x + lambda R^H R x, all in double through the reference sums.
std::vector<cdouble> dense_normal(const Trajectory& traj, const std::vector<cfloat>& x, const ImageGrid& g,
                                  double lambda) {
  // Keep F x in double: fhd_reference takes floats, so split F^H into real and imaginary parts.
  const std::vector<cdouble> d = forward_reference(traj, x, g);
  std::vector<cfloat> hi(d.size()), lo(d.size());
  for (std::size_t m = 0; m < d.size(); ++m) {
    hi[m] = cfloat(d[m]);
    lo[m] = cfloat(d[m] - cdouble(hi[m]));
  }
  std::vector<cdouble> y = fhd_reference(traj, hi, g);
  const std::vector<cdouble> y_lo = fhd_reference(traj, lo, g);
  const std::vector<cdouble> r = dense_rhr(x, g);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += y_lo[i] + lambda * r[i];
  return y;
}

const ImageGrid kGrids[] = {{6, 5, 1}, {7, 8, 1}, {4, 5, 3}, {5, 4, 6}};

}  // namespace

TEST_CASE("Toeplitz operator equals F^H F (+ lambda R^H R) applied directly", "[cpu]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = random_trajectory(4 * g.voxels(), g, 9);
    const std::vector<cfloat> x = random_complex(g.voxels(), 4);
    const std::vector<cfloat> q = cpu_q(traj, {}, g, {TrigMode::Double, ""});
    auto dev = make_cpu_device();
    for (double lambda : {0.0, 3.5}) {
      auto t = std::make_shared<ToeplitzOperator>(*dev, q, g);
      OpPtr op = lambda == 0.0 ? OpPtr(t) : sum({t, scale(lambda, laplacian(*dev, g))});
      // A first apply leaves the pruned FFT's unread voxels in the buffer: the second must not see them.
      op->apply(random_complex(g.voxels(), 5));
      const std::vector<cfloat> y = op->apply(x);
      const double err = rel_l2(y, dense_normal(traj, x, g, lambda));
      INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz << " lambda " << lambda << " rel l2 " << err);
      // Float FFTs of size ~2^10: a few 1e-7 relative.
      CHECK(err < 1e-5);
    }
  }
}

// SENSE's coils through one batched FFT pair: the same as one apply each
// (the batch's plans, buffer and zero padding must keep the coils apart).
TEST_CASE("Toeplitz operator over n vectors equals n single applies", "[cpu]") {
  for (const ImageGrid& g : kGrids) {
    const Trajectory traj = random_trajectory(4 * g.voxels(), g, 19);
    const std::vector<cfloat> q = cpu_q(traj, {}, g, {TrigMode::Double, ""});
    auto dev = make_cpu_device();
    ToeplitzOperator op(*dev, q, g);
    for (int n : {1, 3, 8}) {
      const std::vector<cfloat> x = random_complex(g.voxels() * n, 20 + n);
      std::vector<cfloat> y(x.size()), garbage(x.size());
      op.apply(random_complex(x.size(), 30).data(), garbage.data(), n);  // leaves the batch buffer dirty
      op.apply(x.data(), y.data(), n);
      for (int t = 0; t < n; ++t) {
        std::vector<cfloat> single(g.voxels());
        op.apply(x.data() + t * g.voxels(), single.data());
        const std::vector<cfloat> batched(y.begin() + t * g.voxels(), y.begin() + (t + 1) * g.voxels());
        INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz << " n " << n << " vector " << t);
        CHECK(rel_l2(batched, single) < 1e-6);
        CHECK(rel_l2(batched, dense_normal(traj, std::vector<cfloat>(x.begin() + t * g.voxels(),
                                                                     x.begin() + (t + 1) * g.voxels()),
                                           g, 0.0)) < 1e-5);
      }
    }
  }
}

TEST_CASE("laplacian_add equals lambda D^H D with an explicit dense D", "[cpu]") {
  for (const ImageGrid& g : kGrids) {
    const std::vector<cfloat> x = random_complex(g.voxels(), 8);
    std::vector<cfloat> y(g.voxels());
    laplacian_add_host(x.data(), y.data(), 2.0, g);
    std::vector<cdouble> ref = dense_rhr(x, g);
    for (auto& v : ref) v *= 2.0;
    CHECK(rel_l2(y, ref) < 1e-6);
  }
}

TEST_CASE("the centered inverse DFT equals the centered direct sum", "[cpu]") {
  auto backend = make_cpu_device();
  for (const ImageGrid& d : {ImageGrid{5, 4, 3}, ImageGrid{6, 7, 1}, ImageGrid{8, 3, 4}}) {
    const std::vector<cfloat> in = random_complex(d.voxels(), 3);
    VecPtr v = backend->upload(in);
    backend->kernels<FftKernels>().centered(*v, d, true);
    const std::vector<cfloat> out = backend->download(*v);
    std::vector<cdouble> ref(d.voxels(), 0.0);
    const int n[3] = {d.nx, d.ny, d.nz};
    for (std::size_t j = 0; j < d.voxels(); ++j) {
      const int jj[3] = {int(j % d.nx), int(j / d.nx % d.ny), int(j / (std::size_t(d.nx) * d.ny))};
      for (std::size_t k = 0; k < d.voxels(); ++k) {
        const int kk[3] = {int(k % d.nx), int(k / d.nx % d.ny), int(k / (std::size_t(d.nx) * d.ny))};
        double phase = 0;
        for (int a = 0; a < 3; ++a) phase += double(kk[a] - n[a] / 2) * double(jj[a] - n[a] / 2) / n[a];
        ref[j] += cdouble(in[k]) * std::polar(1.0, 6.283185307179586 * phase);
      }
    }
    INFO("dims " << d.nx << "x" << d.ny << "x" << d.nz);
    CHECK(rel_l2(out, ref) < 1e-6);
  }
}

TEST_CASE("cpu device: cmpMu and vector ops", "[cpu]") {
  auto b = make_cpu_device();
  CHECK(b->name().rfind("cpu (", 0) == 0);
  CHECK_FALSE(b->is_gpu());

  const std::vector<cfloat> d = random_complex(50, 1), phi = random_complex(50, 2);
  const Trajectory t = random_trajectory(50, {4, 4, 1}, 3);
  CHECK(b->download(*Plan::make(*b, t, {4, 4, 1}, {})->mu(d)) == d);
  PlanOptions po;
  po.phi = phi;
  const std::vector<cfloat> mu = b->download(*Plan::make(*b, t, {4, 4, 1}, po)->mu(d));
  for (std::size_t m = 0; m < d.size(); ++m) {
    // rMu = rPhi rD + iPhi iD, iMu = rPhi iD - iPhi rD (docs/conventions.md)
    CHECK(std::abs(mu[m].real() - (phi[m].real() * d[m].real() + phi[m].imag() * d[m].imag())) < 1e-5);
    CHECK(std::abs(mu[m].imag() - (phi[m].real() * d[m].imag() - phi[m].imag() * d[m].real())) < 1e-5);
  }
  CHECK_THROWS(Plan::make(*b, t, {4, 4, 1}, po)->mu(random_complex(3, 1)));

  const std::vector<cfloat> xs = random_complex(1000, 5), ys = random_complex(1000, 6);
  VecPtr x = b->upload(xs), y = b->upload(ys);
  const cdouble dot = b->dot(*x, *y);
  CHECK(std::abs(dot - inner(xs, ys)) < 1e-9 * std::abs(inner(xs, ys)));

  const cdouble a(0.5, -2.0);
  b->axpy(a, *x, *y);
  std::vector<cfloat> got = b->download(*y);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(std::abs(cdouble(got[i]) - (a * cdouble(xs[i]) + cdouble(ys[i]))) < 1e-5);

  b->xpay(*x, a, *y);  // y = x + a y
  const std::vector<cfloat> before = got;
  got = b->download(*y);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(std::abs(cdouble(got[i]) - (cdouble(xs[i]) + a * cdouble(before[i]))) < 1e-4);

  VecPtr z = b->zeros(1000);
  CHECK(b->dot(*z, *z) == cdouble(0.0));
  b->copy(*x, *z);
  CHECK(b->download(*z) == xs);
  VecPtr small = b->zeros(3);
  CHECK_THROWS(b->copy(*x, *small));
}
