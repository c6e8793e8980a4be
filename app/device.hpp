#pragma once
#include <memory>
#include <string>

#include "recon/backend.hpp"

namespace fhd::app {

// --device auto|cpu|gpu. auto takes a usable GPU and says which, else the CPU
// and says why; gpu without a usable one throws DeviceError.
std::unique_ptr<Backend> select_backend(const std::string& device);

// One line on why no GPU can be used, or the GPU's description.
bool gpu_available(std::string* why);

}  // namespace fhd::app
