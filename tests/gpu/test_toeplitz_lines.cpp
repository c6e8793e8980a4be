// The GPU's Toeplitz normal on power-of-two 3D grids, where it runs the line
// passes of cuda/plan/toeplitz_lines.cu, against the float64 direct sum
// y_i = sum_k Q[i - k + n] x_k (per axis; Q index j holds lag j - n).
#include <vector>

#include "cuda/plan/toeplitz_lines.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

namespace {

std::vector<cdouble> direct_convolution(const std::vector<cfloat>& q, const std::vector<cfloat>& x, const ImageGrid& g) {
  const ImageGrid len = g.doubled();
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
                std::size_t(ix + g.nx) + std::size_t(len.nx) * (iy - ky + g.ny + std::size_t(len.ny) * (iz - kz + g.nz));
            for (int kx = 0; kx < g.nx; ++kx, ++k) acc += cdouble(q[row - kx]) * cdouble(x[k]);
          }
        y[i] = acc;
      }
  return y;
}

}  // namespace

TEST_CASE("gpu Toeplitz line passes equal the float64 direct convolution", "[gpu][toeplitz]") {
  FHD_NEED_GPU();
  auto dev = make_gpu_device();
  // Every doubled length the passes take (16 to 512) on each kind of pass:
  // x (contiguous lines), y (strided), z (the fused forward-multiply-inverse).
  const ImageGrid grids[] = {{8, 8, 8},   {32, 16, 8},  {8, 64, 16}, {128, 8, 8},
                             {8, 8, 128}, {256, 8, 8}, {8, 256, 8}, {8, 8, 256}};
  for (const ImageGrid& g : grids) {
    INFO(grid_name(g));
    REQUIRE(gpu::LineToeplitz::supports(g));
    const std::vector<cfloat> q = random_complex(g.doubled().voxels(), 31), x = random_complex(g.voxels(), 32);
    const OpPtr t = normal_of(*dev, q, g, 0.0);
    const std::vector<cfloat> y = t->apply(x);
    CHECK(rel_l2(y, direct_convolution(q, x, g)) < 1e-5);
    // No state kept between applies: another input, then x again.
    t->apply(random_complex(g.voxels(), 33));
    CHECK(rel_l2(t->apply(x), y) < 1e-7);
  }
  // Lengths outside the passes go to cuFFT's pair (tests/gpu/test_backend.cpp).
  CHECK_FALSE(gpu::LineToeplitz::supports({12, 10, 8}));
  CHECK_FALSE(gpu::LineToeplitz::supports({16, 16, 1}));
  CHECK_FALSE(gpu::LineToeplitz::supports({4, 16, 16}));
  CHECK_FALSE(gpu::LineToeplitz::supports({512, 16, 16}));
}
