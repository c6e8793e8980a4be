#pragma once
// Output files of a reconstruction: images and the JSON report. Every file is
// written to a temporary name and renamed, so a failed run leaves none half-written.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "recon/pipeline.hpp"

namespace fhd::app {

struct OutputOptions {
  std::string dir = "fhdrecon-out";
  std::string json;  // "" = DIR/report.json
  bool no_images = false;
};

struct OutputPlan {
  std::string dir, json, images_h5, nifti, png;
  bool created_dir = false;  // plan_outputs made DIR (it did not exist before)
};

void add_output_options(CLI::App& cmd, OutputOptions& o);
// Creates DIR (or throws InputError naming it) before any work is done.
OutputPlan plan_outputs(const OutputOptions& o);
void write_outputs(const OutputPlan& plan, const ReconResult& res, const nlohmann::json& report);
// After a failed run: removes DIR again if plan_outputs made it and it is still
// empty, so a failed run leaves nothing behind.
void discard_outputs(const OutputPlan& plan) noexcept;

}  // namespace fhd::app
