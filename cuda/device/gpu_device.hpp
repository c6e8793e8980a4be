#pragma once
// GPU devices (recon/device/device.hpp) on CUDA: one stream each, vectors in
// device memory, the operator families of cuda/ registered at the first one.
#include <memory>
#include <string>
#include <vector>

#include "recon/device/device.hpp"

namespace fhd {

// True when a CUDA device can be used; `why` gets one line: the device's name
// and free memory, or the reason none is usable (no driver, no device, ...).
bool gpu_usable(std::string* why);
// The same question without making a context (about 0.35 s to make, 0.1 s
// more at exit): the driver, a device, and a compute capability at least the
// lowest this build embeds (its PTX JIT-compiles for newer ones). For a
// process that only hands the work to others (batch's parent); `why` gets the
// device's name or the reason.
bool gpu_present(std::string* why);

// Choices of the GPU device that the caller makes (passed in, never global).
struct GpuOptions {
  std::string tune_dir;  // tuned launch profiles (cuda/gather/tune.hpp); "" = the default cache root
};

// Throws DeviceError when the device cannot be used.
std::unique_ptr<Device> make_gpu_device(int device = 0, const GpuOptions& options = {});
// One per listed CUDA device (--gpus); a device listed twice gives two Device
// objects with streams of their own on one GPU (tests of partitions).
std::vector<std::unique_ptr<Device>> make_gpu_devices(const std::vector<int>& devices, const GpuOptions& options);
// Lets each listed device read and write the others' memory where the link
// allows (make_gpu_devices does it for its own list; a caller that adds
// devices later does it for them all).
void enable_peer_access(const std::vector<int>& devices);

// Tears down this process's context on each device (cudaDeviceReset), which
// otherwise happens at exit. Only when nothing in the process will use those
// GPUs again: every allocation, stream and plan on them is gone after it.
void reset_devices(const std::vector<int>& devices);

}  // namespace fhd
