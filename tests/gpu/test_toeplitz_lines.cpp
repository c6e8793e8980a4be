// The GPU's Toeplitz normal on power-of-two 2D and 3D grids, where it runs
// the line passes of cuda/plan/toeplitz_lines.cu, against the float64 direct
// sum y_i = sum_k Q[i - k + n] x_k (per axis; Q index j holds lag j - n), for
// a general Q and a Hermitian one. What is asserted is the product: a general
// Q kept as a real spectrum would fail it; whether a Hermitian Q did take the
// real spectrum (speed only) shows in [backend-bench], not here.
#include <tuple>
#include <vector>

#include "cuda/plan/toeplitz_lines.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

namespace {

std::vector<cdouble> direct_convolution(const std::vector<cfloat>& q, const std::vector<cfloat>& x, const ImageGrid& g) {
  const ImageGrid len = g.doubled();
  const int z0 = g.is3d() ? g.nz : 0;  // a 2D grid's Q has one z plane
  std::vector<cdouble> y(g.voxels(), 0.0);
  std::size_t i = 0;
  for (int iz = 0; iz < g.nz; ++iz)
    for (int iy = 0; iy < g.ny; ++iy)
      for (int ix = 0; ix < g.nx; ++ix, ++i) {
        cdouble acc = 0.0;
        std::size_t k = 0;
        for (int kz = 0; kz < g.nz; ++kz)
          for (int ky = 0; ky < g.ny; ++ky) {
            const std::size_t row =
                std::size_t(ix + g.nx) + std::size_t(len.nx) * (iy - ky + g.ny + std::size_t(len.ny) * (iz - kz + z0));
            for (int kx = 0; kx < g.nx; ++kx, ++k) acc += cdouble(q[row - kx]) * cdouble(x[k]);
          }
        y[i] = acc;
      }
  return y;
}

// Q with Q(-d) = conj(Q(d)) for every lag d in (-n, n) per axis (index
// 2n - j holds the lag opposite index j's); lag -n (index 0) stays as drawn.
std::vector<cfloat> hermitian(std::vector<cfloat> q, const ImageGrid& g) {
  const ImageGrid len = g.doubled();
  auto at = [&](int x, int y, int z) -> cfloat& { return q[x + std::size_t(len.nx) * (y + std::size_t(len.ny) * z)]; };
  const int z0 = g.is3d() ? 1 : 0;
  for (int z = z0; z < len.nz; ++z)
    for (int y = 1; y < len.ny; ++y)
      for (int x = 1; x < len.nx; ++x) {
        const int zp = g.is3d() ? len.nz - z : 0;
        if (std::make_tuple(z, y, x) > std::make_tuple(zp, len.ny - y, len.nx - x)) continue;
        const cfloat m = 0.5f * (at(x, y, z) + std::conj(at(len.nx - x, len.ny - y, zp)));
        at(x, y, z) = m;
        at(len.nx - x, len.ny - y, zp) = std::conj(m);
      }
  return q;
}

}  // namespace

TEST_CASE("gpu Toeplitz line passes equal the float64 direct convolution", "[gpu][toeplitz]") {
  FHD_NEED_GPU();
  auto dev = make_gpu_device();
  // Every doubled length the passes take (16 to 512) on each kind of pass:
  // x (contiguous lines), y (strided), z (the fused forward-multiply-inverse).
  // A 2D grid runs x, then y as the fused pass.
  const ImageGrid grids[] = {{8, 8, 8},   {32, 16, 8},  {8, 64, 16}, {128, 8, 8},  {8, 8, 128},
                             {256, 8, 8}, {8, 256, 8}, {8, 8, 256}, {16, 32, 1}, {256, 64, 1}};
  for (const ImageGrid& g : grids)
    for (bool symmetric : {false, true}) {
      INFO(grid_name(g) << (symmetric ? ", Hermitian Q" : ", general Q"));
      REQUIRE(gpu::LineToeplitz::supports(g));
      std::vector<cfloat> q = random_complex(g.doubled().voxels(), 31);
      if (symmetric) q = hermitian(q, g);
      const std::vector<cfloat> x = random_complex(g.voxels(), 32);
      const OpPtr t = normal_of(*dev, q, g, 0.0);
      const std::vector<cfloat> y = t->apply(x);
      CHECK(rel_l2(y, direct_convolution(q, x, g)) < 1e-5);
      // No state kept between applies: another input, then x again.
      t->apply(random_complex(g.voxels(), 33));
      CHECK(rel_l2(t->apply(x), y) < 1e-7);
    }
  // Lengths outside the passes go to cuFFT's pair (tests/gpu/test_backend.cpp).
  CHECK_FALSE(gpu::LineToeplitz::supports({12, 10, 8}));
  CHECK_FALSE(gpu::LineToeplitz::supports({16, 4, 1}));
  CHECK_FALSE(gpu::LineToeplitz::supports({16, 1, 1}));
  CHECK_FALSE(gpu::LineToeplitz::supports({4, 16, 16}));
  CHECK_FALSE(gpu::LineToeplitz::supports({512, 16, 16}));
}
