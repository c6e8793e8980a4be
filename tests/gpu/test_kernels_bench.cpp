// Hidden [.bench] / [.tune] cases: the ladder and the tuner on the device
// machine without the CLI (scripts run them by tag; they never run by
// default). Sizes from FHD_BENCH_MATRIX / FHD_BENCH_SAMPLES, output under
// FHD_BENCH_OUT when set.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "bench_util.hpp"
#include "catch.hpp"
#include "cuda/gather/bench.hpp"
#include "cuda/gather/tune.hpp"

namespace {

using fhd::bench::env_or;

fhd::TrigMode env_trig() {
  const char* v = std::getenv("FHD_BENCH_TRIG");
  const std::string s = v ? v : "sfu";
  return s == "double" ? fhd::TrigMode::Double : s == "single" ? fhd::TrigMode::Single : fhd::TrigMode::Sfu;
}

}  // namespace

TEST_CASE("bench ladder", "[.bench]") {
  using namespace fhd::gpu;
  BenchOptions o;
  o.matrix = int(env_or("FHD_BENCH_MATRIX", 128));
  o.samples = std::size_t(env_or("FHD_BENCH_SAMPLES", 1 << 20));
  o.trig = env_trig();
  if (const char* k = std::getenv("FHD_BENCH_KERNELS")) {
    std::string s = k;
    for (std::size_t a = 0, b; a < s.size(); a = b + 1) {
      b = s.find(',', a);
      if (b == std::string::npos) b = s.size();
      if (b > a) o.kernels.push_back(s.substr(a, b - a));
    }
  }
  if (env_or("FHD_BENCH_TUNED", 0)) o.config_for = [&](const std::string& k) { return tuned_config(k, o.trig, ""); };
  const auto r = run_bench(o);
  std::printf("%s: %d SMs %.0f MHz, ceilings SFU %.3f FP32 %.3f T pairs/s; %d^3 x %zu, trig %s\n",
              r.device.name.c_str(), r.device.sms, r.device.clock_hz / 1e6, r.device.sfu_ceiling / 1e12,
              r.device.fp32_ceiling / 1e12, o.matrix, o.samples, fhd::to_string(o.trig));
  for (const auto& row : r.rows) {
    if (!row.error.empty()) {
      std::printf("%-15s failed: %s\n", row.name.c_str(), row.error.c_str());
      continue;
    }
    std::printf("%-15s M=%8zu %9.3f ms [%8.3f..%8.3f] %7.3f T/s %5.1f%%SFU %5.1f%%FP32 regs %3d occ %.2f relerr %.2e\n",
                row.name.c_str(), row.samples, row.ms, row.ms_min, row.ms_max, row.pairs_per_s / 1e12, row.pct_sfu,
                row.pct_fp32, row.registers, row.occupancy, row.relerr);
  }
  std::fflush(stdout);
  CHECK(!r.rows.empty());
}

TEST_CASE("tune one kernel", "[.tune]") {
  using namespace fhd::gpu;
  TuneOptions o;
  o.kernel = std::getenv("FHD_TUNE_KERNEL") ? std::getenv("FHD_TUNE_KERNEL") : "coarsened";
  o.trig = env_trig();
  o.matrix = int(env_or("FHD_BENCH_MATRIX", 128));
  o.samples = std::size_t(env_or("FHD_BENCH_SAMPLES", 1 << 20));
  o.ignore_profile = true;
  const char* out = std::getenv("FHD_BENCH_OUT");
  o.cache_dir = out ? out : "/tmp/fhd-tune";
  const auto r = run_tune(o, [](const std::string& s) { std::printf("  %s\n", s.c_str()); });
  for (const auto& [c, ms] : r.finalists)
    std::printf("  finalist t%d u%d c%d tile%d: %.3f ms\n", c.threads, c.unroll, c.coarsen, c.tile, ms);
  std::printf("%s/%s: %d configs, %d invalid, %.0f s; default %.3f ms %.3f T/s; best t%d u%d c%d tile%d %.3f ms %.3f T/s gain x%.3f\n",
              r.kernel.c_str(), fhd::to_string(o.trig), r.tried, r.invalid, r.seconds, r.heuristic_ms,
              r.heuristic_pairs_per_s / 1e12, r.best.threads, r.best.unroll, r.best.coarsen, r.best.tile, r.best_ms,
              r.best_pairs_per_s / 1e12, r.heuristic_ms / r.best_ms);
  std::fflush(stdout);
  CHECK(r.best_ms > 0);
}
