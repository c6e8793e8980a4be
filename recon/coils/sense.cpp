#include "recon/coils/sense.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/ops/device_stack.hpp"
#include "recon/plan/toeplitz.hpp"

namespace fhd {
namespace {

void check_maps(const CoilData& maps, const ImageGrid& grid) {
  if (maps.empty()) throw InputError("sense", "coil maps", "0", "needs at least one coil");
  for (std::size_t c = 0; c < maps.size(); ++c)
    if (maps[c].size() != grid.voxels())
      throw InputError("sense", "coil map " + std::to_string(c) + " size", std::to_string(maps[c].size()),
                       "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
}

class CpuMaps : public MapsKernels {
 public:
  explicit CpuMaps(Device& dev) : dev_(dev) {}
  std::vector<std::shared_ptr<DeviceVector>> lowres(const Calibration& cal, const ImageGrid& grid,
                                                    double crop) override {
    return upload_maps(dev_, maps_lowres(cal, grid, crop), grid);
  }

 private:
  Device& dev_;
};

// Coils per FFT pair on the CPU: one. The CPU's batched FFTW pair bought
// nothing on the 2-core machine (8 coils at 64^3: 0.90-0.93x of single
// applies, 4 coils 0.98x; docs/performance.md) and needs a doubled grid per
// coil, so the CPU keeps the per-coil pair and only fuses the maps' products
// and the sum; the grouping stays for a CPU where batches pay.
constexpr int kCpuCoilGroup = 1;

// y = sum_c conj(S_c) T (S_c x) on the host, kCpuCoilGroup coils per apply of
// the CPU's T (recon/plan/toeplitz.hpp).
void cpu_coils(ToeplitzOperator& t, const cfloat* x, const std::vector<std::shared_ptr<DeviceVector>>& maps,
               cfloat* y, std::size_t vox) {
  const int coils = int(maps.size()), group = std::min(coils, kCpuCoilGroup);
  std::vector<cfloat> in(group * vox), out(group * vox);
  std::fill(y, y + vox, cfloat(0.f));
  for (int c0 = 0; c0 < coils; c0 += group) {
    const int g = std::min(group, coils - c0);
    for (int k = 0; k < g; ++k) {
      const cfloat* s = host_data(*maps[c0 + k]);
      cfloat* dst = in.data() + k * vox;
#pragma omp parallel for
      for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(vox); ++i) dst[i] = s[i] * x[i];
    }
    t.apply(in.data(), out.data(), g);
#pragma omp parallel for
    for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(vox); ++i) {
      cfloat acc = y[i];
      for (int k = 0; k < g; ++k) acc += std::conj(host_data(*maps[c0 + k])[i]) * out[k * vox + i];
      y[i] = acc;
    }
  }
}

// E^H E = sum_c S_c^H T S_c as one operator: the coils' FFT pairs batched on
// the GPU (CoilBatchedNormal); on the CPU, the maps' products fused around T.
class SenseNormal : public HermitianOp {
 public:
  SenseNormal(OpPtr t, std::vector<std::shared_ptr<DeviceVector>> maps)
      : HermitianOp(t->device(), t->in(), "sum_c S_c^H T S_c (batched)"), t_(std::move(t)), maps_(std::move(maps)) {
    if (auto* gpu = dynamic_cast<CoilBatchedNormal*>(t_.get())) gpu->prepare_coils(int(maps_.size()));
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    if (auto* gpu = dynamic_cast<CoilBatchedNormal*>(t_.get())) return gpu->apply_coils(x, maps_, y);
    cpu_coils(dynamic_cast<ToeplitzOperator&>(*t_), host_data(x), maps_, host_data(y), x.size());
  }

 private:
  OpPtr t_;
  std::vector<std::shared_ptr<DeviceVector>> maps_;
};

// E = vstack of compose(A, diag(S_c)), with its normal batched over coils
// where A's normal is a Toeplitz T that can batch (else the stack's own
// normal: the per-coil sum).
class SenseOp : public LinOp {
 public:
  SenseOp(OpPtr model, std::vector<std::shared_ptr<DeviceVector>> maps, OpPtr stack)
      : LinOp(stack->device(), stack->in(), stack->out(), stack->name()),
        model_(std::move(model)),
        maps_(std::move(maps)),
        stack_(std::move(stack)) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { stack_->apply(x, y); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    if (!batched()) return stack_->adjoint(y, x);
    // E^H y = sum_c conj(S_c) A^H y_c with the coils' A^H in one batched
    // call: on the GPU, 8 coils' type 1s cost about 2 single ones.
    const std::size_t vox = model_->in().size(), coils = maps_.size();
    DeviceVector& each = scratch(2, coils * vox);
    dynamic_cast<BatchedAdjoint&>(*model_).adjoint_batch(y, each, int(coils));
    for (std::size_t c = 0; c < coils; ++c) {
      VecPtr part = each.view(c * vox, vox);
      device().multiply(*maps_[c], *part, *part, true);
      if (c == 0)
        device().copy(*part, x);
      else
        device().axpy(1.0, *part, x);
    }
  }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override { stack_->apply_add(x, y, a); }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override {
    if (batched()) return LinOp::do_adjoint_add(y, x, a);
    stack_->adjoint_add(y, x, a);
  }
  OpPtr make_normal() override {
    OpPtr t = model_->normal();
    if (dynamic_cast<CoilBatchedNormal*>(t.get()) || dynamic_cast<ToeplitzOperator*>(t.get()))
      return std::make_shared<SenseNormal>(t, maps_);
    return stack_->normal();
  }

 private:
  bool batched() {
    auto* b = dynamic_cast<BatchedAdjoint*>(model_.get());
    return maps_.size() > 1 && b && b->batches();
  }
  OpPtr model_;
  std::vector<std::shared_ptr<DeviceVector>> maps_;
  OpPtr stack_;
};

// One operator's apply and normal with another's adjoint (the same map, split
// otherwise across devices).
class AdjointBy : public LinOp {
 public:
  AdjointBy(OpPtr op, OpPtr adjoint, const std::string& how)
      : LinOp(op->device(), op->in(), op->out(), op->name() + ", " + how), op_(std::move(op)), adj_(std::move(adjoint)) {
    if (adj_->in() != in() || adj_->out() != out() || &adj_->device() != &device())
      throw std::invalid_argument("sense: the adjoint's operator maps " + adj_->in().str() + " to " +
                                  adj_->out().str() + ", expected " + in().str() + " to " + out().str());
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { op_->apply(x, y); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { adj_->adjoint(y, x); }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override { op_->apply_add(x, y, a); }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override { adj_->adjoint_add(y, x, a); }
  OpPtr make_normal() override { return op_->normal(); }

 private:
  OpPtr op_, adj_;
};

}  // namespace

std::vector<std::shared_ptr<DeviceVector>> upload_maps(Device& dev, const CoilData& maps, const ImageGrid& grid) {
  check_maps(maps, grid);
  std::vector<std::shared_ptr<DeviceVector>> out;
  for (const std::vector<cfloat>& m : maps) out.push_back(dev.upload(m));
  return out;
}

OpPtr sense_op(const OpPtr& model, const std::vector<std::shared_ptr<DeviceVector>>& maps) {
  if (maps.empty()) throw InputError("sense", "coil maps", "0", "needs at least one coil");
  std::vector<OpPtr> coils;
  for (const auto& m : maps) coils.push_back(compose({model, diag(m, model->in())}));
  return std::make_shared<SenseOp>(model, maps, vstack(coils));
}

OpPtr sense_op_across(Device& home, const std::vector<OpPtr>& models,
                      const std::vector<std::vector<std::shared_ptr<DeviceVector>>>& maps) {
  if (models.size() != maps.size())
    throw std::invalid_argument("sense_op_across: " + std::to_string(models.size()) + " models for " +
                                std::to_string(maps.size()) + " shares of maps");
  std::vector<OpPtr> parts;
  for (std::size_t i = 0; i < models.size(); ++i) parts.push_back(sense_op(models[i], maps[i]));
  return vstack_across(home, parts);
}

OpPtr sense_adjoint_by_chunks(const OpPtr& by_coils, Device& home, const std::vector<OpPtr>& chunk_models,
                              const std::vector<std::vector<std::shared_ptr<DeviceVector>>>& maps) {
  if (chunk_models.size() != maps.size())
    throw std::invalid_argument("sense_adjoint_by_chunks: " + std::to_string(chunk_models.size()) +
                                " models for " + std::to_string(maps.size()) + " sets of maps");
  std::vector<OpPtr> parts;
  for (std::size_t i = 0; i < chunk_models.size(); ++i) parts.push_back(sense_op(chunk_models[i], maps[i]));
  return std::make_shared<AdjointBy>(by_coils, vstack_blocks_across(home, parts, maps.at(0).size()),
                                     "E^H by sample chunks");
}

std::unique_ptr<MapsKernels> make_cpu_maps(Device& dev) { return std::make_unique<CpuMaps>(dev); }

}  // namespace fhd
