// Finite differences, their Laplacian, and the proxes' shrinkage on the
// device: the same definitions and arithmetic as the host references
// (recon/ops/diff.cpp, recon/solvers/prox.cpp). D is the forward difference
// along each axis of length > 1, 0 at the far end; images are stored x
// fastest, one difference image per axis in x, y, z order.
#include <stdexcept>
#include <string>

#include "cuda/device/gpu_internal.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "recon/ops/diff.hpp"
#include "recon/solvers/prox.hpp"

namespace fhd::gpu {
namespace {

constexpr unsigned kThreads = 256;

__device__ inline int coord(std::size_t v, long long s, int len) { return int((v / s) % len); }

__global__ void gradient_kernel(const float2* __restrict__ x, float2* __restrict__ g, GradientAxes a, std::size_t n) {
  GRID_STRIDE(v, n) {
    const float2 xv = x[v];
    for (int k = 0; k < a.count; ++k) {
      float2 d = make_float2(0.f, 0.f);
      if (coord(v, a.stride[k], a.len[k]) < a.len[k] - 1) {
        const float2 xn = x[v + a.stride[k]];
        d = make_float2(xn.x - xv.x, xn.y - xv.y);
      }
      g[k * n + v] = d;
    }
  }
}

__global__ void gradient_adjoint_kernel(const float2* __restrict__ g, float2* __restrict__ x, GradientAxes a, std::size_t n) {
  GRID_STRIDE(v, n) {
    float2 s = make_float2(0.f, 0.f);
    for (int k = 0; k < a.count; ++k) {
      const float2* gk = g + k * n;
      const int c = coord(v, a.stride[k], a.len[k]);
      if (c < a.len[k] - 1) s = make_float2(s.x - gk[v].x, s.y - gk[v].y);
      if (c > 0) {
        const float2 p = gk[v - a.stride[k]];
        s = make_float2(s.x + p.x, s.y + p.y);
      }
    }
    x[v] = s;
  }
}

// (D^H D x)_i along one axis: (x_i - x_{i-1}) [if i > 0] + (x_i - x_{i+1}) [if i < n-1].
__device__ float2 laplacian_axis(const float2* x, std::size_t i, int c, int n, std::size_t stride) {
  float2 r = make_float2(0.f, 0.f);
  if (n < 2) return r;
  const float2 xi = x[i];
  if (c > 0) {
    const float2 xm = x[i - stride];
    r.x += xi.x - xm.x;
    r.y += xi.y - xm.y;
  }
  if (c < n - 1) {
    const float2 xp = x[i + stride];
    r.x += xi.x - xp.x;
    r.y += xi.y - xp.y;
  }
  return r;
}

// y += lambda D^H D x (the arithmetic the Toeplitz operator's fused crop had).
__global__ void laplacian_add_kernel(const float2* __restrict__ x, float2* __restrict__ y, int3 n, float lambda) {
  const std::size_t total = std::size_t(n.x) * n.y * n.z;
  GRID_STRIDE(i, total) {
    const int px = int(i % n.x), py = int((i / n.x) % n.y), pz = int(i / (std::size_t(n.x) * n.y));
    const float2 a = laplacian_axis(x, i, px, n.x, 1);
    const float2 b = laplacian_axis(x, i, py, n.y, std::size_t(n.x));
    const float2 c = laplacian_axis(x, i, pz, n.z, std::size_t(n.x) * n.y);
    float2 v = y[i];
    v.x += lambda * (a.x + b.x + c.x);
    v.y += lambda * (a.y + b.y + c.y);
    y[i] = v;
  }
}

__global__ void soft_kernel(const float2* v, float2* out, std::size_t n, double t) {
  GRID_STRIDE(i, n) {
    const float2 a = v[i];
    const double m = sqrt(double(a.x) * a.x + double(a.y) * a.y);
    const float keep = m > t ? float(1.0 - t / m) : 0.f;
    out[i] = make_float2(keep * a.x, keep * a.y);
  }
}

// The fused TV shrink's arithmetic this replaced: norms in double from float
// terms, the factor rounded to float once.
__global__ void group_soft_kernel(const float2* v, float2* out, int parts, std::size_t n, double t) {
  GRID_STRIDE(i, n) {
    float2 w[3];
    double norm2 = 0.0;
    for (int k = 0; k < parts; ++k) {
      w[k] = v[k * n + i];
      norm2 += double(w[k].x) * w[k].x + double(w[k].y) * w[k].y;
    }
    const double norm = sqrt(norm2);
    const float keep = norm > t ? float(1.0 - t / norm) : 0.f;
    for (int k = 0; k < parts; ++k) out[k * n + i] = make_float2(keep * w[k].x, keep * w[k].y);
  }
}

void check_sizes(const DeviceVector& image, const DeviceVector& grad, const ImageGrid& grid, const char* what) {
  const std::size_t n = grid.voxels();
  if (image.size() != n || grad.size() != n * std::size_t(gradient_axes(grid)))
    throw std::invalid_argument(std::string("gpu ") + what + ": vector sizes do not match the grid");
}

class GpuDiff : public DiffKernels {
 public:
  explicit GpuDiff(Device& dev) : dev_(dev) {}
  void gradient(const DeviceVector& x, DeviceVector& g, const ImageGrid& grid) override {
    DeviceScope scope(dev_);
    check_sizes(x, g, grid, "gradient");
    const std::size_t n = grid.voxels();
    gradient_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream_of(dev_)>>>(dptr(x), dptr(g), gradient_axes_of(grid), n);
    CUDA_CHECK_LAUNCH();
  }
  void gradient_adjoint(const DeviceVector& g, DeviceVector& x, const ImageGrid& grid) override {
    DeviceScope scope(dev_);
    check_sizes(x, g, grid, "gradient adjoint");
    const std::size_t n = grid.voxels();
    gradient_adjoint_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream_of(dev_)>>>(dptr(g), dptr(x),
                                                                                         gradient_axes_of(grid), n);
    CUDA_CHECK_LAUNCH();
  }
  void laplacian_add(const DeviceVector& x, DeviceVector& y, double a, const ImageGrid& grid) override {
    DeviceScope scope(dev_);
    if (x.size() != grid.voxels() || y.size() != grid.voxels())
      throw std::invalid_argument("gpu laplacian: vector sizes do not match the grid");
    if (a == 0.0) return;
    const std::size_t n = grid.voxels();
    laplacian_add_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream_of(dev_)>>>(
        dptr(x), dptr(y), make_int3(grid.nx, grid.ny, grid.nz), float(a));
    CUDA_CHECK_LAUNCH();
  }

 private:
  Device& dev_;
};

class GpuProx : public ProxKernels {
 public:
  explicit GpuProx(Device& dev) : dev_(dev) {}
  void soft_threshold(const DeviceVector& v, double t, DeviceVector& out) override {
    DeviceScope scope(dev_);
    require_same_size(v, out, "soft_threshold");
    if (v.size() == 0) return;
    soft_kernel<<<blocks_for(v.size(), kThreads), kThreads, 0, stream_of(dev_)>>>(dptr(v), dptr(out), v.size(), t);
    CUDA_CHECK_LAUNCH();
  }
  void group_soft_threshold(const DeviceVector& v, double t, std::size_t n, int parts, DeviceVector& out) override {
    DeviceScope scope(dev_);
    require_same_size(v, out, "group_soft_threshold");
    if (v.size() != n * std::size_t(parts) || parts > 3)
      throw std::invalid_argument("gpu group_soft_threshold: size is not n * parts (parts <= 3)");
    if (n == 0) return;
    group_soft_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream_of(dev_)>>>(dptr(v), dptr(out), parts, n, t);
    CUDA_CHECK_LAUNCH();
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<DiffKernels> make_gpu_diff(Device& dev) { return std::make_unique<GpuDiff>(dev); }
std::unique_ptr<ProxKernels> make_gpu_prox(Device& dev) { return std::make_unique<GpuProx>(dev); }

}  // namespace fhd::gpu
