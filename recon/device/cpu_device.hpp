#pragma once
// The CPU backend's vector type, shared by its Toeplitz operator and tests.
// make_cpu_backend() itself is declared in recon/device/device.hpp.
#include <vector>

#include "recon/device/device.hpp"

namespace fhd {

// A backend vector in host memory.
class CpuVector : public BackendVector {
 public:
  explicit CpuVector(std::vector<cfloat> v) : data(std::move(v)) {}
  std::size_t size() const override { return data.size(); }
  std::vector<cfloat> data;
};

// The CpuVector behind v; throws std::invalid_argument for another backend's vector.
CpuVector& as_cpu(BackendVector& v);
const CpuVector& as_cpu(const BackendVector& v);

}  // namespace fhd
