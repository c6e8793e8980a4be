#include "app/device.hpp"

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#ifdef FHD_HAVE_CUDA
#include "cuda/gpu_backend.hpp"
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

std::unique_ptr<Backend> select_backend(const std::string& device) {
  std::string why;
  if (device == "cpu") return make_cpu_backend();
  bool gpu = gpu_available(&why);
  if (device == "gpu" && !gpu) throw DeviceError("--device gpu: no usable GPU: " + why);
  if (gpu) {
#ifdef FHD_HAVE_CUDA
    spdlog::info("device: GPU {}", why);
    return make_gpu_backend(0);
#endif
  }
  spdlog::info("device: CPU (no usable GPU: {})", why);
  return make_cpu_backend();
}

}  // namespace fhd::app
