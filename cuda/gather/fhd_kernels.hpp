#pragma once
// The cmpFhD kernel family: one table of variants (PMPP's IMPATIENT MRI ladder)
// that the GPU backend, `bench`, `tune` and the [gpu] tests all iterate.
// Q is the same gather with |Phi|^2 as weights on the doubled grid.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/launch_config.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::gpu {

using fhd::LaunchConfig;  // core/launch_config.hpp, also the tuner's profile entries

// Samples on the device, structure of arrays. w = Mu for FhD, |Phi|^2 + 0i for Q.
struct SampleSet {
  const float* kx = nullptr;
  const float* ky = nullptr;
  const float* kz = nullptr;
  const float2* w = nullptr;
  std::size_t m = 0;
};

// Output grid of lx*ly*lz points (x fastest) whose coordinates are
// x_i = (i - l/2) / n per axis (recon/problem/scan.hpp axis_coord): l = n for FhD,
// l = 2n (or 1) for Q.
struct OutGrid {
  int lx = 1, ly = 1, lz = 1;
  int nx = 1, ny = 1, nz = 1;
  std::size_t points() const { return std::size_t(lx) * ly * lz; }
};

using LaunchFn = void (*)(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                          const LaunchConfig& cfg, cudaStream_t stream);

struct KernelVariant {
  std::string name;                   // "scatter-atomic", "gather", ..., "separable-tf32"
  std::string summary;                // one line for tables
  int step = 0;                       // position on the book's ladder, 1..8
  bool direct = true;                 // per-pair sum (1-7) or separable GEMM (8)
  std::vector<std::string> tunables;  // LaunchConfig fields that matter: "threads", "unroll", ...
  // out = sum_m w_m exp(+i 2 pi k_m . x) over all samples (overwrites out).
  // Handles any m (streams samples in chunks) and any number of points
  // (slabs beyond one launch's grid). Asynchronous on `stream`; every launch checked.
  LaunchFn launch = nullptr;
};

const std::vector<KernelVariant>& kernel_table();
// Throws InputError naming the unknown variant and listing the known ones.
const KernelVariant& find_kernel(const std::string& name);
// The backend's default: the fastest variant whose accuracy holds for `trig`.
std::string default_kernel(TrigMode trig);

}  // namespace fhd::gpu
