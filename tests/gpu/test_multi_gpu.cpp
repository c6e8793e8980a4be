// The multi-GPU backend (make_gpu_backend with a device list): slabs of the
// exact FhD and of Q's Hermitian half. Listing device 0 two or three times
// runs every slab path on one GPU; the conformance suite holds the rest.
#include "conformance.hpp"
#include "test_backend_util.hpp"

using namespace fhd;

namespace {

// FhD and Q through a plan on `be`.
struct Computed {
  std::vector<cfloat> fhd, q;
};

Computed compute(Device& be, const Trajectory& t, const ImageGrid& g, const std::vector<cfloat>& d) {
  Plan plan(be, t, g, {});
  return {plan.fhd(d), plan.q()};
}

}  // namespace

TEST_CASE("multi-gpu: slabs of FhD and Q equal the single-GPU result (2 and 3 slabs, uneven)", "[gpu][multi]") {
  FHD_NEED_GPU();
  // 3D with nz = 5 (slabs of 3+2 and 2+2+1; Q's half box has 6 slices), 2D with ny = 7.
  for (const ImageGrid& g : {ImageGrid{6, 8, 5}, ImageGrid{12, 7, 1}}) {
    const Trajectory t = test::random_trajectory(3 * g.voxels(), g, 91);
    const std::vector<cfloat> d = test::random_complex(t.size(), 92);
    std::unique_ptr<Device> one = make_gpu_backend(0, {});
    const Computed ref = compute(*one, t, g, d);
    for (const std::vector<int>& devices : {std::vector<int>{0, 0}, std::vector<int>{0, 0, 0}}) {
      INFO(dims_string(g) << ", " << devices.size() << " slabs");
      std::unique_ptr<Device> multi = make_gpu_backend(devices, {});
      const Computed got = compute(*multi, t, g, d);
      // Not bitwise: each slab's weights carry the slab centre's phase.
      CHECK(test::rel_l2(got.fhd, ref.fhd) < 2e-6);
      CHECK(test::rel_l2(got.q, ref.q) < 2e-6);
    }
  }
}

TEST_CASE("backend conformance: multi-gpu (device 0 twice)", "[gpu][conformance][multi]") {
  FHD_NEED_GPU();
  conformance::run_all([] { return make_gpu_backend(std::vector<int>{0, 0}, {}); });
}
