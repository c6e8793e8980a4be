// The db4 wavelet operator (recon/ops/wavelet.hpp): orthonormal (W^H W = I
// and W W^H = I), a constant image's analytic coefficients, the level rule,
// and the l1-wavelet prox W^H soft(W v).
#include <cmath>

#include "catch.hpp"
#include "recon/device/device.hpp"
#include "recon/ops/wavelet.hpp"
#include "recon/solvers/prox.hpp"
#include "test_util.hpp"

using namespace fhd;

TEST_CASE("wavelet: the level rule", "[wavelet]") {
  CHECK(wavelet_levels({64, 64, 64}) == 4);
  CHECK(wavelet_levels({128, 128, 1}) == 4);
  CHECK(wavelet_levels({24, 24, 1}) == 2);   // 24 -> 12 -> 6: the filter's 8 taps stop it there
  CHECK(wavelet_levels({12, 16, 1}) == 1);
  CHECK(wavelet_levels({33, 32, 1}) == 0);   // an odd axis: no level, the identity
  CHECK(wavelet_levels({32, 32, 6}) == 0);   // too short an axis
}

TEST_CASE("wavelet: orthonormal in 2D and 3D, every level count", "[wavelet]") {
  auto dev = make_cpu_device();
  for (const ImageGrid& g : {ImageGrid{32, 16, 1}, ImageGrid{16, 32, 8}, ImageGrid{24, 24, 1}})
    for (int levels = 1; levels <= wavelet_levels(g); ++levels) {
      INFO(dims_string(g) << ", " << levels << " levels");
      const OpPtr w = wavelet_op(*dev, g, levels);
      const std::vector<cfloat> x = test::random_complex(g.voxels(), 3), c = test::random_complex(g.voxels(), 4);
      const std::vector<cfloat> wx = w->apply(x);
      CHECK(test::rel_l2(w->adjoint(wx), x) < 1e-6);          // W^H W = I
      CHECK(test::rel_l2(w->apply(w->adjoint(c)), c) < 1e-6);  // W W^H = I
      double ex = 0, ew = 0;
      for (std::size_t i = 0; i < x.size(); ++i) ex += std::norm(cdouble(x[i])), ew += std::norm(cdouble(wx[i]));
      CHECK(std::abs(ew / ex - 1.0) < 1e-6);  // Parseval
      CHECK(test::rel_l2(wx, x) > 0.5);       // and it did transform
    }
}

TEST_CASE("wavelet: a constant image has no detail, and its coarse coefficients are c 2^(dL/2)", "[wavelet]") {
  auto dev = make_cpu_device();
  const ImageGrid g{32, 32, 1};
  const int levels = 3, d = 2;
  const std::vector<cfloat> x(g.voxels(), cfloat(1.5f, -0.5f));
  const std::vector<cfloat> c = wavelet_op(*dev, g, levels)->apply(x);
  const int coarse = 32 >> levels;
  const cdouble want = cdouble(1.5, -0.5) * std::pow(2.0, d * levels / 2.0);
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix) {
      const cdouble v = c[ix + std::size_t(g.nx) * iy];
      if (ix < coarse && iy < coarse)
        CHECK(std::abs(v - want) < 1e-4 * std::abs(want));
      else
        CHECK(std::abs(v) < 1e-4);  // the high-pass sums to 0
    }
}

TEST_CASE("wavelet: the l1-wavelet prox is W^H soft(W v)", "[wavelet][prox]") {
  auto dev = make_cpu_device();
  const ImageGrid g{16, 16, 1};
  const OpPtr w = wavelet_op(*dev, g);
  const std::vector<cfloat> v = test::random_complex(g.voxels(), 9);
  const double t = 0.7;
  VecPtr vv = dev->upload(v), out = dev->zeros(v.size());
  l1_wavelet_prox(w)->apply(t, *vv, *out);
  std::vector<cfloat> c = w->apply(v);
  for (cfloat& e : c) {
    const double m = std::abs(cdouble(e));
    e = m > t ? cfloat(cdouble(e) * (1.0 - t / m)) : cfloat(0.0f);
  }
  CHECK(test::rel_l2(dev->download(*out), w->adjoint(c)) < 1e-6);
}
