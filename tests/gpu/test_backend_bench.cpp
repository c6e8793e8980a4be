// Stage times of the GPU device at the size: 128^3 voxels, about
// 1M samples of 3D radial. Hidden ([.]): run with
//   build-gpu/tests_gpu "[backend-bench]"
// Prints a table; checks only that every stage produced finite output (no clock
// in any pass/fail). Figures go to docs/gpu-backend.md.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "catch.hpp"
#include "cuda/gather/fhd_kernels.hpp"
#include "cuda/device/gpu_device.hpp"
#include "cuda/device/gpu_internal.hpp"
#include "phantom/trajectory.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/ops/fft.hpp"
#include "recon/plan/plan.hpp"
#include "recon/solvers/cg.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Median wall time in ms of `reps` runs of f (f must synchronize itself).
template <class F>
double median_ms(int reps, F f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void row(const char* stage, double ms, const std::string& note) {
  std::printf("| %-48s | %10.3f | %s\n", stage, ms, note.c_str());
}

bool finite(const std::vector<cfloat>& v) {
  for (const cfloat& x : v)
    if (!std::isfinite(x.real()) || !std::isfinite(x.imag())) return false;
  return true;
}

// Device-only gridding time (median of 7, memset of the grid included) of
// every scatter method, one row each.
void time_scatter(const Trajectory& t, const std::vector<cfloat>& data, const ImageGrid& g, const GridKernel& k,
                  const std::string& label) {
  gpu::DeviceTrajectory dt;
  dt.m = t.size();
  dt.kx.allocate(dt.m, "bench");
  dt.ky.allocate(dt.m, "bench");
  dt.kz.allocate(dt.m, "bench");
  gpu::upload(t.kx.data(), dt.m, dt.kx.get(), nullptr);
  gpu::upload(t.ky.data(), dt.m, dt.ky.get(), nullptr);
  gpu::upload(t.kz.data(), dt.m, dt.kz.get(), nullptr);
  gpu::DeviceBuffer<float2> v(dt.m, "bench");
  gpu::upload(reinterpret_cast<const float2*>(data.data()), dt.m, v.get(), nullptr);
  const ImageGrid over = oversampled_grid(g, k.oversampling);
  gpu::DeviceBuffer<float2> grid(over.voxels(), "bench");
  const std::pair<gpu::ScatterMethod, const char*> methods[] = {
      {gpu::ScatterMethod::Atomic, "atomics"}, {gpu::ScatterMethod::Privatized, "privatized"},
      {gpu::ScatterMethod::Hybrid, "hybrid"}};
  for (const auto& [method, name] : methods) {
    const double ms = median_ms(7, [&] {
      CUDA_CHECK(cudaMemsetAsync(grid.get(), 0, grid.bytes(), nullptr));
      gpu::grid_scatter_device(dt, v.get(), g, over, k, method, grid.get(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
    });
    row((label + ", " + name).c_str(), ms, std::to_string(t.size()) + " samples, device only");
  }
}

}  // namespace

TEST_CASE("gpu device stage times at 128^3 with 1M radial samples", "[.][gpu][backend-bench]") {
  FHD_NEED_GPU();
  const ImageGrid g{128, 128, 128};
  TrajectorySpec spec;
  spec.kind = "radial3d";
  spec.nx = spec.ny = spec.nz = 128;
  spec.total = std::size_t(1) << 20;
  const Trajectory t = make_trajectory(spec);
  const auto data = random_complex(t.size(), 1);
  auto be = make_gpu_device();
  std::printf("\n%s\n128^3 voxels, %zu radial3d samples\n", be->name().c_str(), t.size());
  std::printf("| %-48s | %10s | %s\n", "stage", "ms", "note");

  // Warm-up on a small problem: context, module load, cuFFT and kernel-table setup stay out.
  {
    const ImageGrid s{16, 16, 16};
    auto pts = be->upload_points(random_trajectory(4096, s, 2));
    const auto mu = random_complex(4096, 3);
    for (TrigMode trig : {TrigMode::Single, TrigMode::Sfu}) {
      FhdOptions o;
      o.trig = trig;
      gather_fhd(*be, *pts, mu, s, o);
      gather_q(*be, *pts, {}, s, o);
    }
  }

  row("upload_points (upload k)", median_ms(5, [&] { be->upload_points(t); }), "12 B/sample over PCIe");
  auto pts = be->upload_points(t);
  auto plan = Plan::make(*be, t, g, {});  // Phi = 1: cmpMu is the upload, the copy back the download
  std::vector<cfloat> mu;
  row("mu (with host transfers)", median_ms(5, [&] { mu = be->download(*plan->mu(data)); }), "8 MiB each way");
  std::vector<cfloat> fhd_img, q;
  for (TrigMode trig : {TrigMode::Single, TrigMode::Sfu}) {
    FhdOptions o;
    o.trig = trig;
    const std::string k = gpu::default_kernel(trig);
    const double pairs = double(t.size()) * g.voxels();
    double ms = median_ms(3, [&] { fhd_img = gather_fhd(*be, *pts, mu, g, o); });
    char note[160];
    std::snprintf(note, sizeof note, "trig %s, kernel %s, %.2f T pairs/s", to_string(trig), k.c_str(),
                  pairs / ms * 1e-9);
    row("fhd", ms, note);
    ms = median_ms(1, [&] { q = gather_q(*be, *pts, {}, g, o); });
    std::snprintf(note, sizeof note, "trig %s, kernel %s, 256^3 points, %.2f T pairs/s", to_string(trig), k.c_str(),
                  8 * pairs / ms * 1e-9);
    row("q", ms, note);
  }
  CHECK(finite(fhd_img));
  CHECK(finite(q));

  const double lambda = 0.0;
  OpPtr op;
  row("normal operator setup (FFT of Q)", median_ms(3, [&] { op = normal_of(*be, q, g, lambda); }),
      "upload 128 MiB Q, shift, 256^3 FFT");
  auto x = be->upload(fhd_img);
  auto y = be->zeros(g.voxels());
  op->apply(*x, *y);
  row("normal operator apply", median_ms(20, [&] {
        op->apply(*x, *y);
        be->synchronize();
      }),
      "embed, 256^3 FFT, multiply, inverse FFT, crop");
  CgOptions one, eleven;
  one.iters = 1;
  eleven.iters = 11;
  auto rhs = be->upload(fhd_img);
  const double t1 = median_ms(3, [&] {
    auto x0 = be->zeros(g.voxels());
    conjugate_gradient(*op, *rhs, *x0, one);
  });
  const double t11 = median_ms(3, [&] {
    auto x0 = be->zeros(g.voxels());
    conjugate_gradient(*op, *rhs, *x0, eleven);
  });
  row("CG, 1 iteration (incl. setup)", t1, "");
  row("CG, per iteration ((11 - 1) / 10)", (t11 - t1) / 10, "1 apply, 2 dots, 3 axpy/xpay");

  // Gridding: device part alone (event-timed), every method, then the whole call.
  for (auto type : {GridKernel::Type::KaiserBessel, GridKernel::Type::Trilinear}) {
    GridKernel k;
    k.type = type;
    const std::string kname = type == GridKernel::Type::Trilinear ? "trilinear" : "KB W=4";
    time_scatter(t, data, g, k, "gridding 128^3 radial3d " + kname);
  }
  {
    // Denser cases: the same 1M samples on smaller grids (more samples per tile).
    TrajectorySpec s2 = spec;
    s2.nx = s2.ny = s2.nz = 64;
    const Trajectory t64 = make_trajectory(s2);
    time_scatter(t64, random_complex(t64.size(), 7), ImageGrid{64, 64, 64}, GridKernel{}, "gridding 64^3 radial3d KB");
    s2.kind = "radial2d";
    s2.nx = s2.ny = 256;
    s2.nz = 1;
    const Trajectory t2 = make_trajectory(s2);
    time_scatter(t2, random_complex(t2.size(), 8), ImageGrid{256, 256, 1}, GridKernel{}, "gridding 256^2 radial2d KB");
  }
  std::vector<cfloat> gridded;
  const ImageGrid over = oversampled_grid(g, 2.0);
  row("grid_scatter (whole call, KB)", median_ms(3, [&] {
        gridded = gpu::grid_scatter(gpu::on_device(*pts), data, g, over, GridKernel{}, gpu::ScatterMethod::Auto,
                                    gpu::stream_of(*be));
      }),
      "incl. 128 MiB grid download");
  CHECK(finite(gridded));
  std::vector<cfloat> img = gridded;
  row("centered_idft 256^3 (whole call)", median_ms(3, [&] {
        VecPtr v = be->upload(gridded);
        be->kernels<FftKernels>().centered(*v, over, true);
        be->download_into(*v, img);
      }),
      "incl. 128 MiB up and down");
}

TEST_CASE("gpu device at 256^3 with 4M samples: memory plan holds", "[.][gpu][backend-big]") {
  FHD_NEED_GPU();
  // Only the Toeplitz operator, CG and the gridding at full size (FhD and Q at
  // this size take minutes and belong to the kernel benchmarks).
  const ImageGrid g{256, 256, 256};
  auto be = make_gpu_device();
  const auto q = random_complex(g.doubled().voxels(), 4);  // 1 GiB of host Q
  const auto t0 = Clock::now();
  OpPtr op = normal_of(*be, q, g, 1.0);
  auto rhs = be->upload(random_complex(g.voxels(), 5));
  auto x = be->zeros(g.voxels());
  CgOptions cg;
  cg.iters = 3;
  conjugate_gradient(*op, *rhs, *x, cg);
  std::printf("256^3 normal operator + 3 CG iterations: %.1f ms, %s GiB free after\n", ms_since(t0),
              gpu::format_gib(double(gpu::free_device_bytes())).c_str());
  TrajectorySpec spec;
  spec.nx = spec.ny = spec.nz = 256;
  spec.total = std::size_t(4) << 20;
  const Trajectory t = make_trajectory(spec);
  auto pts = be->upload_points(t);
  const auto t1 = Clock::now();
  const auto grid = gpu::grid_scatter(gpu::on_device(*pts), random_complex(t.size(), 6), g, oversampled_grid(g, 2.0),
                                      GridKernel{}, gpu::ScatterMethod::Auto, gpu::stream_of(*be));
  std::printf("256^3 gridding of %zu samples onto 512^3: %.1f ms (incl. 1 GiB download)\n", t.size(),
              ms_since(t1));
  CHECK(finite(grid));
}
