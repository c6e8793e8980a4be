// The GPU backend: recon's Backend interface on CUDA (kernels of this folder,
// the cmpFhD/Q kernel table, cuFFT). All work runs on one stream of the
// backend's device; the host waits only where a result comes back (download,
// dot's scalar), so CG's vector work stays on the device.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <future>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/gather/fhd_kernels.hpp"
#include "cuda/gather/fhd_launchers.cuh"
#include "cuda/device/gpu_device.hpp"
#include "cuda/field/field_gather.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/field/field.hpp"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/nufft/nufft.hpp"
#include "cuda/gather/q_hermitian.hpp"
#include "cuda/gather/tune.hpp"
#include "cuda/ops/tv_ops.hpp"

namespace fhd {
namespace gpu {

const GpuVector& as_gpu(const BackendVector& v) {
  const auto* p = dynamic_cast<const GpuVector*>(&v);
  if (!p) throw std::invalid_argument("gpu backend: got a vector that another backend made");
  return *p;
}

GpuVector& as_gpu(BackendVector& v) {
  auto* p = dynamic_cast<GpuVector*>(&v);
  if (!p) throw std::invalid_argument("gpu backend: got a vector that another backend made");
  return *p;
}

}  // namespace gpu

namespace {
using namespace gpu;

// An empty kernel: asking for its attributes fails when the device cannot run
// the code this build embeds (sm_90 machine code and compute_90 PTX).
__global__ void probe_kernel() {}

// "NVIDIA H100 80GB HBM3 (device 0, sm_90, 79.1 GiB free)"; throws DeviceError.
std::string describe(int device) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  CUDA_CHECK(cudaSetDevice(device));
  const std::size_t free = free_device_bytes();
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s (device %d, sm_%d%d, %.1f GiB free)", p.name, device, p.major, p.minor,
                double(free) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// Why `device` cannot be used, or "" when it can. Never throws.
std::string unusable_reason(int device) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA driver or device: ") + cudaGetErrorString(e);
  }
  if (count == 0) return "no CUDA device found";
  if (device < 0 || device >= count)
    return "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " present)";
  cudaDeviceProp p{};
  e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) return std::string("cannot query CUDA device: ") + cudaGetErrorString(e);
  e = cudaSetDevice(device);
  if (e != cudaSuccess) return std::string("cannot use CUDA device: ") + cudaGetErrorString(e);
  cudaFuncAttributes a{};
  e = cudaFuncGetAttributes(&a, probe_kernel);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) +
           ") cannot run this build's sm_90 code: " + cudaGetErrorString(e);
  }
  return "";
}

// Makes the backend's device current for one call (the caller's thread may
// have used another device since).
struct DeviceScope {
  explicit DeviceScope(int device) { CUDA_CHECK(cudaSetDevice(device)); }
};

// A trajectory on the device, with the host copy every Points keeps.
class GpuPoints : public Points {
 public:
  GpuPoints(const Trajectory& t, cudaStream_t s) : Points(t) {
    const std::size_t m = t.kx.size();
    const std::string what = "the trajectory (" + std::to_string(m) + " samples)";
    require_free(3.0 * m * sizeof(float), what);
    dev.kx.allocate(m, what);
    dev.ky.allocate(m, what);
    dev.kz.allocate(m, what);
    gpu::upload(t.kx.data(), m, dev.kx.get(), s);
    gpu::upload(t.ky.data(), m, dev.ky.get(), s);
    if (t.kz.empty()) {
      if (m) CUDA_CHECK(cudaMemsetAsync(dev.kz.get(), 0, m * sizeof(float), s));
    } else {
      gpu::upload(t.kz.data(), m, dev.kz.get(), s);
    }
    dev.m = m;
    CUDA_CHECK(cudaStreamSynchronize(s));  // the host copy may go before the upload ends otherwise
  }

  // The NUFFT plan of these points for FhD and the forward model on `grid`
  // (modes == image), made at the first call and kept: the fine-grid cuFFT
  // plan and the point sort are paid once per trajectory, not once per coil,
  // ADMM step or forward call. A new tolerance replaces it.
  NufftPlan& nufft(const ImageGrid& grid, double tol, cudaStream_t s) const {
    if (!plan_ || !(plan_grid_ == grid) || plan_tol_ != tol) {
      plan_.reset();  // its fine grid goes before the next one is allocated
      NufftOptions o;
      o.tol = tol;
      plan_ = std::make_unique<NufftPlan>(grid, grid, o, s);
      plan_->set_points(dev.kx.get(), dev.ky.get(), dev.kz.get(), dev.m);
      plan_grid_ = grid;
      plan_tol_ = tol;
    }
    return *plan_;
  }

  // The exact off-resonance model of these points for the field map and
  // sample times f on `grid` (cuda/field/field_gather.hpp), made at the first call
  // and kept for CG's iterations; other field data (by content) replace it.
  const FieldGather& field(const FieldData& f, const ImageGrid& grid, cudaStream_t s) const {
    const double key = field_key(f);
    if (!field_ || !(field_grid_ == grid) || field_key_ != key) {
      field_.reset();
      const std::string what = "the field model's map and times";
      DeviceBuffer<float> hz(f.hz.size(), what), t(f.times.size(), what);
      gpu::upload(f.hz.data(), f.hz.size(), hz.get(), s);
      gpu::upload(f.times.data(), f.times.size(), t.get(), s);
      field_ = std::make_unique<FieldGather>(FieldSamples{dev.kx.get(), dev.ky.get(), dev.kz.get(), t.get(), dev.m},
                                             grid, hz.get(), s);
      field_grid_ = grid;
      field_key_ = key;
    }
    return *field_;
  }

  DeviceTrajectory dev;

 private:
  // A checksum of the map and times: one pass, far cheaper than one gather.
  static double field_key(const FieldData& f) {
    double k = double(f.hz.size()) + 1e-3 * double(f.times.size());
    for (std::size_t i = 0; i < f.hz.size(); ++i) k += double(f.hz[i]) * double(i % 977 + 1);
    for (std::size_t i = 0; i < f.times.size(); ++i) k += 1e3 * double(f.times[i]) * double(i % 983 + 1);
    return k;
  }

  mutable std::unique_ptr<FieldGather> field_;
  mutable ImageGrid field_grid_{};
  mutable double field_key_ = 0;
  mutable std::unique_ptr<NufftPlan> plan_;
  mutable ImageGrid plan_grid_{};
  mutable double plan_tol_ = 0;
};

const GpuPoints& gpu_points(const Points& k) {
  const auto* p = dynamic_cast<const GpuPoints*>(&k);
  if (!p) throw std::invalid_argument("gpu backend: got points that another backend uploaded");
  return *p;
}

const DeviceTrajectory& on_device(const Points& k) { return gpu_points(k).dev; }

void same_size(const GpuVector& a, const GpuVector& b, const char* where) {
  if (a.size() != b.size())
    throw std::invalid_argument(std::string("gpu backend: ") + where + " of vectors of sizes " +
                                std::to_string(a.size()) + " and " + std::to_string(b.size()));
}

// Device vectors on the backend's stream; only dot's scalar and download
// make the host wait.
class GpuVectorOps : public VectorOps {
 public:
  GpuVectorOps(int device, cudaStream_t s) : device_(device), s_(s), dot_(std::make_unique<DotReducer>()) {}

  VecPtr upload(const std::vector<cfloat>& host) override {
    DeviceScope scope(device_);
    auto v = std::make_unique<GpuVector>(host.size(), "a vector of " + std::to_string(host.size()) + " elements");
    gpu::upload(reinterpret_cast<const float2*>(host.data()), host.size(), v->buf.get(), s_);
    return v;
  }

  VecPtr zeros(std::size_t n) override {
    DeviceScope scope(device_);
    auto v = std::make_unique<GpuVector>(n, "a vector of " + std::to_string(n) + " elements");
    if (n) CUDA_CHECK(cudaMemsetAsync(v->buf.get(), 0, v->buf.bytes(), s_));
    return v;
  }

  std::vector<cfloat> download(const BackendVector& v) override {
    std::vector<cfloat> host;
    download_into(v, host);
    return host;
  }

  void download_into(const BackendVector& v, std::vector<cfloat>& out) override {
    DeviceScope scope(device_);
    const GpuVector& g = as_gpu(v);
    out.resize(g.size());
    gpu::download(g.buf.get(), g.size(), reinterpret_cast<float2*>(out.data()), s_);
  }

  void copy(const BackendVector& src, BackendVector& dst) override {
    DeviceScope scope(device_);
    const GpuVector& a = as_gpu(src);
    GpuVector& b = as_gpu(dst);
    same_size(a, b, "copy");
    if (&a != &b && a.size())
      CUDA_CHECK(cudaMemcpyAsync(b.buf.get(), a.buf.get(), a.buf.bytes(), cudaMemcpyDeviceToDevice, s_));
  }

  void axpy(cdouble a, const BackendVector& x, BackendVector& y) override {
    DeviceScope scope(device_);
    const GpuVector& gx = as_gpu(x);
    GpuVector& gy = as_gpu(y);
    same_size(gx, gy, "axpy");
    launch_axpy(make_double2(a.real(), a.imag()), gx.buf.get(), gy.buf.get(), gx.size(), s_);
  }

  void xpay(const BackendVector& x, cdouble a, BackendVector& y) override {
    DeviceScope scope(device_);
    const GpuVector& gx = as_gpu(x);
    GpuVector& gy = as_gpu(y);
    same_size(gx, gy, "xpay");
    launch_xpay(gx.buf.get(), make_double2(a.real(), a.imag()), gy.buf.get(), gx.size(), s_);
  }

  cdouble dot(const BackendVector& x, const BackendVector& y) override {
    DeviceScope scope(device_);
    const GpuVector& gx = as_gpu(x);
    const GpuVector& gy = as_gpu(y);
    same_size(gx, gy, "dot");
    return dot_->dot(gx.buf.get(), gy.buf.get(), gx.size(), s_);
  }

  std::pair<cdouble, cdouble> dot2(const BackendVector& a, const BackendVector& b, const BackendVector& c,
                                   const BackendVector& d) override {
    DeviceScope scope(device_);
    const GpuVector &ga = as_gpu(a), &gb = as_gpu(b), &gc = as_gpu(c), &gd = as_gpu(d);
    same_size(ga, gb, "dot2");
    same_size(ga, gc, "dot2");
    same_size(ga, gd, "dot2");
    return dot_->dot2(ga.buf.get(), gb.buf.get(), gc.buf.get(), gd.buf.get(), ga.size(), s_);
  }

  void multiply(const BackendVector& s, const BackendVector& x, BackendVector& y, bool conjugate) override {
    DeviceScope scope(device_);
    const GpuVector& gs = as_gpu(s);
    const GpuVector& gx = as_gpu(x);
    GpuVector& gy = as_gpu(y);
    same_size(gs, gx, "multiply");
    same_size(gx, gy, "multiply");
    launch_multiply(gs.buf.get(), gx.buf.get(), gy.buf.get(), conjugate, gx.size(), s_);
  }

  double magnitude_sse(const BackendVector& x, const BackendVector& ref) override {
    DeviceScope scope(device_);
    const GpuVector& gx = as_gpu(x);
    const GpuVector& gr = as_gpu(ref);
    same_size(gx, gr, "magnitude_sse");
    return dot_->magnitude_sse(gx.buf.get(), gr.buf.get(), gx.size(), s_);
  }

 private:
  int device_;
  cudaStream_t s_;
  std::unique_ptr<DotReducer> dot_;
};

class GpuBackend : public Backend {
 public:
  GpuBackend(int device, const GpuOptions& options) : device_(device), tune_dir_(options.tune_dir) {
    const std::string why = unusable_reason(device);
    if (!why.empty()) throw DeviceError("GPU backend: " + why);
    desc_ = describe(device);
    CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
    vec_ = std::make_unique<GpuVectorOps>(device, s_);
  }
  ~GpuBackend() override {
    cudaSetDevice(device_);
    cudaStreamSynchronize(s_);
    vec_.reset();
    try {
      release_blas_handle(s_);
    } catch (const std::exception&) {  // a destructor must not throw; the handle only leaks
    }
    cudaStreamDestroy(s_);
  }

  std::string name() const override { return "gpu " + std::to_string(device_) + ": " + desc_; }
  bool is_gpu() const override { return true; }
  VectorOps& vec() override { return *vec_; }

  std::unique_ptr<Points> upload_points(const Trajectory& t) override {
    DeviceScope scope(device_);
    const std::size_t m = t.kx.size();
    if (t.ky.size() != m || (t.kz.size() != m && !t.kz.empty()))
      throw InputError("trajectory", "kx/ky/kz lengths",
                       std::to_string(m) + "/" + std::to_string(t.ky.size()) + "/" + std::to_string(t.kz.size()),
                       "must be equal (kz may be empty for 2D)");
    return std::make_unique<GpuPoints>(t, s_);
  }

  std::vector<cfloat> mu(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) override {
    DeviceScope scope(device_);
    return vec_->download(*mu_resident(phi, data));
  }

  VecPtr mu_resident(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) override {
    DeviceScope scope(device_);
    const std::size_t m = data.size();
    if (!phi.empty() && phi.size() != m)
      throw InputError("mu", "phi size", std::to_string(phi.size()),
                       "must be 0 (Dirac basis) or the number of samples, " + std::to_string(m));
    const std::string what = "cmpMu (" + std::to_string(m) + " samples)";
    require_free(double(m) * sizeof(float2) * (phi.empty() ? 2 : 3), what);
    DeviceBuffer<float2> d(m, what), p(phi.size(), what);
    auto out = std::make_unique<GpuVector>(m, what);
    gpu::upload(as_f2(data.data()), m, d.get(), s_);
    gpu::upload(as_f2(phi.data()), phi.size(), p.get(), s_);
    launch_mu(phi.empty() ? nullptr : p.get(), d.get(), out->buf.get(), m, s_);
    return out;
  }

  std::vector<cfloat> fhd(const Points& k, const std::vector<cfloat>& mu, const ImageGrid& grid,
                          const FhdOptions& opt) override {
    DeviceScope scope(device_);
    return vec_->download(*fhd_resident(k, *vec_->upload(mu), grid, opt));
  }

  VecPtr fhd_resident(const Points& k, const BackendVector& mu, const ImageGrid& grid,
                      const FhdOptions& opt) override {
    DeviceScope scope(device_);
    const DeviceTrajectory& traj = on_device(k);
    const GpuVector& w = as_gpu(mu);
    require_samples(traj, w.size(), "fhd", "mu size");
    auto out = std::make_unique<GpuVector>(grid.voxels(), "the FhD image on " + dims_string(grid));
    if (opt.method == FhdMethod::Nufft) {
      gpu_points(k).nufft(grid, opt.nufft_tol, s_).type1(w.buf.get(), out->buf.get());
    } else {
      gather_into(traj, w.buf.get(), OutGrid{grid.nx, grid.ny, grid.nz, grid.nx, grid.ny, grid.nz}, opt,
                  out->buf.get());
    }
    return out;
  }

  // The exact off-resonance model (Backend::field_forward/field_adjoint) by
  // the GPU gathers: the host defaults' direct sums took minutes in 3D.
  std::vector<cfloat> field_forward(const Points& k, const FieldData& f, const std::vector<cfloat>& image,
                                    const ImageGrid& grid) override {
    DeviceScope scope(device_);
    check_field_sizes(k.size(), f, grid, image.size(), grid.voxels(), "image");
    return field_apply(gpu_points(k).field(f, grid, s_), image, k.size(), false);
  }

  std::vector<cfloat> field_adjoint(const Points& k, const FieldData& f, const std::vector<cfloat>& data,
                                    const ImageGrid& grid) override {
    DeviceScope scope(device_);
    check_field_sizes(k.size(), f, grid, data.size(), k.size(), "data");
    return field_apply(gpu_points(k).field(f, grid, s_), data, grid.voxels(), true);
  }

  std::vector<cfloat> q(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                        const FhdOptions& opt) override {
    DeviceScope scope(device_);
    DeviceBuffer<float2> q = q_device(k, w, grid, opt);
    std::vector<cfloat> host(q.size());
    gpu::download(q.get(), q.size(), as_f2(host.data()), s_);
    return host;
  }

  VecPtr q_resident(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                    const FhdOptions& opt) override {
    DeviceScope scope(device_);
    auto v = std::make_unique<GpuVector>(0, "Q");
    v->buf = q_device(k, w, grid, opt);
    return v;
  }

  std::unique_ptr<NormalOperator> normal_resident(const BackendVector& q, const ImageGrid& grid,
                                                  double lambda) override {
    DeviceScope scope(device_);
    const GpuVector& g = as_gpu(q);
    return make_normal_operator(g.buf.get(), g.size(), grid, lambda, s_);
  }

  std::unique_ptr<NormalOperator> preconditioner_resident(const BackendVector& q, const ImageGrid& grid,
                                                          double lambda) override {
    DeviceScope scope(device_);
    const GpuVector& g = as_gpu(q);
    return make_circulant_preconditioner(g.buf.get(), g.size(), grid, lambda, s_);
  }

  std::vector<double> circulant_spectrum(const BackendVector& q, const ImageGrid& grid) override {
    DeviceScope scope(device_);
    const GpuVector& g = as_gpu(q);
    return fhd::circulant_spectrum(g.buf.get(), g.size(), grid, s_);
  }

  std::vector<VecPtr> lowres_maps(const Calibration& cal, const ImageGrid& grid, double crop) override {
    DeviceScope scope(device_);
    std::vector<VecPtr> maps;
    std::vector<float2*> out;
    for (std::size_t c = 0; c < cal.kspace.size(); ++c) {  // not zeroed here: gpu::lowres_maps clears them
      auto m = std::make_unique<GpuVector>(grid.voxels(), "coil map " + std::to_string(c));
      out.push_back(m->buf.get());
      maps.push_back(std::move(m));
    }
    gpu::lowres_maps(windowed_calibration(cal), cal.size, grid, crop, out, s_);
    return maps;
  }

  // The NUFFT's type 2 on the device; the exact forward model runs on the host (Backend's default).
  std::vector<cfloat> forward(const Points& k, const std::vector<cfloat>& image, const ImageGrid& grid,
                              const FhdOptions& opt) override {
    if (opt.method != FhdMethod::Nufft) return Backend::forward(k, image, grid, opt);
    DeviceScope scope(device_);
    if (image.size() != grid.voxels())
      throw InputError("forward", "image size", std::to_string(image.size()),
                       "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
    NufftPlan& plan = gpu_points(k).nufft(grid, opt.nufft_tol, s_);
    const std::string what = "the NUFFT forward model (" + std::to_string(plan.points()) + " samples)";
    DeviceBuffer<float2> f(image.size(), what), c(std::max<std::size_t>(plan.points(), 1), what);
    gpu::upload(as_f2(image.data()), image.size(), f.get(), s_);
    plan.type2(f.get(), c.get());
    std::vector<cfloat> host(plan.points());
    gpu::download(c.get(), host.size(), as_f2(host.data()), s_);
    return host;
  }

  std::unique_ptr<NormalOperator> normal(const std::vector<cfloat>& q, const ImageGrid& grid,
                                         double lambda) override {
    DeviceScope scope(device_);
    return make_normal_operator(q, grid, lambda, s_);
  }

  std::unique_ptr<NormalOperator> circulant(const std::vector<float>& eig, const ImageGrid& grid) override {
    DeviceScope scope(device_);
    return make_circulant_operator(eig, grid, s_);
  }

  void gradient(const BackendVector& x, BackendVector& g, const ImageGrid& grid) override {
    DeviceScope scope(device_);
    tv_gradient(as_gpu(x), as_gpu(g), grid, s_);
  }

  void gradient_adjoint(const BackendVector& g, BackendVector& x, const ImageGrid& grid) override {
    DeviceScope scope(device_);
    tv_gradient_adjoint(as_gpu(g), as_gpu(x), grid, s_);
  }

  void tv_shrink(const BackendVector& g, BackendVector& z, BackendVector& u, const ImageGrid& grid,
                 double t) override {
    DeviceScope scope(device_);
    gpu::tv_shrink(as_gpu(g), as_gpu(z), as_gpu(u), grid, t, s_);
  }

  std::vector<cfloat> grid_scatter(const Points& k, const std::vector<cfloat>& weighted_data, const ImageGrid& image,
                                   const ImageGrid& over, const GridKernel& kernel) override {
    DeviceScope scope(device_);
    const DeviceTrajectory& traj = on_device(k);
    require_samples(traj, weighted_data.size(), "grid_scatter", "data size");
    return gpu::grid_scatter(traj, weighted_data, image, over, kernel, ScatterMethod::Auto, s_);
  }

  // Scatter, inverse FFT and crop on the device: only the image window crosses
  // to the host (at 128^3 with 2x oversampling, 16 MiB instead of 3 x 128 MiB).
  std::vector<cfloat> grid_to_image(const Points& k, const std::vector<cfloat>& weighted_data,
                                    const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel) override {
    DeviceScope scope(device_);
    const DeviceTrajectory& traj = on_device(k);
    require_samples(traj, weighted_data.size(), "grid_to_image", "data size");
    DeviceBuffer<float2> grid =
        gpu::grid_scatter_on_device(traj, weighted_data, image, over, kernel, ScatterMethod::Auto, s_);
    const std::string what = "the gridding image " + dims_string(image);
    DeviceBuffer<float2> work(over.voxels(), what), out(image.voxels(), what);
    gpu::centered_idft_window(grid.get(), work.get(), over, image, out.get(), s_);
    std::vector<cfloat> host(image.voxels());
    gpu::download(out.get(), host.size(), as_f2(host.data()), s_);
    return host;
  }

  void centered_idft(std::vector<cfloat>& grid, const ImageGrid& dims) override {
    DeviceScope scope(device_);
    gpu::centered_idft(grid, dims, s_);
  }

  // ---- slabs, for the multi-GPU backend below (exact kernels only)

  // FhD on slices [a0, a0 + h) of the image's last axis (z in 3D, y in 2D).
  std::vector<cfloat> fhd_slab(const Points& k, const std::vector<cfloat>& mu, const ImageGrid& grid, int a0, int h,
                               const FhdOptions& opt) {
    DeviceScope scope(device_);
    const DeviceTrajectory& traj = on_device(k);
    require_samples(traj, mu.size(), "fhd", "mu size");
    const int axis = grid.nz > 1 ? 2 : 1;
    int origin[3] = {0, 0, 0}, box[3] = {grid.nx, grid.ny, grid.nz};
    origin[axis] = a0;
    box[axis] = h;
    const std::string what = "a slab of the FhD image on " + dims_string(grid);
    DeviceBuffer<float2> w(mu.size(), what), shifted(mu.size(), what);
    gpu::upload(as_f2(mu.data()), mu.size(), w.get(), s_);
    DeviceBuffer<float2> out(std::size_t(box[0]) * box[1] * box[2], what);
    gather_box(traj, w.get(), grid, origin, box, out.get(), shifted, opt, false);
    std::vector<cfloat> host(out.size());
    gpu::download(out.get(), host.size(), as_f2(host.data()), s_);
    return host;
  }

  // Slices [a0, a0 + h) of Q's Hermitian half box (its mirror axis: z in 3D, y in 2D).
  std::vector<cfloat> q_half_slab(const Points& k, const std::vector<float>& w, const ImageGrid& grid, int a0, int h,
                                  const FhdOptions& opt) {
    DeviceScope scope(device_);
    const DeviceTrajectory& traj = on_device(k);
    DeviceBuffer<float2> wc = q_weights(traj, w);
    const int axis = grid.nz > 1 ? 2 : 1;
    int origin[3] = {0, 0, 0}, box[3];
    q_half_box(grid, box);
    origin[axis] = a0;
    box[axis] = h;
    DeviceBuffer<float2> shifted(traj.m, "cmpQ shifted weights");
    DeviceBuffer<float2> out(std::size_t(box[0]) * box[1] * box[2], "a slab of Q's half box");
    gather_box(traj, wc.get(), grid, origin, box, out.get(), shifted, opt);
    std::vector<cfloat> host(out.size());
    gpu::download(out.get(), host.size(), as_f2(host.data()), s_);
    return host;
  }

  // Q from a half box computed in slabs elsewhere: the faces and the assembly here.
  VecPtr q_resident_from_half(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                              const FhdOptions& opt, const std::vector<cfloat>& half) {
    DeviceScope scope(device_);
    auto v = std::make_unique<GpuVector>(0, "Q");
    v->buf = q_device(k, w, grid, opt, &half);
    return v;
  }

  // The box q_from_half gathers: the mirror axis's slices 0..n of the doubled grid.
  static void q_half_box(const ImageGrid& img, int box[3]) {
    const ImageGrid d = img.doubled();
    const bool is3d = d.nz > 1;
    const int n = is3d ? img.nz : img.ny;
    box[0] = d.nx;
    box[1] = is3d ? d.ny : n + 1;
    box[2] = is3d ? n + 1 : 1;
  }

 private:
  static float2* as_f2(cfloat* p) { return reinterpret_cast<float2*>(p); }
  static const float2* as_f2(const cfloat* p) { return reinterpret_cast<const float2*>(p); }

  // Q on the doubled grid, left on the device: the exact Hermitian-half gather or the NUFFT.
  DeviceBuffer<float2> q_device(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                                const FhdOptions& opt, const std::vector<cfloat>* half = nullptr) {
    const DeviceTrajectory& traj = on_device(k);
    DeviceBuffer<float2> wc = q_weights(traj, w);
    if (opt.method == FhdMethod::Nufft) return nufft_q(traj, wc.get(), grid, opt.nufft_tol);
    return q_from_half(traj, wc.get(), grid, opt, half);
  }

  // Q's weights |Phi|^2 as complex values on the device (w empty: all 1).
  DeviceBuffer<float2> q_weights(const DeviceTrajectory& traj, const std::vector<float>& w) {
    if (!w.empty()) require_samples(traj, w.size(), "q", "weights size");
    const std::size_t m = traj.m;
    const std::string what = "cmpQ weights (" + std::to_string(m) + " samples)";
    DeviceBuffer<float2> wc(m, what);
    if (w.empty()) {
      launch_fill(make_float2(1.f, 0.f), wc.get(), m, s_);
    } else {
      DeviceBuffer<float> wr(m, what);
      gpu::upload(w.data(), m, wr.get(), s_);
      launch_real_to_complex(wr.get(), wc.get(), m, s_);
      CUDA_CHECK(cudaStreamSynchronize(s_));  // wr is freed at scope end
    }
    return wc;
  }

  // Q by a type 1 onto the doubled grid. Its plan (a fine grid 4x the image
  // per axis) is made here and dropped: Q is computed once per trajectory.
  DeviceBuffer<float2> nufft_q(const DeviceTrajectory& traj, const float2* w, const ImageGrid& grid, double tol) {
    NufftOptions o;
    o.tol = tol;
    // Q's fine grid is 8x the image plan's, so its bins hold fewer points:
    // staging 64 kernel values at a time, not 128, measured 10.8 ms against
    // 13.0 on the H100 (1,536,000 radial points, 512^3; `bench-nufft --sweep`).
    o.chunk = 64;
    NufftPlan plan(grid.doubled(), grid, o, s_);
    plan.set_points(traj.kx.get(), traj.ky.get(), traj.kz.get(), traj.m);
    DeviceBuffer<float2> q(grid.doubled().voxels(), "Q on the doubled grid " + dims_string(grid.doubled()));
    plan.type1(w, q.get());
    CUDA_CHECK(cudaStreamSynchronize(s_));  // the plan's buffers go at scope end
    return q;
  }

  std::vector<cfloat> field_apply(const FieldGather& g, const std::vector<cfloat>& in, std::size_t n_out,
                                  bool adjoint) {
    const std::string what = std::string("the field model's ") + (adjoint ? "adjoint" : "forward");
    DeviceBuffer<float2> a(in.size(), what), b(n_out, what);
    gpu::upload(as_f2(in.data()), in.size(), a.get(), s_);
    if (adjoint)
      g.adjoint(a.get(), b.get());
    else
      g.forward(a.get(), b.get());
    std::vector<cfloat> out(n_out);
    gpu::download(b.get(), n_out, as_f2(out.data()), s_);
    return out;
  }

  static void require_samples(const DeviceTrajectory& traj, std::size_t n, const char* where, const char* field) {
    if (n != traj.m)
      throw InputError(where, field, std::to_string(n),
                       "must equal the trajectory's " + std::to_string(traj.m) + " samples");
  }

  // out = sum_m w_m exp(+i 2 pi k_m . x) on g through the kernel table.
  // out = sum_m w_m exp(i 2 pi k_m . x) on g, with the kernel the options name
  // and its tuned launch configuration (cuda/gather/tune.hpp) when a profile has one.
  void gather_into(const DeviceTrajectory& traj, const float2* w, const OutGrid& g, const FhdOptions& opt,
                   float2* out) {
    if (g.points() == 0) return;
    const KernelVariant& v = find_kernel(opt.kernel.empty() ? default_kernel(opt.trig) : opt.kernel);
    if (traj.m == 0) {
      launch_fill(make_float2(0.f, 0.f), out, g.points(), s_);
      return;
    }
    const SampleSet s{traj.kx.get(), traj.ky.get(), traj.kz.get(), w, traj.m};
    v.launch(s, g, out, opt.trig, tuned_config(v.name, opt.trig, tune_dir_), s_);
  }

  // A box of the doubled grid starting at `origin` (per axis) is a kernel
  // output grid whose coordinates are shifted by (origin + b/2 - L/2)/n.
  static double box_shift(int origin, int box, int len, int n) {
    return len > 1 ? double(origin + box / 2 - len / 2) / double(n) : 0.0;
  }

  // A box of `full` (the doubled grid for Q, the image for FhD) at `origin`.
  void gather_box(const DeviceTrajectory& traj, const float2* w, const ImageGrid& img, const int origin[3],
                  const int box[3], float2* out, DeviceBuffer<float2>& shifted, const FhdOptions& opt,
                  bool doubled = true) {
    const ImageGrid d = doubled ? img.doubled() : img;
    const SampleSet s{traj.kx.get(), traj.ky.get(), traj.kz.get(), w, traj.m};
    launch_phase_shift(s, box_shift(origin[0], box[0], d.nx, img.nx), box_shift(origin[1], box[1], d.ny, img.ny),
                       box_shift(origin[2], box[2], d.nz, img.nz), shifted.get(), s_);
    gather_into(traj, shifted.get(), OutGrid{box[0], box[1], box[2], img.nx, img.ny, img.nz}, opt, out);
  }

  // Q(-y) = conj(Q(y)): compute the mirror axis's slices 0..n (z in 3D, y in
  // 2D) and the faces through index 0 whose mirror is off the grid (lag +n);
  // the rest is conjugate mirrors. About half the pairs of the full grid.
  // With `half_host` (the half box computed elsewhere, by slabs on other
  // GPUs), only the faces are gathered here.
  DeviceBuffer<float2> q_from_half(const DeviceTrajectory& traj, const float2* w, const ImageGrid& img,
                                   const FhdOptions& opt, const std::vector<cfloat>* half_host = nullptr) {
    const ImageGrid d = img.doubled();
    const bool is3d = d.nz > 1;
    const int n = is3d ? img.nz : img.ny, rest = n - 1;
    int half_box[3];
    q_half_box(img, half_box);
    const int zero[3] = {0, 0, 0};
    const int face0_org[3] = {0, is3d ? 0 : n + 1, is3d ? n + 1 : 0};
    const int face0_box[3] = {1, is3d ? d.ny : rest, is3d ? rest : 1};
    const int face1_org[3] = {1, 0, n + 1};
    const int face1_box[3] = {d.nx - 1, 1, is3d ? rest : 0};
    const std::string what = "Q on the doubled grid " + dims_string(d);
    DeviceBuffer<float2> shifted(traj.m, "cmpQ shifted weights");
    DeviceBuffer<float2> half(std::size_t(half_box[0]) * half_box[1] * half_box[2], what);
    DeviceBuffer<float2> face0(std::size_t(face0_box[1]) * face0_box[2], what);
    DeviceBuffer<float2> face1(is3d ? std::size_t(face1_box[0]) * face1_box[2] : 0, what);
    if (half_host) {
      if (half_host->size() != half.size())
        throw std::invalid_argument("gpu backend: Q's half box has " + std::to_string(half_host->size()) +
                                    " values, expected " + std::to_string(half.size()));
      gpu::upload(as_f2(half_host->data()), half.size(), half.get(), s_);
    } else {
      gather_box(traj, w, img, zero, half_box, half.get(), shifted, opt);
    }
    gather_box(traj, w, img, face0_org, face0_box, face0.get(), shifted, opt);
    if (is3d) gather_box(traj, w, img, face1_org, face1_box, face1.get(), shifted, opt);
    DeviceBuffer<float2> q(d.voxels(), what);
    launch_assemble_q(half.get(), face0.get(), face1.get(), d.nx, d.ny, d.nz, q.get(), s_);
    CUDA_CHECK(cudaStreamSynchronize(s_));  // the boxes are freed at scope end
    return q;
  }

  int device_;
  std::string tune_dir_;  // GpuOptions::tune_dir
  std::string desc_;
  cudaStream_t s_ = nullptr;
  std::unique_ptr<GpuVectorOps> vec_;
};

// One trajectory uploaded to every GPU of a multi-GPU backend.
class MultiPoints : public Points {
 public:
  explicit MultiPoints(const Trajectory& t) : Points(t) {}
  std::vector<std::unique_ptr<Points>> parts;  // parts[i] on the backend's GPU i
};

const MultiPoints& multi_points(const Points& k) {
  const auto* p = dynamic_cast<const MultiPoints*>(&k);
  if (!p) throw std::invalid_argument("multi-GPU backend: got points that another backend uploaded");
  return *p;
}

// Slices [a0, a0 + h) of `len` for part i of `parts`, in proportion (the
// first len % parts get one more): every slice once, none empty while len >= parts.
std::pair<int, int> slab(int len, int parts, int i) {
  const int base = len / parts, extra = len % parts;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

// All GPUs of a host (docs/gpu-backend.md, "Several GPUs"): the exact FhD and
// Q's Hermitian half are split into slabs of voxels along the last axis, one
// per GPU, each with the whole trajectory (no reduction: every voxel has one
// owner), computed side by side on one host thread per GPU; Q is assembled,
// and everything else (CG, the NUFFT, gridding, TV) runs, on the first GPU.
// A device may be listed twice (tests split slabs on one GPU).
class MultiGpuBackend : public Backend {
 public:
  MultiGpuBackend(const std::vector<int>& devices, const GpuOptions& options) {
    if (devices.size() < 2) throw std::invalid_argument("multi-GPU backend: needs at least 2 devices");
    for (int d : devices) gpus_.push_back(std::make_unique<GpuBackend>(d, options));
    std::string list;
    for (int d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
    name_ = "gpus " + list + ": " + gpus_[0]->name();
  }

  std::string name() const override { return name_; }
  bool is_gpu() const override { return true; }
  VectorOps& vec() override { return first().vec(); }

  std::unique_ptr<Points> upload_points(const Trajectory& t) override {
    auto p = std::make_unique<MultiPoints>(t);
    for (auto& g : gpus_) p->parts.push_back(g->upload_points(t));
    return p;
  }

  std::vector<cfloat> mu(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) override {
    return first().mu(phi, data);
  }
  VecPtr mu_resident(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) override {
    return first().mu_resident(phi, data);  // vec() is the first GPU's
  }
  VecPtr fhd_resident(const Points& k, const BackendVector& mu, const ImageGrid& grid,
                      const FhdOptions& opt) override {
    if (opt.method == FhdMethod::Nufft) return first().fhd_resident(part0(k), mu, grid, opt);
    return Backend::fhd_resident(k, mu, grid, opt);  // the slabs take mu from the host
  }

  std::vector<cfloat> fhd(const Points& k, const std::vector<cfloat>& mu, const ImageGrid& grid,
                          const FhdOptions& opt) override {
    if (opt.method == FhdMethod::Nufft) return first().fhd(part0(k), mu, grid, opt);
    const MultiPoints& mp = multi_points(k);
    const int len = grid.nz > 1 ? grid.nz : grid.ny;
    return join(on_all(len, [&](std::size_t i, int a0, int h) { return gpus_[i]->fhd_slab(*mp.parts[i], mu, grid, a0, h, opt); }));
  }

  std::vector<cfloat> q(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                        const FhdOptions& opt) override {
    return vec().download(*q_resident(k, w, grid, opt));
  }

  VecPtr q_resident(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                    const FhdOptions& opt) override {
    if (opt.method == FhdMethod::Nufft) return first().q_resident(part0(k), w, grid, opt);
    const MultiPoints& mp = multi_points(k);
    int box[3];
    GpuBackend::q_half_box(grid, box);
    const int len = grid.nz > 1 ? box[2] : box[1];
    const std::vector<cfloat> half =
        join(on_all(len, [&](std::size_t i, int a0, int h) { return gpus_[i]->q_half_slab(*mp.parts[i], w, grid, a0, h, opt); }));
    return first().q_resident_from_half(part0(k), w, grid, opt, half);
  }

  std::vector<cfloat> forward(const Points& k, const std::vector<cfloat>& image, const ImageGrid& grid,
                              const FhdOptions& opt) override {
    return first().forward(part0(k), image, grid, opt);
  }
  // The exact field model runs on the first GPU (not split into slabs yet).
  std::vector<cfloat> field_forward(const Points& k, const FieldData& f, const std::vector<cfloat>& image,
                                    const ImageGrid& grid) override {
    return first().field_forward(part0(k), f, image, grid);
  }
  std::vector<cfloat> field_adjoint(const Points& k, const FieldData& f, const std::vector<cfloat>& data,
                                    const ImageGrid& grid) override {
    return first().field_adjoint(part0(k), f, data, grid);
  }
  std::unique_ptr<NormalOperator> normal(const std::vector<cfloat>& q, const ImageGrid& grid, double lambda) override {
    return first().normal(q, grid, lambda);
  }
  std::unique_ptr<NormalOperator> normal_resident(const BackendVector& q, const ImageGrid& grid,
                                                  double lambda) override {
    return first().normal_resident(q, grid, lambda);
  }
  std::unique_ptr<NormalOperator> preconditioner_resident(const BackendVector& q, const ImageGrid& grid,
                                                          double lambda) override {
    return first().preconditioner_resident(q, grid, lambda);
  }
  std::vector<double> circulant_spectrum(const BackendVector& q, const ImageGrid& grid) override {
    return first().circulant_spectrum(q, grid);
  }
  std::vector<VecPtr> lowres_maps(const Calibration& cal, const ImageGrid& grid, double crop) override {
    return first().lowres_maps(cal, grid, crop);
  }
  std::unique_ptr<NormalOperator> circulant(const std::vector<float>& eig, const ImageGrid& grid) override {
    return first().circulant(eig, grid);
  }
  void gradient(const BackendVector& x, BackendVector& g, const ImageGrid& grid) override {
    first().gradient(x, g, grid);
  }
  void gradient_adjoint(const BackendVector& g, BackendVector& x, const ImageGrid& grid) override {
    first().gradient_adjoint(g, x, grid);
  }
  void tv_shrink(const BackendVector& g, BackendVector& z, BackendVector& u, const ImageGrid& grid,
                 double t) override {
    first().tv_shrink(g, z, u, grid, t);
  }
  std::vector<cfloat> grid_scatter(const Points& k, const std::vector<cfloat>& weighted_data, const ImageGrid& image,
                                   const ImageGrid& over, const GridKernel& kernel) override {
    return first().grid_scatter(part0(k), weighted_data, image, over, kernel);
  }
  std::vector<cfloat> grid_to_image(const Points& k, const std::vector<cfloat>& weighted_data,
                                    const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel) override {
    return first().grid_to_image(part0(k), weighted_data, image, over, kernel);
  }
  void centered_idft(std::vector<cfloat>& grid, const ImageGrid& dims) override { first().centered_idft(grid, dims); }

 private:
  GpuBackend& first() { return *gpus_[0]; }
  static const Points& part0(const Points& k) { return *multi_points(k).parts[0]; }

  // f(i, a0, h) for GPU i's slab of an axis of length len, all GPUs at once
  // (one host thread each); the results in slab order. Every thread ends
  // before the first failure is rethrown.
  template <class F>
  std::vector<std::vector<cfloat>> on_all(int len, F&& f) {
    const std::size_t parts = std::min<std::size_t>(gpus_.size(), std::size_t(std::max(len, 1)));
    std::vector<std::future<std::vector<cfloat>>> running;
    for (std::size_t i = 0; i < parts; ++i) {
      const auto [a0, h] = slab(len, int(parts), int(i));
      running.push_back(std::async(std::launch::async, [&f, i, a0 = a0, h = h] { return f(i, a0, h); }));
    }
    std::vector<std::vector<cfloat>> out;
    std::exception_ptr failed;
    for (auto& r : running) {
      try {
        out.push_back(r.get());
      } catch (...) {
        if (!failed) failed = std::current_exception();
      }
    }
    if (failed) std::rethrow_exception(failed);
    return out;
  }

  // Slabs along the slowest axis are contiguous: joining is concatenation.
  static std::vector<cfloat> join(const std::vector<std::vector<cfloat>>& slabs) {
    std::vector<cfloat> all;
    for (const auto& s : slabs) all.insert(all.end(), s.begin(), s.end());
    return all;
  }

  std::vector<std::unique_ptr<GpuBackend>> gpus_;
  std::string name_;
};

}  // namespace

void reset_devices(const std::vector<int>& devices) {
  for (int d : devices) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceReset());
  }
}

bool gpu_usable(std::string* why) {
  try {
    const std::string reason = unusable_reason(0);
    if (why) *why = reason.empty() ? describe(0) : reason;
    return reason.empty();
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

std::unique_ptr<Backend> make_gpu_backend(int device, const GpuOptions& options) {
  return std::make_unique<GpuBackend>(device, options);
}

std::unique_ptr<Backend> make_gpu_backend(const std::vector<int>& devices, const GpuOptions& options) {
  if (devices.empty()) throw InputError("--gpus", "devices", "none", "needs at least one GPU");
  if (devices.size() == 1) return make_gpu_backend(devices[0], options);
  return std::make_unique<MultiGpuBackend>(devices, options);
}

}  // namespace fhd
