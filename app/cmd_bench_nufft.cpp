// `fhdrecon bench-nufft`: the GPU NUFFT's table (app/device.hpp) with
// issue 9's goals beside the rows they apply to, and optionally JSON.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "app/device.hpp"
#include "app/nufft_report.hpp"
#include "io/atomic_file.hpp"
#include "io/text_outputs.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

struct BenchNufftArgs {
  int matrix = 128;
  std::size_t samples = 1 << 20;
  std::string points = "uniform";
  int reps = 10;
  int check = 200;
  bool sweep = false;
  bool no_q = false;
  std::vector<double> tols{1e-5, 1e-6};
  std::vector<double> sigmas{2.0};
  std::string json;
};

void run(const BenchNufftArgs& a) {
  NufftBenchOptions o;
  o.matrix = a.matrix;
  o.samples = a.samples;
  o.points = a.points;
  o.reps = a.reps;
  o.check = a.check;
  o.sweep = a.sweep;
  o.q = !a.no_q;
  o.tols = a.tols;
  o.sigmas = a.sigmas;
  const bool quiet = global_options().quiet;
  const auto res = run_nufft_bench(o, [&](const NufftBenchRow& r) {
    if (!quiet) fmt::print(stderr, "  {} {} tol {:.0e} sigma {} done\n", r.op, r.variant, r.tol, r.sigma);
  });
  print_nufft_table(res);
  if (!a.json.empty()) {
    make_parent_dir(a.json);
    write_json(a.json, nufft_json(res));
  }
}

}  // namespace

void add_bench_nufft_command(CLI::App& app) {
  auto a = std::make_shared<BenchNufftArgs>();
  auto* cmd = app.add_subcommand("bench-nufft", "time the GPU NUFFT (type 1, type 2, Q) against float64 (needs a GPU)");
  cmd->add_option("--matrix", a->matrix, "N: N^3 modes")->check(CLI::Range(8, 512))->capture_default_str();
  cmd->add_option("--samples", a->samples, "uniform random points")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--points", a->points, "uniform | radial (3D radial, 6000 spokes x 256)")
      ->check(CLI::IsMember({"uniform", "radial"}))
      ->capture_default_str();
  cmd->add_option("--reps", a->reps, "timed runs per row (median)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--check", a->check, "outputs checked against float64")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_flag("--sweep", a->sweep, "also time the spreading variants (privatization, bins, coarsening)");
  cmd->add_option("--tols", a->tols, "tolerances, comma-separated")->delimiter(',')->capture_default_str();
  cmd->add_option("--sigmas", a->sigmas, "upsampling factors (2, 1.25), comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--no-q", a->no_q, "skip Q (type 1 onto the doubled grid)");
  cmd->add_option("--json", a->json, "write the table as JSON");
  cmd->callback([a] { run(*a); });
}

}  // namespace fhd::app
