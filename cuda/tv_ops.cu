// The circulant preconditioner and TV's finite differences and isotropic
// shrinkage on the device. Same definitions as the host references
// (recon/precond.cpp, recon/tv.cpp): D is the forward difference along each
// axis of length > 1, 0 at the far end; images are stored x fastest, one
// difference image per axis in x, y, z order.
#include <stdexcept>
#include <string>

#include "cuda/gpu_internal.hpp"
#include "cuda/tv_ops.hpp"
#include "recon/tv.hpp"

namespace fhd::gpu {
namespace {

constexpr unsigned kThreads = 256;

#define GRID_STRIDE(i, n)                                                   \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; \
       i < (n); i += std::size_t(gridDim.x) * blockDim.x)

__device__ inline int coord(std::size_t v, long long s, int len) { return int((v / s) % len); }

__global__ void scale_real_kernel(float2* __restrict__ a, const float* __restrict__ w, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float2 v = a[i];
    a[i] = make_float2(v.x * w[i], v.y * w[i]);
  }
}

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

__global__ void shrink_kernel(const float2* __restrict__ g, float2* __restrict__ z, float2* __restrict__ u, int d,
                              std::size_t n, double t) {
  GRID_STRIDE(v, n) {
    float2 w[3];
    double norm2 = 0.0;
    for (int k = 0; k < d; ++k) {
      const float2 a = g[k * n + v], b = u[k * n + v];
      w[k] = make_float2(a.x + b.x, a.y + b.y);
      norm2 += double(w[k].x) * w[k].x + double(w[k].y) * w[k].y;
    }
    const double norm = sqrt(norm2);
    const float keep = norm > t ? float(1.0 - t / norm) : 0.f;
    for (int k = 0; k < d; ++k) {
      const float2 zk = make_float2(keep * w[k].x, keep * w[k].y);
      z[k * n + v] = zk;
      u[k * n + v] = make_float2(w[k].x - zk.x, w[k].y - zk.y);
    }
  }
}

class GpuCirculant : public NormalOperator {
 public:
  GpuCirculant(const std::vector<float>& eig, const ImageGrid& grid, cudaStream_t s) : n_(grid), s_(s) {
    if (eig.size() != grid.voxels())
      throw InputError("gpu circulant", "eigenvalues", std::to_string(eig.size()),
                       "expected " + std::to_string(grid.voxels()));
    const std::string what = "the circulant preconditioner";
    require_free(double(grid.voxels()) * sizeof(float) + CufftPlan::work_bytes(grid), what);
    eig_.allocate(grid.voxels(), what + " (eigenvalues)");
    std::vector<float> scaled(eig);
    for (float& e : scaled) e *= float(1.0 / double(grid.voxels()));  // the inverse FFT's 1/N
    CUDA_CHECK(cudaMemcpyAsync(eig_.get(), scaled.data(), scaled.size() * sizeof(float), cudaMemcpyHostToDevice, s_));
    plan_ = std::make_unique<CufftPlan>(grid, s_, what);
    CUDA_CHECK(cudaStreamSynchronize(s_));  // `scaled` goes away on return
  }

  void apply(const BackendVector& xv, BackendVector& yv) override {
    const GpuVector& x = as_gpu(xv);
    GpuVector& y = as_gpu(yv);
    if (x.size() != n_.voxels() || y.size() != n_.voxels())
      throw std::invalid_argument("gpu circulant: vector sizes differ from the grid's voxels");
    if (&xv != &yv) CUDA_CHECK(cudaMemcpyAsync(y.buf.get(), x.buf.get(), x.buf.bytes(), cudaMemcpyDeviceToDevice, s_));
    plan_->exec(y.buf.get(), CUFFT_FORWARD);
    scale_real_kernel<<<blocks_for(n_.voxels(), kThreads), kThreads, 0, s_>>>(y.buf.get(), eig_.get(), n_.voxels());
    CUDA_CHECK_LAUNCH();
    plan_->exec(y.buf.get(), CUFFT_INVERSE);
  }

 private:
  ImageGrid n_;
  cudaStream_t s_;
  DeviceBuffer<float> eig_;
  std::unique_ptr<CufftPlan> plan_;
};

void check_sizes(std::size_t image, std::size_t grad, const ImageGrid& grid, const char* what) {
  const std::size_t n = grid.voxels();
  if (image != n || grad != n * std::size_t(gradient_axes(grid)))
    throw std::invalid_argument(std::string("gpu ") + what + ": vector sizes do not match the grid");
}

}  // namespace

std::unique_ptr<NormalOperator> make_circulant_operator(const std::vector<float>& eig, const ImageGrid& grid,
                                                        cudaStream_t s) {
  return std::make_unique<GpuCirculant>(eig, grid, s);
}

void tv_gradient(const GpuVector& x, GpuVector& g, const ImageGrid& grid, cudaStream_t s) {
  check_sizes(x.size(), g.size(), grid, "gradient");
  const std::size_t n = grid.voxels();
  gradient_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(x.buf.get(), g.buf.get(), gradient_axes_of(grid), n);
  CUDA_CHECK_LAUNCH();
}

void tv_gradient_adjoint(const GpuVector& g, GpuVector& x, const ImageGrid& grid, cudaStream_t s) {
  check_sizes(x.size(), g.size(), grid, "gradient adjoint");
  const std::size_t n = grid.voxels();
  gradient_adjoint_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(g.buf.get(), x.buf.get(), gradient_axes_of(grid), n);
  CUDA_CHECK_LAUNCH();
}

void tv_shrink(const GpuVector& g, GpuVector& z, GpuVector& u, const ImageGrid& grid, double t, cudaStream_t s) {
  check_sizes(grid.voxels(), g.size(), grid, "tv shrink");
  check_sizes(grid.voxels(), z.size(), grid, "tv shrink");
  check_sizes(grid.voxels(), u.size(), grid, "tv shrink");
  const std::size_t n = grid.voxels();
  shrink_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(g.buf.get(), z.buf.get(), u.buf.get(),
                                                             gradient_axes(grid), n, t);
  CUDA_CHECK_LAUNCH();
}

}  // namespace fhd::gpu
