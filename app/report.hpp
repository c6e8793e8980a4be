#pragma once
// The results table (stdout) and the JSON report of one reconstruction.
#include <nlohmann/json.hpp>
#include <string>

#include "recon/pipeline/pipeline.hpp"

namespace fhd::app {

struct RunInfo {
  std::string command;      // the command line as given
  std::string device;       // backend name
  std::string source;       // one-line description of the data
  const ReconOptions* options = nullptr;  // what shaped the result (report.json "options")
  std::size_t samples = 0, coils = 0;     // the scan's samples per coil and its coils
  const Scan* scan = nullptr;  // its first coil as reconstructed: its own /dcf, its provenance (prewhitened, compressed)
};

// One table: method, PSNR, NRMSE, time; then the time of each stage and
// which stage dominates (the book's Amdahl lesson).
std::string results_table(const ReconResult& r, const RunInfo& info);

nlohmann::json results_json(const ReconResult& r, const RunInfo& info);

}  // namespace fhd::app
