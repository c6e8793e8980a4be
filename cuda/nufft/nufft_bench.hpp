#pragma once
// `fhdrecon bench-nufft`: the GPU NUFFT (cuda/nufft/nufft.hpp) timed at the issue's
// sizes. Type 1, type 2 and Q per tolerance and upsampling: plan, set_points
// and first-execute time (medians over fresh plans after a warm-up), the
// phases of one execute, batched against single calls (--transforms), median
// execute time (device events, warm-up first, input sets rotated), equivalent
// pairs/s (modes x points / time) and the relative error against a float64
// direct sum on a random subset of outputs. Optionally a sweep of the
// spreading/interpolation choices (privatization, bin size, coarsening).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/gpu_reports.hpp"
#include "cuda/nufft/nufft.hpp"

namespace fhd::gpu {

using fhd::NufftBenchOptions;
using fhd::NufftBenchResult;
using fhd::NufftBenchRow;

// Options and rows: core/gpu_reports.hpp.
NufftBenchResult run_nufft_bench(const NufftBenchOptions& opt,
                                 const std::function<void(const NufftBenchRow&)>& progress = {});

}  // namespace fhd::gpu
