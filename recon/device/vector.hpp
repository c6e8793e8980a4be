#pragma once
// A complex float vector where its device computes: host memory for the CPU,
// device memory for a GPU. It owns its memory, or views part of another
// vector's (one coil's samples in a stack), or wraps memory its caller owns
// (a NumPy, CuPy or PyTorch array crosses into the library without a copy).
// Only the device's own code reads data(); solvers go through Device.
#include <cstddef>
#include <memory>

#include "core/types.hpp"

namespace fhd {

class Device;

class DeviceVector {
 public:
  // n elements at data on `device`; `owner` keeps the memory alive (empty: the
  // caller keeps it alive for as long as the vector and its views live).
  DeviceVector(Device& device, cfloat* data, std::size_t n, std::shared_ptr<void> owner = {})
      : device_(&device), data_(data), n_(n), owner_(std::move(owner)) {}
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;

  std::size_t size() const { return n_; }
  cfloat* data() { return data_; }
  const cfloat* data() const { return data_; }
  Device& device() const { return *device_; }

  // Elements [offset, offset + n) on the same memory, alive while this one's is.
  // A view of a const vector is for reading only (the caller's promise).
  std::unique_ptr<DeviceVector> view(std::size_t offset, std::size_t n) const;

 private:
  Device* device_;
  cfloat* data_;
  std::size_t n_;
  std::shared_ptr<void> owner_;
};

using VecPtr = std::unique_ptr<DeviceVector>;

}  // namespace fhd
