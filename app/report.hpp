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
  std::string trig, kernel;
  int iters = 0;
  double lambda = 0;
};

// One table: method, PSNR, NRMSE, time; then the time of each stage and
// which stage dominates (the book's Amdahl lesson).
std::string results_table(const ReconResult& r, const RunInfo& info);

nlohmann::json results_json(const ReconResult& r, const RunInfo& info);

}  // namespace fhd::app
