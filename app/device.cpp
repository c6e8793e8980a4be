// The device facade (app/device.hpp): the one file of app/ that includes
// cuda/ headers. Without CUDA every GPU entry point throws what the commands
// said before the facade existed.
#include "app/device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

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
