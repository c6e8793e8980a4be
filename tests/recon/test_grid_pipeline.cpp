// Gridding through the CPU backend on analytic Shepp-Logan data, against the
// band-limited reference (the ceiling of any linear reconstruction).
#include <chrono>
#include <cstdio>
#include <omp.h>

#include "bench_util.hpp"
#include "catch.hpp"
#include "phantom/phantom.hpp"
#include "recon/gridding/dcf.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/gridding/gridding_cpu.hpp"
#include "recon/eval/metrics.hpp"
#include "recon/eval/reference.hpp"

using namespace fhd;

namespace {

// The object's continuous transform, as recon's band-limited image takes it.
KSpaceFn kspace_of(const Phantom& p) {
  return [&p](double kx, double ky, double kz) { return p.kspace(kx, ky, kz); };
}

struct Case {
  std::unique_ptr<Phantom> p;
  ImageGrid g;
  Trajectory t;
  std::vector<cfloat> d;
  std::vector<float> i0;
};

Case make_case(const std::string& phantom, const std::string& kind, ImageGrid g) {
  Case c;
  c.p = make_phantom(phantom);
  c.g = g;
  TrajectorySpec s;
  s.kind = kind;
  s.nx = g.nx;
  s.ny = g.ny;
  s.nz = g.nz;
  c.t = make_trajectory(s);
  c.d = synthesize(*c.p, c.t, g.nx, g.ny, g.nz);
  c.i0 = voxel_image(*c.p, g.nx, g.ny, g.nz);
  return c;
}

GridKernel kernel(GridKernel::Type type, double width, double sigma) {
  GridKernel k;
  k.type = type;
  k.width = width;
  k.oversampling = sigma;
  return k;
}

using fhd::bench::seconds_since;

}  // namespace

TEST_CASE("gridding a radial Shepp-Logan scan comes near the band-limited ceiling", "[grid]") {
  Case c = make_case("shepp2d", "radial2d", {128, 128, 1});
  auto be = make_cpu_device();
  auto w = density_weights(c.t, c.g, "auto", "radial2d");
  auto img = gridding_recon(*be, c.t, c.d, w, c.g, GridKernel{});
  auto ref = band_limited_image(kspace_of(*c.p), c.g);
  double p_grid = psnr(img, c.i0), p_ref = psnr(ref, c.i0), e = relative_error(img, ref);
  INFO("PSNR gridding " << p_grid << " dB, reference " << p_ref << " dB, relerr vs reference " << e);
  CHECK(p_grid > p_ref - 2.0);
  CHECK(e < 0.05);
}

// Not run by default: the numbers in docs/gridding.md. Run with
//   tests_recon "[.measure]" -s
TEST_CASE("gridding measurements for the docs", "[.measure]") {
  auto be = make_cpu_device();
  for (auto [phantom, kind, g] : {std::make_tuple("shepp2d", "radial2d", ImageGrid{256, 256, 1}),
                                  std::make_tuple("shepp2d", "spiral2d", ImageGrid{256, 256, 1}),
                                  std::make_tuple("shepp3d", "radial3d", ImageGrid{64, 64, 64}),
                                  std::make_tuple("shepp3d", "stack-of-stars", ImageGrid{64, 64, 64})}) {
    Case c = make_case(phantom, kind, g);
    double p_ref = psnr(band_limited_image(kspace_of(*c.p), c.g), c.i0);
    std::printf("%s %s %dx%dx%d, %zu samples: band-limited reference %.2f dB\n", phantom, kind, g.nx, g.ny, g.nz,
                c.t.size(), p_ref);
    for (std::string method : {"radial", "pipe-menon"}) {
      if (method == "radial" && std::string(kind) == "spiral2d") continue;
      auto t0 = std::chrono::steady_clock::now();
      auto w = density_weights(c.t, c.g, method, kind);
      double tdcf = seconds_since(t0);
      for (auto k : {kernel(GridKernel::Type::KaiserBessel, 4, 2), kernel(GridKernel::Type::KaiserBessel, 6, 2),
                     kernel(GridKernel::Type::KaiserBessel, 4, 1.25), kernel(GridKernel::Type::Trilinear, 2, 2),
                     kernel(GridKernel::Type::Trilinear, 2, 1)}) {
        t0 = std::chrono::steady_clock::now();
        auto img = gridding_recon(*be, c.t, c.d, w, c.g, k);
        std::printf("  dcf %-10s (%.2f s)  %s W=%g sigma=%g: PSNR %.2f dB, NRMSE %.4f (%.2f s)\n", method.c_str(), tdcf,
                    k.type == GridKernel::Type::Trilinear ? "trilinear" : "KB", k.type == GridKernel::Type::Trilinear ? 2.0 : k.width,
                    k.oversampling, psnr(img, c.i0), nrmse(img, c.i0), seconds_since(t0));
      }
    }
  }
  // Scatter and Pipe-Menon timing at the brief's size: 1M samples, 128^3.
  TrajectorySpec s;
  s.kind = "radial3d";
  s.nx = s.ny = s.nz = 128;
  s.total = std::size_t(1) << 20;
  Trajectory t = make_trajectory(s);
  std::vector<cfloat> d(t.size(), cfloat(1.0f, 0.0f));
  ImageGrid img{128, 128, 128}, over = oversampled_grid(img, 2.0);
  for (int threads : {1, omp_get_num_procs()}) {
    omp_set_num_threads(threads);
    auto t0 = std::chrono::steady_clock::now();
    auto g = cpu_grid_scatter(t, d, img, over, GridKernel{});
    double ts = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    auto w = pipe_menon_weights(t, img);
    std::printf("%zu samples, %d threads: KB W=4 scatter onto 256^3 %.2f s; Pipe-Menon 15 iterations %.2f s\n",
                t.size(), threads, ts, seconds_since(t0));
  }
}
