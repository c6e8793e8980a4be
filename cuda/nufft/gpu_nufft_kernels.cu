// The NUFFT family on the GPU (recon/nufft/nufft_kernels.hpp): cuda/nufft's
// plan, owned by the operator that uses it (before, the GPU backend kept one
// per trajectory inside its Points and replaced it when the grid or tolerance
// changed).
#include "cuda/device/gpu_internal.hpp"
#include "cuda/nufft/nufft.hpp"
#include "cuda/ops/gpu_kernels.hpp"

namespace fhd::gpu {
namespace {

class GpuNufftPlan : public fhd::NufftPlan {
 public:
  GpuNufftPlan(Device& dev, const Points& k, const ImageGrid& modes, const ImageGrid& image, double tol)
      : dev_(dev), modes_(modes) {
    DeviceScope scope(dev);
    NufftOptions o;
    o.tol = tol;
    // Q's fine grid is 8x the image plan's, so its bins hold fewer points:
    // staging 64 kernel values at a time, not 128, measured 10.8 ms against
    // 13.0 on the H100 (1,536,000 radial points, 512^3; `bench-nufft --sweep`).
    if (!(modes == image)) o.chunk = 64;
    plan_ = std::make_unique<gpu::NufftPlan>(modes, image, o, stream_of(dev));
    const DeviceTrajectory& t = on_device(k);
    plan_->set_points(t.kx.get(), t.ky.get(), t.kz.get(), t.m);
  }
  void type1(const DeviceVector& c, DeviceVector& f) override {
    DeviceScope scope(dev_);
    check(c, f);
    plan_->type1(dptr(c), dptr(f));
  }
  void type2(const DeviceVector& f, DeviceVector& c) override {
    DeviceScope scope(dev_);
    check(c, f);
    plan_->type2(dptr(f), dptr(c));
  }
  // One batched call (SENSE's E^H y over its coils): the spreading by gather
  // shares each point's staging among the transforms.
  void type1_batch(const DeviceVector& c, DeviceVector& f, int n) override {
    DeviceScope scope(dev_);
    check(c, f, n);
    plan_->type1(dptr(c), dptr(f), n);
  }
  bool batches() const override { return true; }
  void reserve_type1(int n) override {
    DeviceScope scope(dev_);
    plan_->reserve_type1(n);
  }

 private:
  void check(const DeviceVector& c, const DeviceVector& f, int n = 1) const {
    require_gpu(dev_, c, "nufft");
    require_gpu(dev_, f, "nufft");
    if (n < 1 || c.size() != std::size_t(n) * plan_->points() || f.size() != std::size_t(n) * modes_.voxels())
      throw std::invalid_argument("gpu nufft: " + std::to_string(c.size()) + " samples and " + std::to_string(f.size()) +
                                  " modes for " + std::to_string(n) + " transforms of a plan of " +
                                  std::to_string(plan_->points()) + " and " + std::to_string(modes_.voxels()));
  }
  Device& dev_;
  ImageGrid modes_;
  std::unique_ptr<gpu::NufftPlan> plan_;
};

class GpuNufft : public NufftKernels {
 public:
  explicit GpuNufft(Device& dev) : dev_(dev) {}
  std::unique_ptr<fhd::NufftPlan> plan(const Points& k, const ImageGrid& modes, const ImageGrid& image,
                                       double tol) override {
    return std::make_unique<GpuNufftPlan>(dev_, k, modes, image, tol);
  }
  VecPtr q(const Points& k, const std::vector<float>& w, const ImageGrid& grid, double tol) override {
    DeviceScope scope(dev_);
    const cudaStream_t s = stream_of(dev_);
    DeviceBuffer<float2> wc = complex_weights(w, k.size(), s);
    const DeviceVector weights(dev_, reinterpret_cast<cfloat*>(wc.get()), wc.size());
    VecPtr out = dev_.zeros(grid.doubled().voxels());
    GpuNufftPlan(dev_, k, grid.doubled(), grid, tol).type1(weights, *out);
    CUDA_CHECK(cudaStreamSynchronize(s));  // the weights and the plan's buffers go at return
    return out;
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<NufftKernels> make_gpu_nufft(Device& dev) { return std::make_unique<GpuNufft>(dev); }

}  // namespace fhd::gpu
