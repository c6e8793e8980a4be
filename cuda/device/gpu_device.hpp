#pragma once
// The GPU backend: implements recon's Backend interface with CUDA, cuFFT and cuBLAS.
#include <memory>
#include <string>
#include <vector>

#include "recon/device/device.hpp"

namespace fhd {

// True when a CUDA device can be used; `why` gets one line: the device's name
// and free memory, or the reason none is usable (no driver, no device, ...).
bool gpu_usable(std::string* why);

// Choices of the GPU backend that the caller makes (passed in, never global).
struct GpuOptions {
  std::string tune_dir;  // tuned launch profiles (cuda/gather/tune.hpp); "" = the default cache root
};

// Throws DeviceError when the device cannot be used.
std::unique_ptr<Backend> make_gpu_backend(int device = 0, const GpuOptions& options = {});

// Several GPUs of one host (--gpus): the exact FhD and Q split into voxel slabs,
// one per listed device, the rest on the first (docs/gpu-backend.md). One
// device gives the plain backend; a device may be listed twice (tests).
std::unique_ptr<Backend> make_gpu_backend(const std::vector<int>& devices, const GpuOptions& options);

// Tears down this process's context on each device (cudaDeviceReset), which
// otherwise happens at exit. Only when nothing in the process will use those
// GPUs again: every allocation, stream and plan on them is gone after it.
void reset_devices(const std::vector<int>& devices);

}  // namespace fhd
