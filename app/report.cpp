#include "app/report.hpp"

#include "app/batch_plan.hpp"  // build_revision

#include <spdlog/fmt/fmt.h>

#include <algorithm>

namespace fhd::app {
namespace {

std::string opt_num(const std::optional<double>& v, const char* fmtstr) {
  return v ? fmt::format(fmtstr, *v) : std::string("-");
}

const StageTime* slowest(const std::vector<StageTime>& stages) {
  auto it = std::max_element(stages.begin(), stages.end(),
                             [](const StageTime& a, const StageTime& b) { return a.seconds < b.seconds; });
  return it == stages.end() ? nullptr : &*it;
}

std::string fhd_method(const ReconOptions& o) {
  return o.fhd.method == FhdMethod::Nufft ? "nufft" : "exact";
}

// How FhD is computed, for the table's device line: the exact gather's trig,
// or the NUFFT's tolerance (a NUFFT run has no trig to name).
std::string fhd_line(const ReconOptions& o) {
  if (o.fhd.method == FhdMethod::Nufft) return fmt::format("fhd nufft (tol {:g})", o.fhd.nufft_tol);
  return std::string("trig ") + to_string(o.fhd.trig);
}

// The options that shaped the result, by the CLI's names (docs/usage.md):
// those of the FhD method used only, and the coils' only with several coils;
// what ran where the flag and the run differ (SENSE never preconditions; a
// scan's own /dcf replaces --dcf's weights).
nlohmann::json options_json(const ReconOptions& o, const ReconResult& r, std::size_t coils, const Scan* scan) {
  nlohmann::json j = {{"fhd", fhd_method(o)}, {"reg", o.reg}, {"iters", o.iters}, {"tol", o.tol},
                      {"precondition", o.precondition && !uses_sense(coils, o)}, {"field_comp", r.field.method},
                      {"lambda", r.lambda_rel}, {"lambda_absolute", r.lambda_abs}, {"lambda_rule", r.lambda_rule}};
  if (o.fhd.method == FhdMethod::Nufft) {
    j["nufft_tol"] = o.fhd.nufft_tol;
  } else {
    j["trig"] = to_string(o.fhd.trig);
    j["kernel"] = o.fhd.kernel;
  }
  if (o.gridding || uses_sense(coils, o))  // the baselines' weights, and SENSE's calibration's
    j["dcf"] = scan && !scan->dcf.empty() ? "file" : o.dcf;
  if (coils > 1) {
    j["coil_combine"] = o.coil_combine;
    if (uses_sense(coils, o)) j["maps"] = o.maps;
  }
  return j;
}

bool sparse_prior(const RunInfo& info) { return info.options && info.options->reg != "l2"; }

// The solver's words for the device line: CG's iterations, or with a sparse
// prior ADMM's after the CG steps that start it (r.cg is then those steps).
std::string solver_words(const ReconResult& r, const RunInfo& info) {
  if (!sparse_prior(info)) return fmt::format("CG {} iterations", r.cg.iters);
  int admm = 0;
  for (const MethodResult& m : r.methods)
    if (m.name == "iterative") admm = m.iters;
  return fmt::format("ADMM {} iterations after {} CG steps", admm, r.cg.iters);
}

}  // namespace

std::string results_table(const ReconResult& r, const RunInfo& info) {
  std::string out;
  const bool automatic = r.lambda_rule.rfind("auto", 0) == 0;
  out += fmt::format("{}\ndevice: {} | {} | {} (lambda {}{:g}, absolute {:.4g})\n", info.source, info.device,
                     info.options ? fhd_line(*info.options) : "", solver_words(r, info), automatic ? "auto: " : "",
                     r.lambda_rel, r.lambda_abs);
  if (automatic) out += fmt::format("lambda {}\n", r.lambda_rule);
  if (r.field.has_map || r.field.method != "none")
    out += fmt::format("field: {}{} | map {:.1f} to {:.1f} Hz over {:.1f} ms\n", r.field.method,
                       r.field.method == "segmented" ? fmt::format(", {} segments", r.field.segments) : "",
                       r.field.min_hz, r.field.max_hz, 1e3 * r.field.readout_s);
  out += "\n";
  out += fmt::format("{:<22} {:>10} {:>9} {:>10} {:>6}\n", "method", "PSNR (dB)", "NRMSE", "time (s)", "iters");
  out += fmt::format("{:-<22} {:->10} {:->9} {:->10} {:->6}\n", "", "", "", "", "");
  for (const MethodResult& m : r.methods)
    out += fmt::format("{:<22} {:>10} {:>9} {:>10.3f} {:>6}\n", m.name, opt_num(m.psnr, "{:.2f}"),
                       opt_num(m.nrmse, "{:.4f}"), m.seconds, m.iters ? std::to_string(m.iters) : "-");
  out += fmt::format("\n{:<22} {:>10}  {}\n", "stage", "time (s)", "note");
  out += fmt::format("{:-<22} {:->10}\n", "", "");
  double total = 0;
  for (const StageTime& s : r.stages) {
    out += fmt::format("{:<22} {:>10.3f}  {}\n", s.name, s.seconds, s.note);
    total += s.seconds;
  }
  out += fmt::format("{:<22} {:>10.3f}\n", "total", total);
  if (const StageTime* top = slowest(r.stages); top && total > 0)
    out += fmt::format("dominant stage: {} ({:.0f}% of the time)\n", top->name, 100 * top->seconds / total);
  return out;
}

nlohmann::json results_json(const ReconResult& r, const RunInfo& info) {
  using nlohmann::json;
  json j;
  j["tool"] = {{"name", "fhdrecon"}, {"version", FHD_VERSION}, {"revision", build_revision()}};
  j["command"] = info.command;
  j["device"] = info.device;
  j["source"] = info.source;
  j["grid"] = {r.grid.nx, r.grid.ny, r.grid.nz};
  j["scan"] = {{"samples", info.samples}, {"coils", info.coils}};
  if (info.scan) {  // the coils' processing (app/source.cpp process_coils): "K of C" when compressed
    const auto& p = info.scan->provenance;
    j["scan"]["prewhitened"] = p.count("prewhitened") && p.at("prewhitened") == "yes";
    if (p.count("virtual_coils")) j["scan"]["virtual_coils"] = p.at("virtual_coils");
  }
  j["options"] = info.options ? options_json(*info.options, r, info.coils, info.scan) : json::object();
  j["methods"] = json::array();
  for (const MethodResult& m : r.methods) {
    json row = {{"name", m.name}, {"seconds", m.seconds}};
    row["psnr_db"] = m.psnr ? json(*m.psnr) : json(nullptr);
    row["nrmse"] = m.nrmse ? json(*m.nrmse) : json(nullptr);
    if (m.psnr_band_limited) row["psnr_band_limited_db"] = *m.psnr_band_limited;
    row["iterations"] = m.iters;
    // The iterative method's stages are timed on the device's timeline; its
    // wall time on the host is beside them, as a check on their sum.
    if (m.name == "iterative" && r.method_wall > 0) row["wall_seconds"] = r.method_wall;
    if (!m.psnr_per_iter.empty()) row["psnr_per_iteration_db"] = m.psnr_per_iter;
    j["methods"].push_back(row);
  }
  j["stages"] = json::array();
  for (const StageTime& s : r.stages) j["stages"].push_back({{"name", s.name}, {"seconds", s.seconds}, {"note", s.note}});
  j["cg"] = {{"iterations", r.cg.iters}, {"converged", r.cg.converged}, {"relative_residuals", r.cg.residuals},
             {"returned_iteration", r.cg.returned}, {"starts_admm", sparse_prior(info)}};
  // Against the phantom, [0] the zero start: shows semi-convergence (null without a phantom).
  j["cg"]["psnr_db"] = r.cg_psnr.empty() ? json(nullptr) : json(r.cg_psnr);
  j["q_cached"] = r.q_cached;
  j["field"] = {{"method", r.field.method}, {"field_map", r.field.has_map}};
  if (r.field.has_map) {
    j["field"]["min_hz"] = r.field.min_hz;
    j["field"]["max_hz"] = r.field.max_hz;
    j["field"]["readout_s"] = r.field.readout_s;
  }
  if (r.field.method == "segmented") {
    j["field"]["segments"] = r.field.segments;
    j["field"]["interpolator_rms_error"] = r.field.interpolator_error;
  }
  return j;
}

}  // namespace fhd::app
