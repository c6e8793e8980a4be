// Throughput of the CPU FhD/Q kernels. Hidden (runs only when named):
//   FHD_BENCH_N=64 FHD_BENCH_M=262144 FHD_BENCH_RUNS="direct:sfu separable:single" \
//     build-cpu/tests_recon "[.cpu-bench]"
// Random k in the Nyquist band of an N^3 grid; prints samples x voxels per second.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "bench_util.hpp"
#include "catch.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/gather/cpu_fhd.hpp"
#include "recon/plan/toeplitz.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;

namespace {

using fhd::bench::env_or;

}  // namespace

TEST_CASE("cpu FhD/Q throughput", "[.cpu-bench]") {
  const int n = int(env_or("FHD_BENCH_N", 64));
  const std::size_t m = std::size_t(env_or("FHD_BENCH_M", 262144));
  const bool q = env_or("FHD_BENCH_Q", 0) != 0;
  const char* runs_env = std::getenv("FHD_BENCH_RUNS");
  const std::string runs = runs_env ? runs_env : "separable:single separable:sfu separable:double";
  const ImageGrid g{n, n, n};
  const Trajectory traj = test::random_trajectory(m, g, 1);
  const std::vector<cfloat> mu = test::random_complex(m, 2);
  std::printf("%s, %s %d^3, M = %zu\n", make_cpu_device()->name().c_str(), q ? "Q on the doubled grid of" : "FhD",
              n, m);
  std::istringstream list(runs);
  for (std::string run; list >> run;) {
    const std::string kernel = run.substr(0, run.find(':')), trig = run.substr(run.find(':') + 1);
    const FhdOptions opt{parse_trig(trig), kernel};
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t points = q ? cpu_q(traj, {}, g, opt).size() : cpu_fhd(traj, mu, g, opt).size();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  %-10s %-7s %8.3f s  %.3g pairs/s\n", kernel.c_str(), trig.c_str(), s, double(points) * m / s);
  }
  CHECK(true);
}

// The Toeplitz pair over C coils: one batched call against C single applies
// (SENSE's CG applies T to every coil each iteration). Hidden:
//   FHD_BENCH_N=64 FHD_BENCH_COILS=8 build/tests_recon "[.toeplitz-bench]"
TEST_CASE("cpu Toeplitz over coils: batched against single applies", "[.toeplitz-bench]") {
  const int n = int(env_or("FHD_BENCH_N", 64)), coils = int(env_or("FHD_BENCH_COILS", 8)), reps = 5;
  const ImageGrid g{n, n, n};
  const std::vector<cfloat> q = test::random_complex(g.doubled().voxels(), 3);
  auto dev = make_cpu_device();
  ToeplitzOperator op(*dev, q, g);
  const std::vector<cfloat> x = test::random_complex(g.voxels() * coils, 4);
  std::vector<cfloat> y(x.size());
  op.apply(x.data(), y.data(), coils);  // plans and buffers made before timing
  for (int c = 0; c < coils; ++c) op.apply(x.data() + c * g.voxels(), y.data() + c * g.voxels());
  std::vector<double> batched, single;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    op.apply(x.data(), y.data(), coils);
    auto t1 = std::chrono::steady_clock::now();
    for (int c = 0; c < coils; ++c) op.apply(x.data() + c * g.voxels(), y.data() + c * g.voxels());
    auto t2 = std::chrono::steady_clock::now();
    batched.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    single.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  std::sort(batched.begin(), batched.end());
  std::sort(single.begin(), single.end());
  std::printf("%s, Toeplitz %d^3 x %d coils: batched %.1f ms, %d single applies %.1f ms (median of %d): %.2fx\n",
              make_cpu_device()->name().c_str(), n, coils, batched[reps / 2], coils, single[reps / 2], reps,
              single[reps / 2] / batched[reps / 2]);
}
