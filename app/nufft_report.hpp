#pragma once
// The NUFFT's benchmark table (stdout) and JSON, with the goals beside the
// rows they apply to: issue 9's on the GPU, issue 25's batching goal on the CPU.
#include <nlohmann/json.hpp>

#include "core/gpu_reports.hpp"

namespace fhd::app {

void print_nufft_table(const NufftBenchResult& res);
nlohmann::json nufft_json(const NufftBenchResult& res);

}  // namespace fhd::app
