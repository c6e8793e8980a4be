#include "app/outputs.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>

#include "io/atomic_file.hpp"
#include "recon/error.hpp"

namespace fhd::app {

void add_output_options(CLI::App& cmd, OutputOptions& o) {
  cmd.add_option("--out", o.dir, "output directory (images, report)")->capture_default_str();
  cmd.add_option("--json", o.json, "JSON report path (default: OUT/report.json)");
  cmd.add_flag("--no-images", o.no_images, "write only the JSON report");
}

OutputPlan plan_outputs(const OutputOptions& o) {
  make_output_dir(o.dir);
  OutputPlan p;
  p.dir = o.dir;
  p.json = o.json.empty() ? o.dir + "/report.json" : o.json;
  make_parent_dir(p.json);
  if (!o.no_images) {
    p.images_h5 = o.dir + "/images.h5";
  }
  return p;
}

namespace {

void write_json_file(const std::string& path, const nlohmann::json& j) {
  AtomicOutput out(path);
  {
    std::ofstream f(out.tmp());
    f << j.dump(2) << "\n";
    if (!f) throw InputError(path, "report", "-", "cannot write");
  }
  out.commit();
}

}  // namespace

void write_outputs(const OutputPlan& plan, const ReconResult& res, const nlohmann::json& report) {
  nlohmann::json j = report;
  write_json_file(plan.json, j);
  spdlog::info("wrote {}", plan.json);
}

}  // namespace fhd::app
