#pragma once
// What the GPU benchmarks and the tuner take and give back: plain data, no
// CUDA types. cuda/ fills them (bench.hpp, nufft_bench.hpp, tune.hpp); the CLI
// reaches them through app/device.hpp and prints them, so app/ never needs a
// CUDA header to read a result.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/launch_config.hpp"
#include "core/types.hpp"

namespace fhd {

// ---- `fhdrecon bench`: the cmpFhD kernel ladder
struct DeviceInfo {
  std::string name;
  int sms = 0;
  double clock_hz = 0;      // peak SM clock (cudaDevAttrClockRate)
  double sfu_ceiling = 0;   // pairs/s: SMs * 16 SFU lanes * clock / 2 MUFU ops per pair
  double fp32_ceiling = 0;  // pairs/s: SMs * 128 FP32 lanes * clock / 8 ops per pair
  int max_threads_per_sm = 0;
};

struct BenchOptions {
  int matrix = 128;                // N per axis (3D N^3)
  std::size_t samples = 1 << 20;   // random k in [-N/2, N/2)^3
  TrigMode trig = TrigMode::Sfu;
  std::vector<std::string> kernels;  // empty = all
  int reps = 5;
  int input_sets = 3;
  int check_voxels = 2048;
  std::uint64_t seed = 1;
  // Slow rungs run on fewer samples so the ladder fits a lease: at most this
  // many (sample, voxel) pairs per run (0 = always the full size). The rate
  // per pair does not depend on M once M fills the sweep.
  double slow_pair_budget = 6.9e10;
  std::function<LaunchConfig(const std::string&)> config_for;  // e.g. tuned_config; null = defaults
};

struct BenchRow {
  std::string name;
  int step = 0;
  bool direct = true;
  LaunchConfig cfg;
  std::size_t samples = 0;  // samples actually used (see slow_pair_budget)
  double ms = 0, ms_min = 0, ms_max = 0;
  double pairs_per_s = 0;
  double pct_sfu = 0, pct_fp32 = 0;
  int registers = 0;
  double occupancy = 0;  // active warps / max warps per SM of the main kernel
  double relerr = 0;
  std::string error;  // non-empty: the variant failed, the rest is unset
};

struct BenchResult {
  DeviceInfo device;
  BenchOptions options;
  std::size_t points = 0;
  std::vector<BenchRow> rows;
};

// ---- `fhdrecon bench-nufft`
struct NufftBenchOptions {
  int matrix = 128;               // N: N^3 modes
  std::size_t samples = 1 << 20;  // uniform random points (points == "uniform")
  std::string points = "uniform"; // uniform | radial (3D radial, spokes x readout)
  int spokes = 6000, readout = 256;
  std::vector<double> tols{1e-5, 1e-6};
  std::vector<double> sigmas{2.0};
  int reps = 10;
  int check = 200;   // outputs (or points) checked against float64
  bool sweep = false;  // also time the method/bin/coarsening variants at the last tolerance, sigma 2
  bool q = true;       // time Q (type 1 onto the doubled grid) too
  std::uint64_t seed = 1;
  // CPU only: also time this many transforms batched in one call against as
  // many single calls (each its own plan, as coil-by-coil code did), and
  // write the points (float32 kx, then ky, then kz) for a peer to time.
  int transforms = 1;
  std::string points_out;
  // GPU only: the default rows' spreading (auto | shared | gather | global).
  std::string spread = "auto";
};

struct NufftBenchRow {
  std::string op;       // type1 | type2 | q
  std::string variant;  // spreading choices, "default" for the plan's defaults
  double tol = 0, sigma = 0;
  int width = 0;
  ImageGrid fine;
  std::size_t points = 0;
  double plan_ms = 0;   // plan + set_points (GPU); plan alone where setpts_ms >= 0 (CPU)
  double setpts_ms = -1;  // set_points apart (CPU)
  double total_ms = 0;    // plan + set_points + execute (median of the sums; CPU)
  double reuse_ms = -1;   // execute again on the same plan (CPU)
  int transforms = 1;     // transforms per row (CPU batched rows)
  double ms = 0, ms_min = 0, ms_max = 0;
  double pairs_per_s = 0;
  double relerr = 0;
  std::string error;
};

struct NufftBenchResult {
  std::string device;
  NufftBenchOptions options;
  std::vector<NufftBenchRow> rows;
};

// ---- `fhdrecon tune`
struct TuneOptions {
  std::string kernel = "coarsened";
  TrigMode trig = TrigMode::Sfu;
  int matrix = 128;
  std::size_t samples = 1 << 20;
  std::size_t screen_samples = 1 << 15;  // samples per config in the sweep
  int finalists = 5;                     // re-timed at full size
  int reps = 3;
  bool ignore_profile = false;  // search even when a valid profile entry exists
  std::string cache_dir;        // "" = the default profile directory
};

struct TuneResult {
  std::string gpu, kernel, profile_path;
  bool from_profile = false;  // a valid entry existed and --ignore-profile was not given
  int tried = 0, invalid = 0;
  LaunchConfig best, heuristic;
  double best_ms = 0, heuristic_ms = 0;  // full size
  double best_pairs_per_s = 0, heuristic_pairs_per_s = 0;
  double seconds = 0;
  std::vector<std::pair<LaunchConfig, double>> finalists;  // full-size ms
};

}  // namespace fhd
