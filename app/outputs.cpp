#include "app/outputs.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "io/atomic_file.hpp"
#include "io/image_out.hpp"
#include "io/report.hpp"
#include "recon/error.hpp"

namespace fhd::app {

void add_output_options(CLI::App& cmd, OutputOptions& o) {
  cmd.add_option("--out", o.dir, "output directory (images, report)")->capture_default_str();
  cmd.add_option("--json", o.json, "JSON report path (default: OUT/report.json)");
  cmd.add_flag("--no-images", o.no_images, "write only the JSON report");
}

OutputPlan plan_outputs(const OutputOptions& o) {
  const bool existed = std::filesystem::exists(o.dir);
  make_output_dir(o.dir);
  OutputPlan p;
  p.created_dir = !existed;
  p.dir = o.dir;
  p.json = o.json.empty() ? o.dir + "/report.json" : o.json;
  make_parent_dir(p.json);
  if (!o.no_images) {
    p.images_h5 = o.dir + "/images.h5";
    p.nifti = o.dir + "/iterative.nii";
    p.png = o.dir + "/montage.png";
  }
  return p;
}

namespace {

}  // namespace

std::vector<float> magnitude(const std::vector<cfloat>& v) {
  std::vector<float> m(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) m[i] = std::abs(v[i]);
  return m;
}

const MethodResult* find_method(const ReconResult& res, const std::string& name) {
  for (const MethodResult& m : res.methods)
    if (m.name == name) return &m;
  return nullptr;
}

// File-safe dataset names: "band-limited ceiling" -> "band-limited_ceiling".
std::string dataset_name(std::string s) {
  for (char& c : s)
    if (c == ' ') c = '_';
  return s;
}

// Rows of the preview: phantom, iterative, gridding (KB), |iterative| - phantom.
void write_preview(const std::string& path, const ReconResult& res) {
  const MethodResult* it = find_method(res, "iterative");
  const MethodResult* kb = find_method(res, "gridding-kb");
  std::vector<std::vector<float>> rows;
  if (!res.reference.empty()) rows.push_back(res.reference);
  if (it) rows.push_back(magnitude(it->image));
  if (kb) rows.push_back(magnitude(kb->image));
  if (it && !res.reference.empty()) {
    std::vector<float> err = magnitude(it->image);
    for (std::size_t i = 0; i < err.size(); ++i) err[i] = std::abs(err[i] - res.reference[i]);
    rows.push_back(err);
  }
  write_montage_png(path, rows, res.grid);
}

void write_images(const OutputPlan& plan, const ReconResult& res) {
  RealVolumes mag;
  ComplexVolumes cplx;
  for (const MethodResult& m : res.methods) {
    mag[dataset_name(m.name)] = magnitude(m.image);
    cplx[dataset_name(m.name) + "_complex"] = m.image;
  }
  if (!res.reference.empty()) mag["phantom"] = res.reference;
  write_image_h5(plan.images_h5, mag, cplx, res.grid);
  if (const MethodResult* it = find_method(res, "iterative")) write_nifti(plan.nifti, magnitude(it->image), res.grid);
  write_preview(plan.png, res);
  spdlog::info("wrote {}, {}, {}", plan.images_h5, plan.nifti, plan.png);
}


void write_outputs(const OutputPlan& plan, const ReconResult& res, const nlohmann::json& report) {
  nlohmann::json j = report;
  if (!plan.images_h5.empty()) {
    write_images(plan, res);
    j["outputs"] = {{"images", plan.images_h5}, {"nifti", plan.nifti}, {"preview", plan.png}};
  }
  write_json(plan.json, j);
  spdlog::info("wrote {}", plan.json);
}

void discard_outputs(const OutputPlan& plan) noexcept {
  std::error_code ec;
  if (plan.created_dir && std::filesystem::is_empty(plan.dir, ec) && !ec) std::filesystem::remove(plan.dir, ec);
}

}  // namespace fhd::app
