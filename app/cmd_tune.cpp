// `fhdrecon tune`: search a kernel's launch parameters on this GPU and keep
// the best in a profile the GPU backend reads (through app/device.hpp).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "app/option_checks.hpp"
#include "app/commands.hpp"
#include "app/device.hpp"
#include "app/recon_options.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

struct TuneArgs {
  std::string kernel = "coarsened";
  std::string trig = "sfu";
  int matrix = 128;
  std::size_t samples = 1 << 20;
  bool ignore_profile = false;
  std::string cache_dir;
};

std::string show(const LaunchConfig& c) {
  return fmt::format("threads {} unroll {} coarsen {} tile {}", c.threads, c.unroll, c.coarsen, c.tile);
}

void run(const TuneArgs& a) {
  TuneOptions o;
  o.kernel = a.kernel;
  o.trig = parse_trig(a.trig);
  o.matrix = a.matrix;
  o.samples = a.samples;
  o.ignore_profile = a.ignore_profile;
  o.cache_dir = a.cache_dir;
  const bool quiet = global_options().quiet;
  const auto r = run_tune(o, [&](const std::string& s) {
    if (!quiet) fmt::print(stderr, "  {}\n", s);
  });
  if (r.from_profile) {
    fmt::print("{} / {} on {}: profile {} already holds {} (--ignore-profile to search again)\n", r.kernel,
               a.trig, r.gpu, r.profile_path, show(r.best));
    return;
  }
  fmt::print("{} / {} on {}, {}^3 x {} samples: {} configs, {} invalid, {:.0f} s\n", r.kernel, a.trig, r.gpu,
             a.matrix, a.samples, r.tried, r.invalid, r.seconds);
  for (const auto& [c, ms] : r.finalists) fmt::print("  finalist {}: {:.3f} ms\n", show(c), ms);
  fmt::print("heuristic default: {:.3f} ms, {:.3f} T pairs/s\n", r.heuristic_ms, r.heuristic_pairs_per_s / 1e12);
  fmt::print("best: {}: {:.3f} ms, {:.3f} T pairs/s, gain x{:.3f}\n", show(r.best), r.best_ms,
             r.best_pairs_per_s / 1e12, r.heuristic_ms / r.best_ms);
  fmt::print("profile: {}\n", r.profile_path);
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto a = std::make_shared<TuneArgs>();
  auto* cmd = app.add_subcommand("tune", "search a kernel's launch parameters on this GPU and save a profile");
  cmd->add_option("--kernel", a->kernel, "variant to tune (see `bench`)")->capture_default_str();
  cmd->add_option("--trig", a->trig, "double | single | sfu")
      ->check(CLI::IsMember({"double", "single", "sfu"}))
      ->capture_default_str();
  cmd->add_option("--matrix", a->matrix, "N: N^3 voxels")->check(CLI::Range(8, 1024))->capture_default_str();
  cmd->add_option("--samples", a->samples, "random samples")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_flag("--ignore-profile", a->ignore_profile, "search even if a valid profile entry exists");
  cmd->add_option("--cache-dir", a->cache_dir, "profile directory (default ~/.cache/fhdrecon)")
      ->check(non_empty_path());
  cmd->callback([a] { run(*a); });
}

}  // namespace fhd::app
