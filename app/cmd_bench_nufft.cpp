// `fhdrecon bench-nufft`: the NUFFT's table, on the GPU (app/device.hpp) or
// the CPU (app/nufft_bench_cpu.hpp), with the goals beside the rows they apply
// to, and optionally JSON.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "app/device.hpp"
#include "app/nufft_bench_cpu.hpp"
#include "app/nufft_report.hpp"
#include "app/option_checks.hpp"
#include "io/atomic_file.hpp"
#include "io/text_outputs.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

struct BenchNufftArgs {
  std::string device = "auto";
  int matrix = 128;
  std::size_t samples = 1 << 20;
  std::string points = "uniform";
  int spokes = 6000, readout = 256;
  int reps = 10;
  int check = 200;
  bool sweep = false;
  bool no_q = false;
  int transforms = 1;
  std::string spread = "auto";
  std::vector<double> tols{1e-5, 1e-6};
  std::vector<double> sigmas{2.0};
  std::string json, points_out;
};

// 1 .. 2^30, a trajectory's bound: above it the count wrapped into the
// trajectory's spokes ("spokes = -1").
const CLI::Validator& sample_count() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        if (number_in(1, 1073741824.0)(s).empty()) return "";
        return "must be in 1 .. 2^30 (1073741824), not " + s;
      },
      "1..2^30");
  return v;
}

// auto: the GPU where one is usable, else the CPU (and why, on stderr).
bool use_gpu(const std::string& device, bool quiet) {
  if (device == "cpu") return false;
  if (device == "gpu") return true;
  std::string why;
  if (cuda_built() && gpu_available(&why)) return true;
  if (!quiet) fmt::print(stderr, "bench-nufft: on the CPU ({})\n", cuda_built() ? why : "this build has no CUDA backend");
  return false;
}

void run(const BenchNufftArgs& a) {
  NufftBenchOptions o;
  o.matrix = a.matrix;
  o.samples = a.samples;
  o.points = a.points;
  o.spokes = a.spokes;
  o.readout = a.readout;
  o.reps = a.reps;
  o.check = a.check;
  o.sweep = a.sweep;
  o.q = !a.no_q;
  o.tols = a.tols;
  o.sigmas = a.sigmas;
  o.transforms = a.transforms;
  o.points_out = a.points_out;
  o.spread = a.spread;
  const bool quiet = global_options().quiet;
  const bool gpu = use_gpu(a.device, quiet);
  if (!gpu && a.spread != "auto")
    throw InputError("bench-nufft", "--spread", a.spread, "is for --device gpu only");
  if (!gpu && a.sweep)  // it was ignored, silently
    throw InputError("bench-nufft: --sweep: times the GPU's spreading variants; it is for --device gpu only");
  if (gpu && !a.points_out.empty())
    throw InputError("bench-nufft", "--points-out", a.points_out, "is for --device cpu only");
  if (!a.points_out.empty()) make_parent_dir(a.points_out);
  auto progress = [&](const NufftBenchRow& r) {
    if (!quiet) fmt::print(stderr, "  {} {} tol {:.0e} sigma {} done\n", r.op, r.variant, r.tol, r.sigma);
  };
  const auto res = gpu ? run_nufft_bench(o, progress) : run_cpu_nufft_bench(o, progress);
  print_nufft_table(res);
  if (!a.json.empty()) {
    make_parent_dir(a.json);
    write_json(a.json, nufft_json(res));
  }
}

}  // namespace

void add_bench_nufft_command(CLI::App& app) {
  auto a = std::make_shared<BenchNufftArgs>();
  auto* cmd = app.add_subcommand("bench-nufft", "time the NUFFT (type 1, type 2, Q) against float64, on the GPU or CPU");
  cmd->add_option("--device", a->device, "auto (a usable GPU, else the CPU) | cpu | gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  cmd->add_option("--matrix", a->matrix, "N: N^3 modes")->check(CLI::Range(8, 512))->capture_default_str();
  cmd->add_option("--samples", a->samples, "uniform random points (1 .. 2^30)")
      ->check(sample_count())  // CLI::PositiveNumber printed DBL_MAX's 309 digits
      ->capture_default_str();
  cmd->add_option("--points", a->points, "uniform | radial (3D radial, --spokes x --readout)")
      ->check(CLI::IsMember({"uniform", "radial"}))
      ->capture_default_str();
  cmd->add_option("--spokes", a->spokes, "radial spokes")->check(CLI::Range(1, 10000000))->capture_default_str();
  cmd->add_option("--readout", a->readout, "samples per radial spoke")->check(CLI::Range(2, 65536))->capture_default_str();
  cmd->add_option("--reps", a->reps, "timed runs per row (median)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--check", a->check, "outputs checked against float64")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_flag("--sweep", a->sweep, "GPU: also time the spreading variants (privatization, bins, coarsening)");
  // Checked here: a bad value made every row "failed" and the command exit 0.
  cmd->add_option("--tols", a->tols, "tolerances, comma-separated")
      ->delimiter(',')
      ->check(finite_number())
      ->check(number_in(1e-7, 1e-1))
      ->capture_default_str();
  cmd->add_option("--sigmas", a->sigmas, "upsampling factors (2, 1.25), comma-separated")
      ->delimiter(',')
      ->check(finite_number())
      ->check(number_in(1.25, 4))
      ->capture_default_str();
  cmd->add_flag("--no-q", a->no_q, "skip Q (type 1 onto the doubled grid)");
  cmd->add_option("--transforms", a->transforms,
                  "Also time N transforms (coils) batched in one call against N single calls")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--spread", a->spread, "GPU: spreading of the default rows (auto: the plan's choice | shared | gather | global)")
      ->check(CLI::IsMember({"auto", "shared", "gather", "global"}))
      ->capture_default_str();
  cmd->add_option("--points-out", a->points_out, "CPU: write the points (float32 kx, ky, kz) for scripts/peer_nufft.py");
  cmd->add_option("--json", a->json, "write the table as JSON")->check(non_empty_path());
  cmd->callback([a] { run(*a); });
}

}  // namespace fhd::app
