// The GPU NUFFT's batches (issue 25): n transforms in one call equal n
// single calls on the same plan to float32 rounding, type 1 and type 2, 2D and
// 3D, both spreading/interpolation methods; a plan reused gives identical
// results (single after batched, batched again).
#include <string>
#include <vector>

#include "core/error.hpp"
#include "cuda/device/device_buffer.hpp"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/nufft/nufft.hpp"
#include "nufft_test_buffers.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;
using gpu::DeviceBuffer;
using gpu::NufftMethod;


TEST_CASE("gpu nufft: n transforms in one call equal n single calls; plans reused give identical results",
          "[gpu][nufft][batch]") {
  FHD_NEED_GPU();
  // {16, 16, 8}: a power-of-two fine grid, each transform through the line passes.
  const ImageGrid grids[] = {{32, 24, 1}, {16, 20, 12}, {16, 16, 8}};
  const int n = 5;
  unsigned seed = 7;
  for (const ImageGrid& g : grids)
    for (NufftMethod method : {NufftMethod::Shared, NufftMethod::Global, NufftMethod::Rows}) {
      const std::size_t m = 3000, vox = g.voxels();
      const Trajectory t = random_trajectory(m, g, seed++);
      const std::vector<cfloat> c = random_complex(n * m, seed++), f = random_complex(n * vox, seed++);
      gpu::OwnedStream s;
      Points3 p = upload_points(t, s);
      gpu::NufftOptions o;
      o.tol = 1e-6;
      o.spread = method == NufftMethod::Auto || gpu::interpolation_only(method) ? NufftMethod::Shared : method;
      o.interp = method;
      gpu::NufftPlan plan(g, g, o, s);
      plan.set_points(p.kx.get(), p.ky.get(), p.kz.get(), m);
      DeviceBuffer<float2> dc = to_device(c, s), df = to_device(f, s);
      DeviceBuffer<float2> img_single(n * vox, "test"), img_batch(n * vox, "test");
      DeviceBuffer<float2> pts_single(n * m, "test"), pts_batch(n * m, "test");
      for (int k = 0; k < n; ++k) {
        plan.type1(dc.get() + k * m, img_single.get() + k * vox);
        plan.type2(df.get() + k * vox, pts_single.get() + k * m);
      }
      plan.type1(dc.get(), img_batch.get(), n);
      plan.type2(df.get(), pts_batch.get(), n);
      const std::string what = grid_name(g) + (method == NufftMethod::Shared ? " shared" : " global");
      for (int k = 0; k < n; ++k) {
        INFO(what << ", transform " << k);
        const std::vector<cfloat> s1 = to_host(img_single, k * vox, vox, s), b1 = to_host(img_batch, k * vox, vox, s);
        const std::vector<cfloat> s2 = to_host(pts_single, k * m, m, s), b2 = to_host(pts_batch, k * m, m, s);
        // float32 rounding: type 1's atomics add in any order, and a batched
        // cuFFT plan may factor the transform otherwise than a single one.
        CHECK(rel_l2(b1, s1) < 1e-6);
        CHECK(rel_l2(b2, s2) < 1e-6);
        // The transforms differ: a batch that repeated transform 0 would fail here.
        if (k > 0) CHECK(rel_l2(b1, to_host(img_single, 0, vox, s)) > 0.1);
      }
      // Reuse: the batch again and a single call after it, on the same plan:
      // type 2 (one thread per point, no atomics) repeats bit for bit.
      DeviceBuffer<float2> again(n * m, "test");
      plan.type2(df.get(), again.get(), n);
      CHECK(to_host(again, 0, n * m, s) == to_host(pts_batch, 0, n * m, s));
      plan.type2(df.get() + vox, again.get());
      CHECK(to_host(again, 0, m, s) == to_host(pts_single, m, m, s));
      plan.type1(dc.get(), img_batch.get(), n);
      CHECK(rel_l2(to_host(img_batch, 0, n * vox, s), to_host(img_single, 0, n * vox, s)) < 1e-6);
    }
}

TEST_CASE("gpu nufft: a batch size out of range is refused", "[gpu][nufft][batch]") {
  FHD_NEED_GPU();
  const ImageGrid g{16, 16, 1};
  gpu::OwnedStream s;
  gpu::NufftPlan plan(g, g, gpu::NufftOptions{}, s);
  CHECK_THROWS_AS(plan.type1(nullptr, nullptr, 0), InputError);
  CHECK_THROWS_AS(plan.type2(nullptr, nullptr, 70000), InputError);
}

// set_points again on the same plan (its sorted records and bin arrays are
// kept): more points, then fewer, then the first set again. Each answer must
// equal a fresh plan's: type 2 bit for bit (each point sums its own cells in
// a fixed order, whatever order the sort left the points in), type 1 to
// float32 rounding (its atomics add in any order).
TEST_CASE("gpu nufft: set_points again on a kept plan equals a fresh plan", "[gpu][nufft][batch]") {
  FHD_NEED_GPU();
  const ImageGrid g{16, 20, 12};
  gpu::OwnedStream s;
  gpu::NufftOptions o;
  o.tol = 1e-5;
  gpu::NufftPlan kept(g, g, o, s);
  const std::vector<cfloat> f = random_complex(g.voxels(), 3);
  DeviceBuffer<float2> df = to_device(f, s);
  DeviceBuffer<float2> img(g.voxels(), "test");
  unsigned seed = 40;
  for (std::size_t m : {2000u, 5000u, 700u, 2000u}) {
    INFO(m << " points");
    const Trajectory t = random_trajectory(m, g, seed++);
    Points3 p = upload_points(t, s);
    const std::vector<cfloat> c = random_complex(m, seed++);
    DeviceBuffer<float2> dc = to_device(c, s), out_kept(m, "test"), out_fresh(m, "test");
    gpu::NufftPlan fresh(g, g, o, s);
    kept.set_points(p.kx.get(), p.ky.get(), p.kz.get(), m);
    fresh.set_points(p.kx.get(), p.ky.get(), p.kz.get(), m);
    kept.type2(df.get(), out_kept.get());
    fresh.type2(df.get(), out_fresh.get());
    CHECK(to_host(out_kept, 0, m, s) == to_host(out_fresh, 0, m, s));
    kept.type1(dc.get(), img.get());
    const std::vector<cfloat> a = to_host(img, 0, g.voxels(), s);
    fresh.type1(dc.get(), img.get());
    CHECK(rel_l2(a, to_host(img, 0, g.voxels(), s)) < 1e-6);
    CHECK(kept.points() == m);
  }
}
