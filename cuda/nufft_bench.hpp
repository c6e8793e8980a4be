#pragma once
// `fhdrecon bench-nufft`: the GPU NUFFT (cuda/nufft.hpp) timed at the issue's
// sizes. Type 1, type 2 and Q per tolerance and upsampling: plan time, median
// execute time (device events, warm-up first, input sets rotated), equivalent
// pairs/s (modes x points / time) and the relative error against a float64
// direct sum on a random subset of outputs. Optionally a sweep of the
// spreading/interpolation choices (privatization, bin size, coarsening).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda/nufft.hpp"

namespace fhd::gpu {

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
};

struct NufftBenchRow {
  std::string op;       // type1 | type2 | q
  std::string variant;  // spreading choices, "default" for the plan's defaults
  double tol = 0, sigma = 0;
  int width = 0;
  ImageGrid fine;
  std::size_t points = 0;
  double plan_ms = 0;   // plan + set_points
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

NufftBenchResult run_nufft_bench(const NufftBenchOptions& opt,
                                 const std::function<void(const NufftBenchRow&)>& progress = {});

}  // namespace fhd::gpu
