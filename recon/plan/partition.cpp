#include "recon/plan/partition.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <spdlog/spdlog.h>

#include "core/clock.hpp"
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

// Slab i of `len` slices when part 0 also has `head` slices' worth of other
// work (Q's faces): part 0 takes `head` fewer, so no device waits for it.
// An axis too short to spare them is split evenly.
std::pair<int, int> slab_after(int len, int parts, int i, int head) {
  if (head >= len / parts) head = 0;
  const auto [a, h] = slab(len + head, parts, i);
  return i == 0 ? std::pair<int, int>{0, h - head} : std::pair<int, int>{a - head, h};
}

// Q's faces (the gather on the first device besides its slab) in slices of the half box.
int q_faces_in_slices(const ImageGrid& g, std::size_t per_slice) {
  const ImageGrid d = g.doubled();
  const bool is3d = d.nz > 1;
  const std::size_t rest = std::size_t(is3d ? g.nz : g.ny) - 1;
  const std::size_t faces = is3d ? (std::size_t(d.ny) + std::size_t(d.nx) - 1) * rest : rest;
  return int((faces + per_slice / 2) / per_slice);
}

// Elements [first, first + n) of a trajectory.
Trajectory chunk_of(const Trajectory& t, std::size_t first, std::size_t n) {
  auto part = [&](const std::vector<float>& v) {
    return v.empty() ? v : std::vector<float>(v.begin() + std::ptrdiff_t(first), v.begin() + std::ptrdiff_t(first + n));
  };
  return Trajectory{part(t.kx), part(t.ky), part(t.kz)};
}

}  // namespace

std::pair<int, int> slab(int len, int parts, int i) {
  const int base = len / parts, extra = len % parts;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

std::size_t gather_parts(const Plan& plan, double pairs_per_slice, int slices) {
  const double min_pairs = plan.options().split.min_pairs_per_device;
  std::size_t parts = std::min<std::size_t>(plan.devices().size(), std::size_t(std::max(slices, 1)));
  if (min_pairs > 0)
    parts = std::min(parts, std::max<std::size_t>(1, std::size_t(std::floor(pairs_per_slice * slices / min_pairs))));
  return parts;
}

OpPtr partitioned_adjoint(Plan& plan) {
  const ImageGrid& g = plan.grid();
  const int len = last_axis(g);
  const std::size_t parts = gather_parts(plan, double(slab_values(g, 1)) * double(plan.samples()), len);
  if (parts < 2) return nullptr;
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
  const std::size_t per_slice = std::size_t(box[0]) * (g.nz > 1 ? std::size_t(box[1]) : 1);
  const std::size_t parts = gather_parts(plan, double(per_slice) * double(plan.samples()), len);
  if (parts < 2) return nullptr;
  const int head = q_faces_in_slices(g, per_slice);
  Device& home = plan.device();
  VecPtr half = home.zeros(per_slice * std::size_t(len));
  // Each device gathers its slab and copies it into the first's half box as
  // soon as it is done; the first device's faces follow its (smaller) slab.
  const auto t0 = std::chrono::steady_clock::now();
  on_each(parts, [&](std::size_t i) {
    const auto [a0, h] = slab_after(len, int(parts), int(i), head);
    Device& d = *plan.devices()[i];
    VecPtr part = d.kernels<GatherKernels>().q_half_slab(plan.points_on(i), w, g, a0, h, plan.options().fhd);
    home.copy(*part, *half->view(per_slice * std::size_t(a0), part->size()));  // after the slab, queued
    spdlog::debug("Q slab {} ({} slices from {}) done at {:.3f} s", i, h, a0, seconds_since(t0));
  });
  home.synchronize();
  VecPtr q = home.kernels<GatherKernels>().q_from_half(plan.points(), w, g, plan.options().fhd, *half);
  spdlog::debug("Q faces and assembly done at {:.3f} s", seconds_since(t0));
  return q;
}

bool splits_nufft(const Plan& plan) {
  const SplitRule& r = plan.options().split;
  return plan.devices().size() > 1 && plan.samples() >= std::max<std::size_t>(plan.devices().size(), r.min_nufft_samples) &&
         (r.min_nufft_samples == 0 || plan.samples() >= plan.grid().voxels());
}

std::vector<std::shared_ptr<Plan>> sample_chunk_plans(Plan& plan) {
  const std::size_t parts = plan.devices().size(), m = plan.samples();
  PlanOptions o;
  o.fhd = plan.options().fhd;  // F alone: Phi = 1, no Q, no cache
  std::vector<std::shared_ptr<Plan>> plans(parts);
  on_each(parts, [&](std::size_t i) {  // side by side: each uploads its chunk
    const std::size_t first = m / parts * i + std::min(i, m % parts), n = m / parts + (i < m % parts ? 1 : 0);
    plans[i] = Plan::make(*plan.devices()[i], chunk_of(plan.trajectory(), first, n), plan.grid(), o);
  });
  return plans;
}

OpPtr partitioned_nufft(Plan& plan) {
  std::vector<OpPtr> ops;
  for (const std::shared_ptr<Plan>& p : plan.chunk_plans()) ops.push_back(p->fourier());
  return vstack_across(plan.device(), ops);
}

}  // namespace fhd
