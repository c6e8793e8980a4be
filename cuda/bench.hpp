#pragma once
// `fhdrecon bench`: the kernel ladder at one problem size. Times each variant
// (median of reps after a warm-up, device events, rotating among input sets
// so caches do not flatter), reports pairs/s against the SFU and FP32
// ceilings read off the device, registers and occupancy of its main kernel,
// and the relative error against float64 on a random subset of voxels.
// Plain data out: app/cmd_bench.cpp prints, writes JSON and the PNG.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cuda/fhd_kernels.hpp"

namespace fhd::gpu {

struct DeviceInfo {
  std::string name;
  int sms = 0;
  double clock_hz = 0;      // peak SM clock (cudaDevAttrClockRate)
  double sfu_ceiling = 0;   // pairs/s: SMs * 16 SFU lanes * clock / 2 MUFU ops per pair
  double fp32_ceiling = 0;  // pairs/s: SMs * 128 FP32 lanes * clock / 8 ops per pair
  int max_threads_per_sm = 0;
};
// Throws DeviceError("bench: no usable GPU: <why>") when there is none.
DeviceInfo device_info(const char* who = "bench");

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

BenchResult run_bench(const BenchOptions& opt, const std::function<void(const BenchRow&)>& progress = {});

// ---- shared with tune -------------------------------------------------------
// Random samples on the device, `sets` independent copies (freed on scope exit).
class BenchInputs {
 public:
  BenchInputs(std::size_t m, int sets, int n, std::uint64_t seed);
  ~BenchInputs();
  BenchInputs(const BenchInputs&) = delete;
  BenchInputs& operator=(const BenchInputs&) = delete;
  SampleSet set(int i, std::size_t m) const;  // the first m samples of set i
  int sets() const { return int(kx_.size()); }
  // Host copies of set 0 (for the float64 check).
  std::vector<float> hkx, hky, hkz;
  std::vector<float> hw;  // interleaved re, im

 private:
  std::vector<float*> kx_, ky_, kz_;
  std::vector<float2*> w_;
};

// Median wall time (ms) of `reps` runs after one warm-up run, rotating input
// sets; min and max too. Throws what the launch throws.
struct Timing {
  double median = 0, min = 0, max = 0;
};
Timing time_variant(const KernelVariant& v, const BenchInputs& in, std::size_t m, const OutGrid& g,
                    float2* out, TrigMode trig, const LaunchConfig& cfg, int reps);

// Registers per thread and occupancy of the last launch's main kernel.
void last_launch_resources(const DeviceInfo& dev, int* registers, double* occupancy);

// ||out - ref|| / ||ref|| over `count` random points of g, ref in float64 on the CPU.
double subset_relerr(const BenchInputs& in, std::size_t m, const OutGrid& g, const float2* out_dev,
                     int count, std::uint64_t seed);

}  // namespace fhd::gpu
