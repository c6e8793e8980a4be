// The device facade (app/device.hpp): the one file of app/ that includes
// cuda/ headers. Without CUDA every GPU entry point throws what the commands
// said before the facade existed.
#include "app/device.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/error.hpp"
#ifdef FHD_HAVE_CUDA
#include "cuda/gather/bench.hpp"
#include "cuda/device/gpu_device.hpp"
#include "cuda/nufft/nufft_bench.hpp"
#include "cuda/gather/tune.hpp"
#endif

namespace fhd::app {

bool gpu_available(std::string* why) {
#ifdef FHD_HAVE_CUDA
  return gpu_usable(why);
#else
  *why = "this fhdrecon was built without CUDA";
  return false;
#endif
}

void prefer_eager_module_loading() { ::setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0); }

std::future<void> release_backend(std::unique_ptr<Backend> be, const DeviceOptions& options) {
  const bool gpu = be && be->is_gpu();
  std::vector<int> devices = options.gpus.empty() ? std::vector<int>{0} : options.gpus;
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return std::async(std::launch::async, [b = std::move(be), gpu, devices]() mutable {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      b.reset();
#ifdef FHD_HAVE_CUDA
      if (gpu) reset_devices(devices);
#endif
    } catch (const std::exception& e) {
      spdlog::warn("releasing the GPU: {}", e.what());
    }
    spdlog::debug("backend released in {:.3f} s",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  });
}

bool cuda_built() {
#ifdef FHD_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Backend> select_backend(const std::string& device, const DeviceOptions& options, std::string* note) {
  auto say = [note](const std::string& line) {
    if (note)
      *note = line;
    else
      spdlog::info("{}", line);
  };
  std::string why;
  if (device == "cpu") return make_cpu_backend();
  bool gpu = gpu_available(&why);
  if (device == "gpu" && !gpu) throw DeviceError("--device gpu: no usable GPU: " + why);
  if (gpu) {
#ifdef FHD_HAVE_CUDA
    say("device: GPU " + why);
    if (options.gpus.size() > 1) return make_gpu_backend(options.gpus, GpuOptions{options.tune_dir});
    return make_gpu_backend(options.gpus.empty() ? 0 : options.gpus[0], GpuOptions{options.tune_dir});
#endif
  }
  say("device: CPU (no usable GPU: " + why + ")");
  return make_cpu_backend();
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
