// Uploads through the GPU device's pinned chunks (cuda/device/staged_upload.hpp):
// sizes below, at and past the staged threshold, a tail shorter than a chunk,
// and back-to-back uploads whose host memory is reused at once (a chunk must
// not be refilled before its previous copy has left).
#include <vector>

#include "catch.hpp"
#include "cuda/device/gpu_device.hpp"
#include "test_backend_util.hpp"

using namespace fhd;

namespace {

std::vector<cfloat> ramp(std::size_t n, float offset) {
  std::vector<cfloat> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = cfloat(float(i % 100003) + offset, -float(i % 7919));
  return v;
}

}  // namespace

TEST_CASE("gpu uploads arrive whole, staged or not", "[gpu][upload]") {
  FHD_NEED_GPU();
  auto dev = make_gpu_device();
  constexpr std::size_t chunk = (std::size_t(2) << 20) / sizeof(cfloat);  // values per 2 MB chunk
  for (std::size_t n : {std::size_t(1), chunk, 2 * chunk - 1, 2 * chunk, 3 * chunk + 12345, 7 * chunk}) {
    const std::vector<cfloat> host = ramp(n, 0.5f);
    VecPtr v = dev->upload(host);
    CHECK(dev->download(*v) == host);
  }
}

TEST_CASE("gpu uploads back to back from one reused host buffer", "[gpu][upload]") {
  FHD_NEED_GPU();
  auto dev = make_gpu_device();
  const std::size_t n = 5 * ((std::size_t(2) << 20) / sizeof(cfloat)) + 77;
  std::vector<cfloat> host = ramp(n, 0.f);
  std::vector<VecPtr> copies;
  for (int k = 0; k < 4; ++k) {
    for (std::size_t i = 0; i < n; ++i) host[i] = cfloat(float(k), float(i % 1009));  // overwritten at once
    copies.push_back(dev->upload(host));
  }
  for (int k = 0; k < 4; ++k) {
    const std::vector<cfloat> back = dev->download(*copies[k]);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += back[i] != cfloat(float(k), float(i % 1009));
    CHECK(wrong == 0);
  }
}
