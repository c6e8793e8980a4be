// Threads this process may use (see cpu_threads.hpp).
#include "recon/device/cpu_threads.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fhd {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return f ? s.str() : std::string();
}

int affinity_cpus() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

// The paths of this process's cgroup from /proc/self/cgroup: the v2 path
// ("0::/a/b") and the v1 path of the cpu controller ("4:cpu,cpuacct:/a/b").
void cgroup_paths(std::string& v2, std::string& v1) {
  std::istringstream lines(read_text("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
    if (line.compare(0, a, "0") == 0 && controllers == ",,") v2 = line.substr(b + 1);
    if (controllers.find(",cpu,") != std::string::npos) v1 = line.substr(b + 1);
  }
}

// The tightest quota on the path and its parents (a parent's limit holds for
// its children); 0 = none.
template <class ReadQuota>
double tightest(std::string path, ReadQuota read) {
  double best = 0;
  for (;;) {
    const double q = read(path);
    if (q > 0 && (best == 0 || q < best)) best = q;
    if (path.empty() || path == "/") break;
    const auto cut = path.find_last_of('/');
    path = cut == 0 || cut == std::string::npos ? "/" : path.substr(0, cut);
  }
  return best;
}

double cgroup_quota() {
  std::string v2, v1;
  cgroup_paths(v2, v1);
  double q = 0;
  if (!v2.empty())
    q = tightest(v2, [](const std::string& p) { return cgroup_v2_quota(read_text("/sys/fs/cgroup" + p + "/cpu.max")); });
  if (q == 0 && !v1.empty())
    for (const char* mount : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
      q = tightest(v1, [mount](const std::string& p) {
        const double quota = std::atof(read_text(std::string(mount) + p + "/cpu.cfs_quota_us").c_str());
        const double period = std::atof(read_text(std::string(mount) + p + "/cpu.cfs_period_us").c_str());
        return quota > 0 && period > 0 ? quota / period : 0.0;
      });
      if (q > 0) break;
    }
  return q;
}

}  // namespace

double cgroup_v2_quota(const std::string& cpu_max) {
  std::istringstream s(cpu_max);
  std::string quota;
  double period = 0;
  if (!(s >> quota >> period) || quota == "max" || period <= 0) return 0;
  const double q = std::atof(quota.c_str());
  return q > 0 ? q / period : 0;
}

int usable_cpus() {
  const int cpus = affinity_cpus();
  const double quota = cgroup_quota();
  if (quota <= 0) return cpus;
  return std::max(1, std::min(cpus, int(std::ceil(quota - 1e-9))));
}

int size_openmp_to_process() {
#ifdef _OPENMP
  if (!std::getenv("OMP_NUM_THREADS")) {
    const int n = usable_cpus();
    if (n < omp_get_max_threads()) omp_set_num_threads(n);
  }
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace fhd
