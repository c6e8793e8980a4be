// kernel_table(): the cmpFhD ladder as data, so the backend, bench, tune and
// the [gpu] tests iterate one list (docs/kernels.md has the measurements).
#include <algorithm>
#include <string>

#include "cuda/gather/fhd_kernels.hpp"
#include "cuda/gather/fhd_launchers.cuh"
#include "core/error.hpp"

namespace fhd::gpu {

LaunchRecord& last_launch() {
  thread_local LaunchRecord record;
  return record;
}

const std::vector<KernelVariant>& kernel_table() {
  static const std::vector<KernelVariant> table = {
      {"scatter-atomic", "one thread per sample, atomicAdd into every voxel", 1, true, {"threads"}, launch_scatter},
      {"gather", "one thread per voxel, k and w from global memory, sum in the output", 2, true, {"threads"}, launch_gather},
      {"registers", "coordinates and accumulators in registers, __ldg broadcasts", 3, true, {"threads"}, launch_registers},
      {"constant-tiles", "samples in __constant__ memory (array of structs), one launch per chunk", 4, true,
       {"threads", "tile"}, launch_constant},
      {"shared-tiles", "sample tiles loaded cooperatively into shared memory", 5, true,
       {"threads", "unroll", "tile"}, launch_tiles},
      {"sfu", "shared tiles + hardware __sincosf after range reduction", 6, true,
       {"threads", "unroll", "tile"}, launch_sfu},
      {"coarsened", "shared tiles, several voxels per thread (interleaved), angle-addition along x", 7, true,
       {"threads", "unroll", "coarsen", "tile"}, launch_coarsened},
      {"separable-fp32", "per-axis phasor tables, complex GEMM in FP32 (cuBLAS)", 8, false,
       {"tile", "coarsen"}, launch_separable_fp32},
      {"separable-tf32", "per-axis phasor tables, complex GEMM on TF32 tensor cores (cuBLAS)", 8, false,
       {"tile"}, launch_separable_tf32},
  };
  return table;
}

const KernelVariant& find_kernel(const std::string& name) {
  const auto& t = kernel_table();
  auto it = std::find_if(t.begin(), t.end(), [&](const KernelVariant& v) { return v.name == name; });
  if (it != t.end()) return *it;
  std::string known;
  for (const auto& v : t) known += (known.empty() ? "" : ", ") + v.name;
  throw InputError("kernel", "name", name, "unknown variant (known: " + known + ")");
}

// Measured on the H100 (docs/kernels.md, 2026-11-21): separable-fp32 is the
// fastest variant within 5e-5 of float64 for both float modes (tf32 is faster
// but lands near 3e-4). Double is the reference mode: its answer must stay
// near float64, which rules out an FP32 GEMM; the coarsened kernel evaluates
// every pair in double there.
std::string default_kernel(TrigMode trig) {
  return trig == TrigMode::Double ? "coarsened" : "separable-fp32";
}

}  // namespace fhd::gpu
