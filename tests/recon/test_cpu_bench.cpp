// Throughput of the CPU FhD/Q kernels. Hidden (runs only when named):
//   FHD_BENCH_N=64 FHD_BENCH_M=262144 FHD_BENCH_RUNS="direct:sfu separable:single" \
//     build-cpu/tests_recon "[.cpu-bench]"
// Random k in the Nyquist band of an N^3 grid; prints samples x voxels per second.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/gather/cpu_fhd.hpp"
#include "test_cpu_util.hpp"

using namespace fhd;

namespace {

long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v ? std::atol(v) : fallback;
}

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
