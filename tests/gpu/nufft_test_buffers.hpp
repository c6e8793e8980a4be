#pragma once
// Device buffers for the GPU NUFFT's plan-level tests (batches, the gather):
// a trajectory's k on the device, complex values up and down.
#include <vector>

#include "cuda/device/device_buffer.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::gpu_test {

struct Points3 {
  gpu::DeviceBuffer<float> kx, ky, kz;
};

// kz zero where the trajectory is 2D.
inline Points3 upload_points(const Trajectory& t, cudaStream_t s) {
  Points3 p;
  p.kx.allocate(t.size(), "test points");
  p.ky.allocate(t.size(), "test points");
  p.kz.allocate(t.size(), "test points");
  gpu::upload(t.kx.data(), t.size(), p.kx.get(), s);
  gpu::upload(t.ky.data(), t.size(), p.ky.get(), s);
  std::vector<float> kz = t.kz.size() == t.size() ? t.kz : std::vector<float>(t.size(), 0.f);
  gpu::upload(kz.data(), t.size(), p.kz.get(), s);
  return p;
}

inline gpu::DeviceBuffer<float2> to_device(const std::vector<cfloat>& v, cudaStream_t s) {
  gpu::DeviceBuffer<float2> d(v.size(), "test values");
  gpu::upload(reinterpret_cast<const float2*>(v.data()), v.size(), d.get(), s);
  return d;
}

// n values from offset off.
inline std::vector<cfloat> to_host(const gpu::DeviceBuffer<float2>& d, std::size_t off, std::size_t n,
                                   cudaStream_t s) {
  std::vector<cfloat> v(n);
  gpu::download(d.get() + off, n, reinterpret_cast<float2*>(v.data()), s);
  return v;
}

}  // namespace fhd::gpu_test
