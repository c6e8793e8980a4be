#pragma once
// How many CPU threads this process may use (docs/cpu-backend.md, "Threads
// and load"): the CPUs of its affinity mask, fewer where a cgroup's CPU quota
// (cgroup v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us) allows less.
// A container or Slurm job limited to 2 CPUs on a 64-core host then runs 2
// OpenMP threads, not 64 that take turns.
#include <string>

namespace fhd {

// At least 1.
int usable_cpus();

// The quota in CPUs from the text of a cgroup v2 cpu.max file ("max 100000"
// or "200000 100000"): 0 for no limit or unreadable text. For tests.
double cgroup_v2_quota(const std::string& cpu_max);

// Unless OMP_NUM_THREADS is set: the calling thread's OpenMP thread count
// lowered to usable_cpus() where it is higher (libgomp's default counts the
// affinity mask only). Returns the count now in effect.
int size_openmp_to_process();

}  // namespace fhd
