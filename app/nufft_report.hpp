#pragma once
// The GPU NUFFT's benchmark table (stdout) and JSON, with issue 9's goals
// beside the rows they apply to.
#include <nlohmann/json.hpp>

#include "core/gpu_reports.hpp"

namespace fhd::app {

void print_nufft_table(const NufftBenchResult& res);
nlohmann::json nufft_json(const NufftBenchResult& res);

}  // namespace fhd::app
