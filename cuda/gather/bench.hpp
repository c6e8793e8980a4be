#pragma once
// `fhdrecon bench`: the kernel ladder at one problem size. Times each variant
// (median of reps after a warm-up, device events, rotating among input sets
// so caches do not flatter), reports pairs/s against the SFU and FP32
// ceilings read off the device, registers and occupancy of its main kernel,
// and the relative error against float64 on a random subset of voxels.
// Plain data out (core/gpu_reports.hpp): app/cmd_bench.cpp prints, writes
// JSON and the PNG.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/gpu_reports.hpp"
#include "cuda/gather/fhd_kernels.hpp"

namespace fhd::gpu {

using fhd::BenchOptions;
using fhd::BenchResult;
using fhd::BenchRow;
using fhd::DeviceInfo;

// Throws DeviceError("bench: no usable GPU: <why>") when there is none.
DeviceInfo device_info(const char* who = "bench");

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

// ||out - ref|| / ||ref|| over `count` random points of g (an FhD grid), ref the
// float64 fhd_reference of recon/gather/direct_sum.hpp on the CPU.
double subset_relerr(const BenchInputs& in, std::size_t m, const OutGrid& g, const float2* out_dev,
                     int count, std::uint64_t seed);

}  // namespace fhd::gpu
