// Threads the process may use (recon/device/cpu_threads.hpp) and the CPU backend's
// kept NUFFT plans.
#include <cstdlib>

#include "catch.hpp"
#include "recon/device/device.hpp"
#include "recon/device/cpu_threads.hpp"
#include "recon/gather/direct_sum.hpp"
#include "test_cpu_util.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

using namespace fhd;
using namespace fhd::test;

TEST_CASE("cgroup v2 cpu.max: the quota in CPUs, 0 without a limit", "[cpu]") {
  CHECK(cgroup_v2_quota("max 100000\n") == 0);
  CHECK(cgroup_v2_quota("200000 100000\n") == 2.0);
  CHECK(cgroup_v2_quota("150000 100000") == 1.5);
  CHECK(cgroup_v2_quota("") == 0);
  CHECK(cgroup_v2_quota("garbage") == 0);
  CHECK(cgroup_v2_quota("100000 0") == 0);
}

TEST_CASE("usable_cpus is at least 1; OpenMP's count is lowered to it", "[cpu]") {
  const int n = usable_cpus();
  CHECK(n >= 1);
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  omp_set_num_threads(n + 3);  // as if libgomp had counted more CPUs than the quota allows
  const int after = size_openmp_to_process();
  if (std::getenv("OMP_NUM_THREADS")) {
    CHECK(after == n + 3);  // the user's choice stands
  } else {
    CHECK(after == n);
    CHECK(omp_get_max_threads() == n);
  }
  omp_set_num_threads(before);
#endif
}

// A plan's NUFFT operator makes its CPU plan once and serves every call,
// adjoint and forward, in any order, as the float64 sums give them.
TEST_CASE("cpu device: the plan's NUFFT plan is made once and serves every call", "[cpu]") {
  auto be = make_cpu_device();
  const ImageGrid g{12, 10, 8};
  const Trajectory traj = random_trajectory(2000, g, 61);
  PlanOptions po;
  po.fhd.method = FhdMethod::Nufft;
  po.fhd.nufft_tol = 1e-6;
  auto plan = Plan::make(*be, traj, g, po);
  for (int call = 0; call < 3; ++call) {
    const std::vector<cfloat> mu = random_complex(traj.size(), 62 + call), x = random_complex(g.voxels(), 70 + call);
    INFO("call " << call);
    CHECK(rel_l2(plan->fhd(mu), fhd_reference(traj, mu, g)) < 3e-6);
    CHECK(rel_l2(plan->forward_model(x), forward_reference(traj, x, g)) < 3e-6);
  }
  CHECK(plan->counts().nufft_plans == 1);
  CHECK_THROWS(plan->forward_model(std::vector<cfloat>(g.voxels() + 1)));
}
