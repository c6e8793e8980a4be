// `fhdrecon bench`: the cmpFhD kernel ladder (app/device.hpp) as a terminal
// table, a JSON file and a PNG bar chart. Without CUDA or a usable GPU it
// exits with one line (DeviceError).
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/option_checks.hpp"
#include "app/bench_e2e.hpp"
#include "app/commands.hpp"
#include "app/device.hpp"
#include "app/nufft_report.hpp"
#include "app/recon_options.hpp"
#include "io/atomic_file.hpp"
#include "io/bar_chart.hpp"
#include "io/figures.hpp"
#include "io/text_outputs.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

struct BenchArgs {
  int matrix = 128;
  std::size_t samples = 1 << 20;
  std::string trig = "sfu";
  std::string kernels;
  std::string json, png;
  int reps = 5;
  bool tuned = false;
  bool full = false;
  bool no_e2e = false;
  bool no_nufft = false;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void print_table(const BenchResult& r) {
  const auto& d = r.device;
  fmt::print("{} ({} SMs, {:.0f} MHz): ceilings SFU {:.2f} T pairs/s, FP32 {:.2f} T pairs/s\n", d.name, d.sms,
             d.clock_hz / 1e6, d.sfu_ceiling / 1e12, d.fp32_ceiling / 1e12);
  fmt::print("{}^3 voxels x {} samples, trig {}, median of {} reps\n", r.options.matrix, r.options.samples,
             to_string(r.options.trig), r.options.reps);
  fmt::print("{:>2} {:<15} {:>9} {:>10} {:>9} {:>6} {:>6} {:>4} {:>5} {:>9}  {}\n", "#", "variant", "samples", "ms",
             "T pairs/s", "%SFU", "%FP32", "regs", "occ", "relerr", "config t/u/c/tile");
  for (const auto& row : r.rows) {
    if (!row.error.empty()) {
      fmt::print("{:>2} {:<15} failed: {}\n", row.step, row.name, row.error);
      continue;
    }
    fmt::print("{:>2} {:<15} {:>9} {:>10.3f} {:>9.3f} {:>6.1f} {:>6.1f} {:>4} {:>5.2f} {:>9.2e}  {}/{}/{}/{}\n", row.step,
               row.name, row.samples, row.ms, row.pairs_per_s / 1e12, row.pct_sfu, row.pct_fp32, row.registers,
               row.occupancy, row.relerr, row.cfg.threads, row.cfg.unroll, row.cfg.coarsen, row.cfg.tile);
  }
}

nlohmann::json to_json(const BenchResult& r) {
  nlohmann::json j;
  j["device"] = {{"name", r.device.name},
                 {"sms", r.device.sms},
                 {"clock_hz", r.device.clock_hz},
                 {"sfu_ceiling_pairs_per_s", r.device.sfu_ceiling},
                 {"fp32_ceiling_pairs_per_s", r.device.fp32_ceiling}};
  j["problem"] = {{"matrix", r.options.matrix},      {"voxels", r.points},
                  {"samples", r.options.samples},    {"trig", to_string(r.options.trig)},
                  {"reps", r.options.reps},          {"input_sets", r.options.input_sets},
                  {"check_voxels", r.options.check_voxels}};
  j["command"] = command_line();
  j["png_legend"] = "bars left to right in 'rows' order (blue direct, green separable); red line SFU ceiling, "
                    "orange line FP32 ceiling; light grid every 1e12 pairs/s";
  for (const auto& row : r.rows) {
    nlohmann::json x = {{"variant", row.name}, {"step", row.step}, {"direct", row.direct}};
    if (!row.error.empty()) {
      x["error"] = row.error;
    } else {
      x.update({{"samples", row.samples},
                {"ms_median", row.ms},
                {"ms_min", row.ms_min},
                {"ms_max", row.ms_max},
                {"pairs_per_s", row.pairs_per_s},
                {"pct_sfu_ceiling", row.pct_sfu},
                {"pct_fp32_ceiling", row.pct_fp32},
                {"registers", row.registers},
                {"occupancy", row.occupancy},
                {"relerr", row.relerr},
                {"config", {{"threads", row.cfg.threads}, {"unroll", row.cfg.unroll},
                            {"coarsen", row.cfg.coarsen}, {"tile", row.cfg.tile}}}});
    }
    j["rows"].push_back(x);
  }
  return j;
}

// The NUFFT at the ladder's size (same matrix, as many uniform random points),
// its tolerance 1e-6: type 1 (what cmpFhD computes), type 2 and Q, each as
// equivalent sample-voxel pairs per second, with its error against float64.
NufftBenchResult run_nufft_rows(const BenchArgs& a) {
  NufftBenchOptions o;
  o.matrix = a.matrix;
  o.samples = a.samples;
  o.tols = {1e-6};
  o.reps = a.reps;
  const bool quiet = global_options().quiet;
  return run_nufft_bench(o, [&](const NufftBenchRow& r) {
    if (!quiet) fmt::print(stderr, "  nufft {} done\n", r.op);
  });
}

// The ladder as labelled bars (pairs/s; direct kernels blue, separable green)
// against the SFU and FP32 ceilings; a plain bar chart where Cairo is missing.
// The NUFFT rows stay in the table and the JSON: their equivalent rates (about
// 100x the ladder's) would flatten every bar of a linear chart.
void write_ladder_png(const BenchResult& r, const std::string& png) {
  make_parent_dir(png);
  if (!figures_available()) {
    std::vector<ChartBar> bars;
    for (const auto& row : r.rows)
      bars.push_back({row.error.empty() ? row.pairs_per_s : 0.0, row.direct ? Rgb{70, 110, 170} : Rgb{60, 160, 90}});
    write_bar_chart_png(png, bars, {{r.device.sfu_ceiling, {200, 40, 40}}, {r.device.fp32_ceiling, {240, 150, 30}}});
    return;
  }
  std::vector<LabelledBar> bars;
  for (const auto& row : r.rows)
    bars.push_back({row.name + (row.direct ? "" : " (separable)"), row.error.empty() ? row.pairs_per_s : 0.0,
                    row.direct ? Rgb{70, 110, 170} : Rgb{60, 160, 90}});

  write_figure(png, render_bars(bars, {{"SFU ceiling", r.device.sfu_ceiling, {200, 40, 40}},
                                       {"FP32 ceiling", r.device.fp32_ceiling, {220, 130, 20}}},
                                "cmpFhD ladder: " + r.device.name, "sample-voxel pairs per second"));
}

void write_outputs(const BenchResult& r, const NufftBenchResult& nufft, const BenchArgs& a, const nlohmann::json& e2e) {
  if (!a.json.empty()) {
    make_parent_dir(a.json);
    nlohmann::json j = to_json(r);
    if (!nufft.rows.empty()) j["nufft"] = nufft_json(nufft);
    if (!e2e.is_null()) j["end_to_end"] = e2e;
    write_json(a.json, j);
  }
  if (!a.png.empty()) write_ladder_png(r, a.png);
}

void run(const BenchArgs& a) {
  BenchOptions o;
  o.matrix = a.matrix;
  o.samples = a.samples;
  o.trig = parse_trig(a.trig);
  o.kernels = split_list(a.kernels);
  o.reps = a.reps;
  if (a.full) o.slow_pair_budget = 0;
  const bool quiet = global_options().quiet;
  const auto r = run_kernel_bench(o, a.tuned, [&](const BenchRow& row) {
    if (!quiet) fmt::print(stderr, "  {} done\n", row.name);
  });
  print_table(r);
  NufftBenchResult nufft;
  if (!a.no_nufft) {
    nufft = run_nufft_rows(a);
    fmt::print("\n");
    print_nufft_table(nufft);
  }
  nlohmann::json e2e;
  if (!a.no_e2e) e2e = run_end_to_end(a.matrix, a.samples, o.trig, "gpu");
  write_outputs(r, nufft, a, e2e);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "time the cmpFhD kernel ladder on random samples (needs a GPU)");
  cmd->add_option("--matrix", a->matrix, "N: N^3 voxels")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--samples", a->samples, "random k-space samples")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--trig", a->trig, "double | single | sfu")
      ->check(CLI::IsMember({"double", "single", "sfu"}))
      ->capture_default_str();
  cmd->add_option("--kernels", a->kernels, "comma-separated variants (default: all)");
  cmd->add_option("--json", a->json, "write the table as JSON")->check(non_empty_path());
  cmd->add_option("--png", a->png, "write a bar chart of pairs/s with the two ceilings")->check(non_empty_path());
  cmd->add_option("--reps", a->reps, "timed runs per variant (median)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_flag("--tuned", a->tuned, "use each variant's tuned profile (fhdrecon tune) instead of its defaults");
  cmd->add_flag("--full", a->full, "run the slow rungs (1-4) at the full sample count too");
  cmd->add_flag("--no-e2e", a->no_e2e, "skip the end-to-end stage breakdown of a full reconstruction");
  cmd->add_flag("--no-nufft", a->no_nufft, "skip the NUFFT rows (type 1, type 2, Q at tolerance 1e-6)");
  cmd->callback([a] { run(*a); });
}

}  // namespace fhd::app
