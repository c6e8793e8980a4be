// A plan split across several GPU devices (Plan::make with others, as --gpus
// makes it): slabs of the exact FhD and of Q's Hermitian half
// (recon/plan/partition.hpp). Listing device 0 two or three times runs every
// slab path on one GPU; the conformance suite's "partitions" section holds the
// rest (a second device, vstack_across).
#include "conformance.hpp"
#include "test_backend_util.hpp"

using namespace fhd;

namespace {

// Plan options that split however small the problem (SplitRule::always()).
PlanOptions always() {
  PlanOptions po;
  po.split = SplitRule::always();
  return po;
}

// FhD and Q through a plan on devs[0], split across the others.
struct Computed {
  std::vector<cfloat> fhd, q;
};

Computed compute(const std::vector<std::unique_ptr<Device>>& devs, const Trajectory& t, const ImageGrid& g,
                 const std::vector<cfloat>& d) {
  std::vector<Device*> others;
  for (std::size_t i = 1; i < devs.size(); ++i) others.push_back(devs[i].get());
  auto plan = Plan::make(*devs[0], t, g, always(), others);
  return {plan->fhd(d), test::to_vector(plan->q_host())};
}

}  // namespace

TEST_CASE("multi-gpu: slabs of FhD and Q equal the single-GPU result (2 and 3 slabs, uneven)", "[gpu][multi]") {
  FHD_NEED_GPU();
  // 3D with nz = 5 (slabs of 3+2 and 2+2+1; Q's half box has 6 slices), 2D with ny = 7.
  for (const ImageGrid& g : {ImageGrid{6, 8, 5}, ImageGrid{12, 7, 1}}) {
    const Trajectory t = test::random_trajectory(3 * g.voxels(), g, 91);
    const std::vector<cfloat> d = test::random_complex(t.size(), 92);
    const Computed ref = compute(make_gpu_devices({0}, {}), t, g, d);
    for (const std::vector<int>& devices : {std::vector<int>{0, 0}, std::vector<int>{0, 0, 0}}) {
      INFO(dims_string(g) << ", " << devices.size() << " slabs");
      const std::vector<std::unique_ptr<Device>> multi = make_gpu_devices(devices, {});
      const Computed got = compute(multi, t, g, d);
      // Not bitwise: each slab's weights carry the slab centre's phase.
      CHECK(test::rel_l2(got.fhd, ref.fhd) < 2e-6);
      CHECK(test::rel_l2(got.q, ref.q) < 2e-6);
      // The split F^H is still F's adjoint, and T from the slabs' Q is F^H F.
      std::vector<Device*> others;
      for (std::size_t i = 1; i < multi.size(); ++i) others.push_back(multi[i].get());
      auto plan = Plan::make(*multi[0], t, g, always(), others);
      conformance::check_adjoint(*plan->fourier(), 2e-5, 93);
      const std::vector<cfloat> x = test::random_complex(g.voxels(), 94);
      CHECK(test::rel_l2(plan->toeplitz()->apply(x), plan->fhd(plan->forward_model(x))) < 2e-4);
    }
  }
}
