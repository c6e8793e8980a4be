#pragma once
// The device facade: the only part of app/ that knows the CUDA backend exists.
// Everything here takes and returns plain values (core/gpu_reports.hpp); in a
// build without CUDA each GPU entry point throws the DeviceError the commands
// have always given, so the commands themselves carry no #ifdef.
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/gpu_reports.hpp"
#include "recon/device/device.hpp"

namespace fhd::app {

// What the caller chooses for the GPU devices.
struct DeviceOptions {
  std::string tune_dir;  // tuned launch profiles; "" = the default cache root
  std::vector<int> gpus;  // --gpus: several split the exact gather by voxel slabs; empty = GPU 0
};

// The devices a run computes on: the first does everything; further ones
// (--gpus) take slabs of the exact gather (recon/plan/partition.hpp).
struct Devices {
  std::vector<std::unique_ptr<Device>> list;
  Device& main() const { return *list.front(); }
  std::vector<Device*> others() const;
  bool is_gpu() const { return main().is_gpu(); }
  std::string name() const;  // for logs and reports: "gpus 0,1: NVIDIA H100 ..." for several
};

// --device auto|cpu|gpu. auto takes a usable GPU and says which, else the CPU
// and says why; gpu without a usable one throws DeviceError.
// With `note`, the line that says which device was chosen is stored there
// instead of logged (for a caller that logs it later, from its own thread).
Devices select_devices(const std::string& device, const DeviceOptions& options = {}, std::string* note = nullptr);

// The recon command's further GPUs when --gpus is not given (docs/choices.md,
// "Several GPUs"): every other GPU this process may use (visible_gpu_count)
// when the exact gather has so many sample-voxel pairs (`pairs`: voxels x
// samples x coils) that splitting it saves more than the other GPUs' contexts
// cost (about 0.3 s of wall time on the 2-GPU host); else none, GPU 0 alone.
// The NUFFT and SENSE gain less than that at the sizes measured.
std::vector<int> default_more_gpus(const std::string& device, bool exact, double pairs);

// GPUs `more` (side by side), for join_gpus; throws as make_gpu_devices does.
Devices more_gpus(const std::vector<int>& more, const DeviceOptions& options);

// Appends the devices `more` makes (GPUs `ids`, from more_gpus) to `devs`
// when devs is on a GPU, with peer access among them all, and lists them in
// options.gpus for release_devices. A GPU that could not be made is left out
// with a warning: the run goes on with GPU 0.
void join_gpus(Devices& devs, std::future<Devices>& more, const std::vector<int>& ids, DeviceOptions& options);

// Destroys the devices on a thread of its own and, for GPUs, tears the
// process's device contexts down there (gpu reset_devices) while the caller
// writes its outputs, instead of at exit: 0.05-0.1 s of a 1 s GPU run (docs/
// performance.md). The process must not use the GPU afterwards; wait for the
// future before exiting. A failed teardown is logged, never thrown: the
// results are already made.
std::future<void> release_devices(Devices devices, const DeviceOptions& options);

// Before the process's first CUDA call, for a run whose GPU work needs no
// cuBLAS (--fhd nufft): CUDA_MODULE_LOADING=EAGER unless the user set it.
// Lazy loading put 35 ms of module loading inside cmpFhD (the first launch of
// each NUFFT and cuFFT kernel); eager loading does it with the context, beside
// the source, at no cost in wall time (measured on the H100, docs/
// performance.md). Not with cuBLAS: eagerly, its first use loaded every one of
// its kernels (2.4 s).
void prefer_eager_module_loading();

// One line on why no GPU can be used, or the GPU's description. without_context:
// the check a process that computes nothing on the GPU makes (gpu_present).
bool gpu_available(std::string* why, bool without_context = false);

// True when this fhdrecon was built with the CUDA backend (--version says so).
bool cuda_built();

// `bench`: the kernel ladder. tuned: each variant's tuned profile from the
// default directory instead of its defaults (o.config_for is set here).
BenchResult run_kernel_bench(BenchOptions o, bool tuned, const std::function<void(const BenchRow&)>& progress);

// `bench-nufft`: the GPU NUFFT table.
NufftBenchResult run_nufft_bench(const NufftBenchOptions& o,
                                 const std::function<void(const NufftBenchRow&)>& progress);

// `tune`: search one kernel's launch parameters and save the profile
// (o.cache_dir "" = the default cache root).
TuneResult run_tune(const TuneOptions& o, const std::function<void(const std::string&)>& log);

}  // namespace fhd::app
