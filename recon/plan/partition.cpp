#include "recon/plan/partition.hpp"

#include <algorithm>

#include "recon/gather/gather_kernels.hpp"
#include "recon/ops/device_stack.hpp"
#include "recon/plan/plan.hpp"

namespace fhd {
namespace {

// The slowest axis's slices [a0, a0 + h): x fastest, so a slab is one contiguous block.
std::size_t slab_values(const ImageGrid& g, int h) {
  return std::size_t(g.nx) * (g.nz > 1 ? std::size_t(g.ny) : 1) * std::size_t(h);
}

int last_axis(const ImageGrid& g) { return g.nz > 1 ? g.nz : g.ny; }

// F_s^H: samples -> slab s of the image, on the slab's device; its adjoint
// (the slab's forward model) embeds the slab in a zero image.
class SlabAdjointOp : public LinOp {
 public:
  SlabAdjointOp(Device& dev, const Points& k, const ImageGrid& grid, int a0, int h, const FhdOptions& opt)
      : LinOp(dev, samples_shape(k.size()), samples_shape(slab_values(grid, h)), "F^H slab"),
        k_(k), grid_(grid), a0_(a0), h_(h), opt_(opt) {}

 protected:
  void do_apply(const DeviceVector& y, DeviceVector& x) override {
    device().kernels<GatherKernels>().adjoint_slab(k_, y, grid_, a0_, h_, opt_, x);
  }
  void do_adjoint(const DeviceVector& x, DeviceVector& y) override {
    DeviceVector& image = scratch(2, grid_.voxels());
    device().set_zero(image);
    device().copy(x, *image.view(slab_values(grid_, a0_), x.size()));
    device().kernels<GatherKernels>().forward(k_, image, grid_, opt_, y);
  }

 private:
  const Points& k_;
  ImageGrid grid_;
  int a0_, h_;
  FhdOptions opt_;
};

std::size_t parts_for(const Plan& plan, int len) {
  return std::min<std::size_t>(plan.devices().size(), std::size_t(std::max(len, 1)));
}

}  // namespace

std::pair<int, int> slab(int len, int parts, int i) {
  const int base = len / parts, extra = len % parts;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

OpPtr partitioned_adjoint(Plan& plan) {
  const ImageGrid& g = plan.grid();
  const int len = last_axis(g);
  const std::size_t parts = parts_for(plan, len);
  std::vector<OpPtr> ops;
  for (std::size_t i = 0; i < parts; ++i) {
    const auto [a0, h] = slab(len, int(parts), int(i));
    ops.push_back(std::make_shared<SlabAdjointOp>(*plan.devices()[i], plan.points_on(i), g, a0, h, plan.options().fhd));
  }
  return vstack_across(plan.device(), ops);
}

VecPtr partitioned_q(Plan& plan, const std::vector<float>& w) {
  const ImageGrid& g = plan.grid();
  int box[3];
  q_half_box(g, box);
  const int len = g.nz > 1 ? box[2] : box[1];
  const std::size_t parts = parts_for(plan, len);
  const std::size_t per_slice = std::size_t(box[0]) * (g.nz > 1 ? std::size_t(box[1]) : 1);
  Device& home = plan.device();
  VecPtr half = home.zeros(per_slice * std::size_t(len));
  on_each(parts, [&](std::size_t i) {
    const auto [a0, h] = slab(len, int(parts), int(i));
    Device& d = *plan.devices()[i];
    VecPtr part = d.kernels<GatherKernels>().q_half_slab(plan.points_on(i), w, g, a0, h, plan.options().fhd);
    d.synchronize();
    home.copy(*part, *half->view(per_slice * std::size_t(a0), part->size()));
  });
  home.synchronize();
  return home.kernels<GatherKernels>().q_from_half(plan.points(), w, g, plan.options().fhd, *half);
}

}  // namespace fhd
