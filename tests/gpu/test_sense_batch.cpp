// SENSE's normal on the GPU with the coils batched (cuda/plan/toeplitz.cu's
// apply_coils, issue 25) against the per-coil sum of S^H T S: 1 coil, 8 (one
// group) and 11 (a group of 8 and one of 3, summed into y), 2D and 3D; and a
// power-of-two grid, whose coils go through the line passes one by one.
// E^H y with the coils' adjoints batched (the NUFFT's type 1s in one call).
#include "cuda/plan/toeplitz_lines.hpp"
#include "sense_normal_check.hpp"
#include "recon/plan/plan.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

TEST_CASE("gpu sense: the batched normal equals the per-coil sum of S^H T S", "[gpu][sense][batch]") {
  FHD_NEED_GPU();
  std::unique_ptr<Device> dev = make_gpu_device();
  REQUIRE(gpu::LineToeplitz::supports({16, 8, 32}));
  for (const ImageGrid& g : {ImageGrid{24, 20, 1}, ImageGrid{12, 10, 8}, ImageGrid{16, 8, 32}}) {
    const Trajectory t = random_trajectory(g.voxels(), g, 91);
    auto plan = Plan::make(*dev, t, g, {});
    for (int coils : {1, 8, 11}) test::check_sense_normal(*dev, plan->forward(), g, coils, 92 + coils);
  }
}

TEST_CASE("gpu sense: E^H y with the coils' type 1s batched equals the per-coil sum", "[gpu][sense][batch]") {
  FHD_NEED_GPU();
  std::unique_ptr<Device> dev = make_gpu_device();
  // 3D grids large enough for the spreading by gather (cuda/nufft/gather_spread.cuh),
  // one of the line passes' sizes; 2 coils stay below the gather's batch size.
  for (const ImageGrid& g : {ImageGrid{24, 20, 16}, ImageGrid{32, 32, 16}}) {
    const Trajectory t = random_trajectory(2 * g.voxels(), g, 95);
    PlanOptions o;
    o.fhd.method = FhdMethod::Nufft;
    auto plan = Plan::make(*dev, t, g, o);
    const OpPtr model = plan->forward();
    auto* batched = dynamic_cast<BatchedAdjoint*>(model.get());
    REQUIRE(batched);
    REQUIRE(batched->batches());  // E^H y takes the batched call, not the per-coil stack
    for (int coils : {2, 8, 11}) test::check_sense_adjoint(*dev, model, g, coils, 96 + coils);
  }
}
