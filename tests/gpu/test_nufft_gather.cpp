// Spreading by gather (cuda/nufft/gather_spread.cuh): type 1 against the
// float64 direct sum at several widths, on fine grids whose lengths are not
// multiples of the box, with points piled so that a box is cut into parts,
// and batches (one group of 8 transforms, partly filled, and two groups)
// against single calls; the default's choice (shared tile for single calls,
// gather for batches). Plans too small for it spread through the shared tile.
#include <string>
#include <vector>

#include "cuda/device/device_buffer.hpp"
#include "cuda/nufft/nufft.hpp"
#include "recon/gather/direct_sum.hpp"
#include "nufft_test_buffers.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;
using gpu::DeviceBuffer;
using gpu::NufftMethod;

namespace {

double allowed(double tol) { return std::max(3.0 * tol, 4e-6); }

std::vector<cfloat> slice(const std::vector<cfloat>& v, std::size_t off, std::size_t n) {
  return std::vector<cfloat>(v.begin() + off, v.begin() + off + n);
}

}  // namespace

TEST_CASE("gpu nufft: spreading by gather meets the direct sum, alone and batched", "[gpu][nufft][batch]") {
  FHD_NEED_GPU();
  struct Case {
    ImageGrid grid;
    std::size_t m;
    bool piled;  // half the points within 5% of the centre: a box of several parts
    int bin;     // bin edge (0: the default), 4: many runs of bins per box
  };
  // {20, 26, 18}: fine lengths 40, 52, 36, so boxes of 8 leave partial ones.
  const Case cases[] = {{{24, 32, 20}, 6000, false, 0},
                        {{20, 26, 18}, 5000, false, 0},
                        {{24, 24, 24}, 12000, true, 0},
                        {{24, 24, 24}, 12000, true, 4}};
  unsigned seed = 41;
  for (const Case& cs : cases) {
    Trajectory t = random_trajectory(cs.m, cs.grid, seed++);
    if (cs.piled)
      for (std::size_t i = 0; i < t.size(); i += 2) {
        t.kx[i] *= 0.05f;
        t.ky[i] *= 0.05f;
        t.kz[i] *= 0.05f;
      }
    const int n = 9;  // one full group of 8, then a single transform
    const std::size_t vox = cs.grid.voxels();
    const std::vector<cfloat> c = random_complex(n * cs.m, seed++);
    const std::vector<cdouble> ref = fhd_reference(t, slice(c, 0, cs.m), cs.grid);
    gpu::OwnedStream s;
    const Points3 k = upload_points(t, s);
    const DeviceBuffer<float2> dc = to_device(c, s);
    DeviceBuffer<float2> df(n * vox, "test result");
    for (double tol : {1e-2, 1e-6, 1e-10}) {
      gpu::NufftOptions o;
      o.tol = tol;
      o.spread = NufftMethod::Gather;
      o.bin[0] = o.bin[1] = o.bin[2] = cs.bin;
      gpu::NufftPlan plan(cs.grid, cs.grid, o, s);
      REQUIRE(plan.gathers(1));
      plan.set_points(k.kx.get(), k.ky.get(), k.kz.get(), cs.m);
      INFO(grid_name(cs.grid) << (cs.piled ? " piled" : "") << " bin " << cs.bin << ", tol " << tol << ", width "
                              << plan.width());
      plan.type1(dc.get(), df.get());
      const std::vector<cfloat> one = to_host(df, 0, vox, s);
      CHECK(rel_l2(one, ref) < allowed(std::max(tol, 1e-6)));
      if (tol == 1e-2) CHECK(rel_l2(one, ref) > 1e-5);  // the width follows the tolerance
      std::vector<std::vector<cfloat>> singles;
      for (int k = 0; k < n; ++k) {
        plan.type1(dc.get() + k * cs.m, df.get());
        singles.push_back(to_host(df, 0, vox, s));
      }
      for (int batch : {5, n}) {  // a group partly filled; two groups
        plan.type1(dc.get(), df.get(), batch);
        const std::vector<cfloat> all = to_host(df, 0, batch * vox, s);
        for (int k = 0; k < batch; ++k) {
          INFO("batch " << batch << ", transform " << k);
          CHECK(rel_l2(slice(all, k * vox, vox), singles[k]) < 1e-6);
          if (k > 0) CHECK(rel_l2(slice(all, k * vox, vox), singles[0]) > 0.1);
        }
      }
    }
  }
}

TEST_CASE("gpu nufft: the default spreading gathers batches only, and equals the shared tile", "[gpu][nufft][batch]") {
  FHD_NEED_GPU();
  const ImageGrid g{24, 32, 20};
  const std::size_t m = 6000, vox = g.voxels();
  const int n = 4;
  const Trajectory t = random_trajectory(m, g, 61);
  const std::vector<cfloat> c = random_complex(n * m, 62);
  gpu::OwnedStream s;
  const Points3 k = upload_points(t, s);
  const DeviceBuffer<float2> dc = to_device(c, s);
  DeviceBuffer<float2> df(n * vox, "test result");
  gpu::NufftPlan plan(g, g, gpu::NufftOptions{}, s);  // spread: Auto
  CHECK_FALSE(plan.gathers(1));
  CHECK_FALSE(plan.gathers(gpu::kGatherMinBatch - 1));
  REQUIRE(plan.gathers(n));
  plan.set_points(k.kx.get(), k.ky.get(), k.kz.get(), m);
  plan.type1(dc.get(), df.get(), n);
  const std::vector<cfloat> batched = to_host(df, 0, n * vox, s);
  for (int k = 0; k < n; ++k) {  // single calls: the shared tile
    plan.type1(dc.get() + k * m, df.get());
    CHECK(rel_l2(slice(batched, k * vox, vox), to_host(df, 0, vox, s)) < 1e-6);
  }
  // The batch's set-up made ahead (reserve_type1: fine grids, the gather's
  // parts) gives the same sums, to rounding (a box's parts add atomically).
  gpu::NufftPlan ahead(g, g, gpu::NufftOptions{}, s);
  ahead.set_points(k.kx.get(), k.ky.get(), k.kz.get(), m);
  ahead.reserve_type1(n);
  ahead.type1(dc.get(), df.get(), n);
  CHECK(rel_l2(to_host(df, 0, n * vox, s), batched) < 1e-6);
}

TEST_CASE("gpu nufft: a plan too small for the gather spreads through the shared tile", "[gpu][nufft]") {
  FHD_NEED_GPU();
  // Fine lengths 16, 12, 10 hold no box with its reach; a 2D plan never gathers.
  for (const ImageGrid& g : {ImageGrid{8, 6, 5}, ImageGrid{64, 64, 1}}) {
    const Trajectory t = random_trajectory(800, g, 3);
    const std::vector<cfloat> c = random_complex(t.size(), 4);
    gpu::NufftOptions o;
    o.spread = NufftMethod::Gather;
    gpu::OwnedStream s;
    gpu::NufftPlan plan(g, g, o, s);
    CHECK_FALSE(plan.gathers(8));
    CHECK(rel_l2(gpu::nufft_type1(t, c, g, o), fhd_reference(t, c, g)) < allowed(1e-6));
  }
}
