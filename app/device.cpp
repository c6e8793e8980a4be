// The device facade (app/device.hpp): the one file of app/ that includes
// cuda/ headers. Without CUDA every GPU entry point throws what the commands
// said before the facade existed.
#include "app/device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "app/batch_workers.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#ifdef FHD_HAVE_CUDA
#include "cuda/gather/bench.hpp"
#include "cuda/device/gpu_device.hpp"
#include "cuda/nufft/nufft_bench.hpp"
#include "cuda/gather/tune.hpp"
#endif

namespace fhd::app {

bool gpu_available(std::string* why, bool without_context) {
#ifdef FHD_HAVE_CUDA
  return without_context ? gpu_present(why) : gpu_usable(why);
#else
  (void)without_context;
  *why = "this fhdrecon was built without CUDA";
  return false;
#endif
}

void prefer_eager_module_loading() { ::setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0); }

std::vector<Device*> Devices::others() const {
  std::vector<Device*> o;
  for (std::size_t i = 1; i < list.size(); ++i) o.push_back(list[i].get());
  return o;
}

std::string Devices::name() const {
  if (list.size() == 1) return main().name();
  std::string ids;
  for (const auto& d : list) {
    const std::string n = d->name();  // "gpu 1: ..."
    ids += (ids.empty() ? "" : ",") + n.substr(4, n.find(':') - 4);
  }
  const std::string first = main().name();
  return "gpus " + ids + first.substr(first.find(':'));
}

std::future<void> release_devices(Devices devs, const DeviceOptions& options) {
  const bool gpu = !devs.list.empty() && devs.is_gpu();
  std::vector<int> devices = options.gpus.empty() ? std::vector<int>{0} : options.gpus;
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return std::async(std::launch::async, [d = std::move(devs), gpu, devices]() mutable {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      d.list.clear();
#ifdef FHD_HAVE_CUDA
      if (gpu) reset_devices(devices);
#endif
    } catch (const std::exception& e) {
      spdlog::warn("releasing the GPU: {}", e.what());
    }
    spdlog::debug("devices released in {:.3f} s",
                  seconds_since(t0));
  });
}

// Splitting the exact gather over n GPUs saves pairs (1 - 1/n) / rate; the
// other contexts cost 0.1-0.2 s of wall time, and a split's set-up some more
// (H100 x2, docs/performance.md: the default 64^3 run 0.74-0.84 s on GPU 0,
// 0.92-0.99 s on both; 128^3 from 1M samples, Q cached, 2.2e12 pairs, 1.39-1.45
// s against 1.52-1.59 s; 192^3 from 2M, 1.5e13 pairs, 4.29-4.55 s against
// 3.39-3.49 s). At an H100's 5.8e12 pairs/s a gain of 0.3 s needs 3.5e12 pairs
// on 2 GPUs.
constexpr double kMorePairsGain = 0.3 * 5.8e12;

std::vector<int> default_more_gpus(const std::string& device, bool exact, double pairs) {
  if (device == "cpu" || !exact || !cuda_built()) return {};
  const std::size_t n = visible_gpu_count();
  if (n < 2 || pairs * (1.0 - 1.0 / double(n)) < kMorePairsGain) return {};
  std::vector<int> more;
  for (std::size_t i = 1; i < n; ++i) more.push_back(int(i));
  return more;
}

Devices more_gpus(const std::vector<int>& more, const DeviceOptions& options) {
  Devices d;
#ifdef FHD_HAVE_CUDA
  d.list = make_gpu_devices(more, GpuOptions{options.tune_dir});
#else
  (void)more, (void)options;
#endif
  return d;
}

void join_gpus(Devices& devs, std::future<Devices>& more, const std::vector<int>& ids, DeviceOptions& options) {
  Devices got;
  try {
    got = more.get();
  } catch (const std::exception& e) {
    if (devs.is_gpu()) spdlog::warn("GPU 0 alone: the host's other GPUs could not be used ({})", e.what());
    return;
  }
  if (got.list.empty() || !devs.is_gpu()) return;
  std::vector<int> all = options.gpus.empty() ? std::vector<int>{0} : options.gpus;
  all.insert(all.end(), ids.begin(), ids.end());
  for (auto& d : got.list) devs.list.push_back(std::move(d));
#ifdef FHD_HAVE_CUDA
  enable_peer_access(all);
#endif
  options.gpus = all;
}

bool cuda_built() {
#ifdef FHD_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

Devices select_devices(const std::string& device, const DeviceOptions& options, std::string* note) {
  auto say = [note](const std::string& line) {
    if (note)
      *note = line;
    else
      spdlog::info("{}", line);
  };
  std::string why;
  Devices d;
  if (device == "cpu") {
    d.list.push_back(make_cpu_device());
    return d;
  }
  bool gpu = gpu_available(&why);
  if (device == "gpu" && !gpu) throw DeviceError("--device gpu: no usable GPU: " + why);
  if (gpu) {
#ifdef FHD_HAVE_CUDA
    say("device: GPU " + why);
    d.list = make_gpu_devices(options.gpus.empty() ? std::vector<int>{0} : options.gpus, GpuOptions{options.tune_dir});
    return d;
#endif
  }
  say("device: CPU (no usable GPU: " + why + ")");
  d.list.push_back(make_cpu_device());
  return d;
}

#ifdef FHD_HAVE_CUDA

BenchResult run_kernel_bench(BenchOptions o, bool tuned, const std::function<void(const BenchRow&)>& progress) {
  if (tuned) {
    const TrigMode trig = o.trig;
    o.config_for = [trig](const std::string& k) { return gpu::tuned_config(k, trig, ""); };
  }
  return gpu::run_bench(o, progress);
}

NufftBenchResult run_nufft_bench(const NufftBenchOptions& o,
                                 const std::function<void(const NufftBenchRow&)>& progress) {
  return gpu::run_nufft_bench(o, progress);
}

TuneResult run_tune(const TuneOptions& o, const std::function<void(const std::string&)>& log) {
  return gpu::run_tune(o, log);
}

#else

BenchResult run_kernel_bench(BenchOptions, bool, const std::function<void(const BenchRow&)>&) {
  throw DeviceError("bench: no usable GPU: this build has no CUDA backend");
}

NufftBenchResult run_nufft_bench(const NufftBenchOptions&, const std::function<void(const NufftBenchRow&)>&) {
  throw DeviceError("bench-nufft: no usable GPU: this build has no CUDA backend");
}

TuneResult run_tune(const TuneOptions&, const std::function<void(const std::string&)>&) {
  throw DeviceError("tune: no usable GPU: this build has no CUDA backend");
}


#endif

}  // namespace fhd::app
