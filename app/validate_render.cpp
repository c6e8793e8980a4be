// validate's report as a terminal table, Markdown and JSON.
#include <spdlog/fmt/fmt.h>

#include "app/validate.hpp"

namespace fhd::app {
namespace {

std::string opt(const std::optional<double>& v, const char* f) { return v ? fmt::format(f, *v) : "-"; }
std::string verdict(const ValidateCheck& c) { return !c.ran ? "not run" : c.holds ? "holds" : "FAILS"; }
std::string row_time(const ValidateRow& r) { return r.ran ? fmt::format("{:.2f}", r.seconds) : "-"; }

}  // namespace

// The precision column fits its longest name, "sfu, default kernel" (19).
std::string validate_table(const ValidateReport& r) {
  std::string out = fmt::format("validate, preset {}\n", r.preset);
  for (const std::string& d : r.data_sets) out += "data: " + d + "\n";
  out += fmt::format("\n{:<22} {:<19} {:<6} {:<24} {:>9} {:>8} {:>11} {:>9}\n", "method", "precision", "device",
                     "data", "PSNR (dB)", "NRMSE", "FhD relerr", "time (s)");
  out += fmt::format("{:-<22} {:-<19} {:-<6} {:-<24} {:->9} {:->8} {:->11} {:->9}\n", "", "", "", "", "", "", "", "");
  for (const ValidateRow& w : r.rows) {
    if (!w.ran) {
      out += fmt::format("{:<22} {:<19} {:<6} {:<24} not run ({})\n", w.method, w.precision, w.device, w.data,
                         w.not_run);
      continue;
    }
    out += fmt::format("{:<22} {:<19} {:<6} {:<24} {:>9} {:>8} {:>11} {:>9}\n", w.method, w.precision, w.device,
                       w.data, opt(w.psnr, "{:.2f}"), opt(w.nrmse, "{:.4f}"), opt(w.fhd_relerr, "{:.2e}"),
                       row_time(w));
  }
  out += "\nchecks:\n";
  for (const ValidateCheck& c : r.checks) out += fmt::format("  {:<32} {:<8} {}\n", c.name, verdict(c), c.detail);
  return out;
}

std::string validate_markdown(const ValidateReport& r, const std::string& command) {
  std::string out = fmt::format("### validate, preset `{}`\n\n`{}`\n\n", r.preset, command);
  for (const std::string& d : r.data_sets) out += "- data: " + d + "\n";
  out += "\n| method | precision | device | data | PSNR (dB) | NRMSE | FhD relerr | time (s) |\n";
  out += "|---|---|---|---|---:|---:|---:|---:|\n";
  for (const ValidateRow& w : r.rows) {
    if (!w.ran) {
      out += fmt::format("| {} | {} | {} | {} | not run ({}) | | | |\n", w.method, w.precision, w.device, w.data,
                         w.not_run);
      continue;
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", w.method, w.precision, w.device, w.data,
                       opt(w.psnr, "{:.2f}"), opt(w.nrmse, "{:.4f}"), opt(w.fhd_relerr, "{:.2e}"), row_time(w));
  }
  out += "\n| check | result | numbers |\n|---|---|---|\n";
  for (const ValidateCheck& c : r.checks) out += fmt::format("| {} | {} | {} |\n", c.name, verdict(c), c.detail);
  return out;
}

nlohmann::json validate_json(const ValidateReport& r, const std::string& command) {
  using nlohmann::json;
  auto num = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json j;
  j["tool"] = {{"name", "fhdrecon"}, {"version", FHD_VERSION}};
  j["command"] = command;
  j["preset"] = r.preset;
  j["data_sets"] = r.data_sets;
  j["rows"] = json::array();
  for (const ValidateRow& w : r.rows) {
    json row = {{"method", w.method}, {"precision", w.precision}, {"device", w.device}, {"data", w.data},
                {"ran", w.ran}};
    if (!w.ran) row["not_run"] = w.not_run;
    row["psnr_db"] = num(w.psnr);
    row["nrmse"] = num(w.nrmse);
    row["fhd_relerr"] = num(w.fhd_relerr);
    row["seconds"] = w.ran ? json(w.seconds) : json(nullptr);
    j["rows"].push_back(row);
  }
  j["checks"] = json::array();
  for (const ValidateCheck& c : r.checks)
    j["checks"].push_back({{"name", c.name}, {"result", verdict(c)}, {"ran", c.ran}, {"holds", c.holds},
                           {"value", c.value}, {"threshold", c.threshold}, {"detail", c.detail}});
  j["all_hold"] = checks_pass(r.checks);
  return j;
}

}  // namespace fhd::app
