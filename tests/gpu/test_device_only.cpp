// Scratch memory only its GPU reaches (cuda/device/device_only.hpp) and copies
// queued between devices (Device::copy). The pool must give memory back
// when a buffer goes (free-memory checks before each allocation rely on it),
// and a queued copy must read its source before the source's device writes it
// again, and be read only after it has landed.
#include <cuda_runtime.h>

#include <vector>

#include "catch.hpp"
#include "cuda/device/device_buffer.hpp"
#include "cuda/device/device_only.hpp"
#include "cuda/device/gpu_device.hpp"
#include "test_backend_util.hpp"

using namespace fhd;

// Both ways device-only memory is made: plain cudaMalloc until peer access
// is on, the device's pool after (note_peer_access stays on for the rest of
// the process: the pool is right for every later test too).
TEST_CASE("device-only memory holds its values and goes back to the device when freed", "[gpu][memory]") {
  FHD_NEED_GPU();
  auto dev = make_gpu_device();  // makes device 0 current
  const std::size_t n = std::size_t(64) << 20;  // 64 Mi floats, 256 MB
  for (const bool peers : {false, true}) {
    CAPTURE(peers);
    if (peers) gpu::note_peer_access();
    const std::size_t before = gpu::free_device_bytes();
    {
      gpu::DeviceBuffer<float> b(n, "a test buffer", gpu::Reach::DeviceOnly);
      REQUIRE(b.size() == n);
      CHECK(b.pooled() == peers);
      CHECK(gpu::free_device_bytes() + n * sizeof(float) <= before + (std::size_t(32) << 20));
      std::vector<float> host(n), back(n);
      for (std::size_t i = 0; i < n; ++i) host[i] = float(i % 65521);
      REQUIRE(cudaMemcpy(b.get(), host.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
      REQUIRE(cudaMemcpy(back.data(), b.get(), n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
      CHECK(back == host);
      gpu::DeviceBuffer<float> moved = std::move(b);  // the move carries how it was made
      CHECK(moved.size() == n);
      CHECK(moved.pooled() == peers);
    }
    CHECK(gpu::free_device_bytes() + (std::size_t(32) << 20) >= before);
  }
}

TEST_CASE("a queued copy between two GPU devices lands before its source is written again", "[gpu][memory]") {
  FHD_NEED_GPU();
  // GPU 0 twice: two devices, two streams, one card (MULTI_GPUS is not needed).
  const std::vector<std::unique_ptr<Device>> devs = make_gpu_devices({0, 0}, {});
  Device& a = *devs[0];
  Device& b = *devs[1];
  const std::size_t n = std::size_t(1) << 22;
  std::vector<cfloat> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = cfloat(float(i % 1013), -float(i % 499));
  VecPtr src = a.upload(host), dst = b.zeros(n);
  for (int round = 0; round < 3; ++round) {
    b.copy(*src, *dst);
    a.axpby(0.0, *src, 2.0, *src);  // queued on a after the copy: doubles src
    std::vector<cfloat> want(host);
    for (cfloat& v : want) v *= float(1 << round);
    CHECK(b.download(*dst) == want);
  }
  CHECK(a.download(*src)[5] == host[5] * 8.0f);
}
