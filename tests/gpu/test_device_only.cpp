// Memory from the device's pools (cuda/device/pools.hpp) and copies queued
// between devices (Device::copy). A pool keeps what is freed for the next
// allocation, yet free-memory checks before each allocation must count it
// free, and a trim must give it back to the device; a queued copy must read
// its source before the source's device writes it again, and be read only
// after it has landed.
#include <cuda_runtime.h>

#include <vector>

#include "catch.hpp"
#include "cuda/device/device_buffer.hpp"
#include "cuda/device/gpu_device.hpp"
#include "cuda/device/pools.hpp"
#include "test_backend_util.hpp"

using namespace fhd;

namespace {

constexpr std::size_t kSlack = std::size_t(32) << 20;

// cudaMemGetInfo's free alone, which counts idle pool memory as taken.
std::size_t device_free() {
  std::size_t free = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
  return free;
}

}  // namespace

// Both ways memory is made: plain cudaMalloc until peer access is on, the
// device's pools after (note_peer_access stays on for the rest of the
// process: the pools are right for every later test too). Both reaches.
TEST_CASE("pooled memory holds its values, counts as free when idle, is reused and trimmed", "[gpu][memory]") {
  FHD_NEED_GPU();
  auto dev = make_gpu_device();  // makes device 0 current
  const std::size_t n = std::size_t(64) << 20;  // 64 Mi floats, 256 MB
  const std::size_t bytes = n * sizeof(float);
  for (const bool peers : {false, true}) {
    if (peers) gpu::note_peer_access(0, 0);  // one GPU: turns the pools on, maps nothing
    for (const bool device_only : {true, false}) {
      CAPTURE(peers, device_only);
      const gpu::Reach reach = device_only ? gpu::Reach::DeviceOnly : gpu::Reach::Peers;
      gpu::trim_pools();
      const std::size_t before = gpu::free_device_bytes(), raw_before = device_free();
      {
        gpu::DeviceBuffer<float> b(n, "a test buffer", reach);
        REQUIRE(b.size() == n);
        CHECK(b.pooled() == peers);
        CHECK(gpu::free_device_bytes() + bytes <= before + kSlack);
        std::vector<float> host(n), back(n);
        for (std::size_t i = 0; i < n; ++i) host[i] = float(i % 65521);
        REQUIRE(cudaMemcpy(b.get(), host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
        REQUIRE(cudaMemcpy(back.data(), b.get(), bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(back == host);
        gpu::DeviceBuffer<float> moved = std::move(b);  // the move carries how it was made
        CHECK(moved.size() == n);
        CHECK(moved.pooled() == peers);
      }
      CHECK(gpu::free_device_bytes() + kSlack >= before);  // idle pool memory counts as free
      if (peers) {
        const std::size_t kept = device_free();
        CHECK(kept + bytes <= raw_before + kSlack);  // the pool kept it
        gpu::DeviceBuffer<float> again(n, "a second test buffer", reach);
        CHECK(again.pooled());
        CHECK(device_free() + kSlack >= kept);  // the same memory again: no new pages
      }
      gpu::trim_pools();
      CHECK(device_free() + kSlack >= raw_before);  // back to the device
    }
  }
}

TEST_CASE("a queued copy between two GPU devices lands before its source is written again", "[gpu][memory]") {
  FHD_NEED_GPU();
  // GPU 0 twice: two devices, two streams, one card (MULTI_GPUS is not needed).
  const std::vector<std::unique_ptr<Device>> devs = make_gpu_devices({0, 0}, {});
  // As between two GPUs (a GPU listed twice is no peer of its own): vectors
  // from now on come from the Peers pool.
  gpu::note_peer_access(0, 0);
  {
    gpu::DeviceBuffer<float2> probe(16, "a probe");
    CHECK(probe.pooled());
  }
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
  VecPtr back = a.zeros(n);  // and the other way
  a.copy(*dst, *back);
  std::vector<cfloat> want(host);
  for (cfloat& v : want) v *= 4.0f;
  CHECK(a.download(*back) == want);
}
