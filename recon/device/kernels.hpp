#pragma once
// Operator families with code of their own per device. A family declares an
// interface (e.g. DiffKernels in recon/ops/diff.hpp) and registers a maker per
// device kind: the CPU's in recon/ops/cpu_kernels.cpp, the GPU's in
// cuda/ops/gpu_kernels.cu (cuda/ builds on recon/, never the reverse). A
// device then makes its instance at first use and keeps it: a GPU family holds
// that device's stream and scratch. So a new operator adds a family and two
// registrations, and the Device interface stays as it is.
#include <functional>
#include <memory>
#include <typeindex>

#include "recon/device/device.hpp"

namespace fhd {

using KernelMaker = std::function<std::shared_ptr<void>(Device&)>;

// Registers (or replaces) the maker of `family` for devices of `kind`.
void register_kernel_maker(std::type_index family, DeviceKind kind, KernelMaker make);

template <class K>
void register_kernels(DeviceKind kind, std::function<std::unique_ptr<K>(Device&)> make) {
  register_kernel_maker(typeid(K), kind, [make](Device& d) -> std::shared_ptr<void> {
    return std::shared_ptr<K>(make(d));
  });
}

// Registers every CPU family (recon/ops/cpu_kernels.cpp); make_cpu_device calls it.
void install_cpu_kernels();

}  // namespace fhd
