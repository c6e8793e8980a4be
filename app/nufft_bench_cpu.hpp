#pragma once
// `fhdrecon bench-nufft --device cpu`: the CPU NUFFT (recon/nufft/nufft_cpu.hpp) at
// the sizes. Per tolerance: type 1, type 2 and Q, each timed as a
// peer (FINUFFT) is: a fresh plan (make), set_points and the first execute,
// apart and summed (median over the reps), plus a second execute on the same
// plan; and, with transforms > 1, n transforms batched in one call against n
// single calls. The error is against a float64 direct sum on a random subset
// of the outputs (recon/gather/direct_sum.hpp).
#include <functional>

#include "core/gpu_reports.hpp"

namespace fhd::app {

NufftBenchResult run_cpu_nufft_bench(const NufftBenchOptions& o,
                                     const std::function<void(const NufftBenchRow&)>& progress);

}  // namespace fhd::app
