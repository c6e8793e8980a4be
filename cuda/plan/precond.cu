// The circulant preconditioner of T + lambda D^H D and its spectrum on the
// device, from Q on the doubled grid: the same fold, FFT and floor as the host
// reference (recon/plan/precond.cpp).
#include <stdexcept>
#include <string>

#include "cuda/device/gpu_internal.hpp"
#include "cuda/plan/precond.hpp"
#include "recon/plan/precond.hpp"

namespace fhd::gpu {
namespace {

constexpr unsigned kThreads = 256;

__global__ void scale_real_kernel(float2* __restrict__ a, const float* __restrict__ w, std::size_t n) {
  GRID_STRIDE(i, n) {
    const float2 v = a[i];
    a[i] = make_float2(v.x * w[i], v.y * w[i]);
  }
}

// T. Chan's weight of a lag, narrowed by the smoothing triangle (recon/plan/precond.cpp's lag_weight).
__device__ inline double lag_weight(int lag, int n, double smooth) {
  const double a = fabs(double(lag));
  double w = 1.0 - a / n;
  if (smooth > 0.0) w *= fmax(0.0, 1.0 - a / fmax(1.0, n / smooth));
  return w;
}

// Circulant index c of an axis folds doubled-grid taps j = c + n (lag c) and
// j = c (lag c - n); an axis of doubled length 1 has the one tap j = 0.
__device__ inline int axis_taps(int c, int len, int n, double smooth, int j[2], double w[2]) {
  if (len == 1) {
    j[0] = 0;
    w[0] = 1.0;
    return 1;
  }
  j[0] = c + n;
  w[0] = lag_weight(c, n, smooth);
  j[1] = c;
  w[1] = lag_weight(c - n, n, smooth);
  return 2;
}

// c = the fold of Q onto the N grid (a gather: one output per thread).
__global__ void fold_kernel(const float2* __restrict__ q, int3 n, int3 len, double smooth, float2* __restrict__ c) {
  const std::size_t total = std::size_t(n.x) * n.y * n.z;
  GRID_STRIDE(v, total) {
    const int cx = int(v % n.x), cy = int((v / n.x) % n.y), cz = int(v / (std::size_t(n.x) * n.y));
    int jx[2], jy[2], jz[2];
    double wx[2], wy[2], wz[2];
    const int ax = axis_taps(cx, len.x, n.x, smooth, jx, wx), ay = axis_taps(cy, len.y, n.y, smooth, jy, wy),
              az = axis_taps(cz, len.z, n.z, smooth, jz, wz);
    double re = 0.0, im = 0.0;
    for (int a = 0; a < az; ++a)
      for (int b = 0; b < ay; ++b)
        for (int e = 0; e < ax; ++e) {
          const double w = wx[e] * wy[b] * wz[a];
          if (w <= 0.0) continue;
          const float2 t = q[jx[e] + std::size_t(len.x) * (jy[b] + std::size_t(len.y) * jz[a])];
          re += w * t.x;
          im += w * t.y;
        }
    c[v] = make_float2(float(re), float(im));
  }
}

// The preconditioner's eigenvalues from FFT(c): 1 / max(Re + lambda lap, lo),
// times the inverse FFT's 1/N.
__global__ void inverse_eig_kernel(const float2* __restrict__ f, int3 n, double lambda, double lo, double inv_n,
                                   float* __restrict__ eig) {
  const std::size_t total = std::size_t(n.x) * n.y * n.z;
  const double two_pi = 6.283185307179586;
  GRID_STRIDE(v, total) {
    const int fr[3] = {int(v % n.x), int((v / n.x) % n.y), int(v / (std::size_t(n.x) * n.y))};
    const int len[3] = {n.x, n.y, n.z};
    double lap = 0.0;
    for (int a = 0; a < 3; ++a)
      if (len[a] > 1) lap += 2.0 - 2.0 * cos(two_pi * fr[a] / len[a]);
    const double e = double(f[v].x) + lambda * lap;
    eig[v] = float(inv_n / fmax(e, lo));
  }
}

class GpuCirculant : public HermitianOp {
 public:
  GpuCirculant(Device& dev, const std::vector<float>& eig, const ImageGrid& grid)
      : HermitianOp(dev, image_shape(grid), "M"), n_(grid), s_(stream_of(dev)) {
    if (eig.size() != grid.voxels())
      throw InputError("gpu circulant", "eigenvalues", std::to_string(eig.size()),
                       "expected " + std::to_string(grid.voxels()));
    const std::string what = "the circulant preconditioner";
    require_free(double(grid.voxels()) * sizeof(float), what);
    eig_.allocate(grid.voxels(), what + " (eigenvalues)");
    std::vector<float> scaled(eig);
    for (float& e : scaled) e *= float(1.0 / double(grid.voxels()));  // the inverse FFT's 1/N
    CUDA_CHECK(cudaMemcpyAsync(eig_.get(), scaled.data(), scaled.size() * sizeof(float), cudaMemcpyHostToDevice, s_));
    plan_ = std::make_unique<CufftPlan>(grid, s_, what);
    CUDA_CHECK(cudaStreamSynchronize(s_));  // `scaled` goes away on return
  }

  // From eigenvalues already on the device, already scaled by 1/N, and the
  // grid's plan on stream s (made once, for the eigenvalues and the applies).
  GpuCirculant(Device& dev, DeviceBuffer<float>&& scaled_eig, std::unique_ptr<CufftPlan> plan, const ImageGrid& grid)
      : HermitianOp(dev, image_shape(grid), "M"),
        n_(grid), s_(stream_of(dev)), eig_(std::move(scaled_eig)), plan_(std::move(plan)) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    DeviceScope scope(device());
    float2* out = dptr(y);
    if (x.data() != y.data())
      CUDA_CHECK(cudaMemcpyAsync(out, dptr(x), x.size() * sizeof(float2), cudaMemcpyDeviceToDevice, s_));
    plan_->exec(out, CUFFT_FORWARD);
    scale_real_kernel<<<blocks_for(n_.voxels(), kThreads), kThreads, 0, s_>>>(out, eig_.get(), n_.voxels());
    CUDA_CHECK_LAUNCH();
    plan_->exec(out, CUFFT_INVERSE);
  }

 private:
  ImageGrid n_;
  cudaStream_t s_;
  DeviceBuffer<float> eig_;
  std::unique_ptr<CufftPlan> plan_;
};

}  // namespace

OpPtr make_circulant_operator(Device& dev, const std::vector<float>& eig, const ImageGrid& grid) {
  DeviceScope scope(dev);
  return std::make_shared<GpuCirculant>(dev, eig, grid);
}

namespace {

// FFT_N of Q folded onto the N grid (the smoothed T. Chan circulant's column,
// recon/plan/precond.hpp) and the eigenvalues' mean, which is the lag-0 fold c[0].
struct FoldedSpectrum {
  DeviceBuffer<float2> f;
  double mean = 0;
};

FoldedSpectrum folded_spectrum(const float2* q, std::size_t count, const ImageGrid& grid, CufftPlan& plan,
                               cudaStream_t s, const std::string& what, double extra_bytes) {
  const ImageGrid d = grid.doubled();
  if (count != d.voxels())
    throw InputError("gpu preconditioner", "q size", std::to_string(count),
                     "expected " + std::to_string(d.voxels()) + " (the doubled grid " + dims_string(d) + ")");
  const std::size_t n = grid.voxels();
  require_free(double(n) * sizeof(float2) + extra_bytes, what);
  FoldedSpectrum out;
  out.f.allocate(n, what + " (folded Q)");
  const int3 nn = make_int3(grid.nx, grid.ny, grid.nz), len = make_int3(d.nx, d.ny, d.nz);
  fold_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(q, nn, len, kPrecondSmoothCells, out.f.get());
  CUDA_CHECK_LAUNCH();
  float2 c0{};
  CUDA_CHECK(cudaMemcpyAsync(&c0, out.f.get(), sizeof(float2), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  out.mean = c0.x;
  plan.exec(out.f.get(), CUFFT_FORWARD);
  return out;
}

}  // namespace

OpPtr make_circulant_preconditioner(Device& dev, const float2* q, std::size_t count, const ImageGrid& grid,
                                    double lambda) {
  DeviceScope scope(dev);
  const cudaStream_t s = stream_of(dev);
  const std::string what = "the circulant preconditioner";
  const std::size_t n = grid.voxels();
  auto plan = std::make_unique<CufftPlan>(grid, s, what);
  FoldedSpectrum c = folded_spectrum(q, count, grid, *plan, s, what, double(n) * sizeof(float));
  DeviceBuffer<float> eig(n, what + " (eigenvalues)");
  // The floor is relative to the mean eigenvalue: the periodic Laplacian's mean is 2 per axis of length > 1.
  const int axes = (grid.nx > 1) + (grid.ny > 1) + (grid.nz > 1);
  const double mean = c.mean + lambda * 2.0 * axes;
  const int3 nn = make_int3(grid.nx, grid.ny, grid.nz);
  inverse_eig_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(c.f.get(), nn, lambda, kPrecondFloor * mean,
                                                                  1.0 / double(n), eig.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));  // c goes at scope end
  return std::make_shared<GpuCirculant>(dev, std::move(eig), std::move(plan), grid);
}

std::vector<double> circulant_spectrum(const float2* q, std::size_t count, const ImageGrid& grid, cudaStream_t s) {
  CufftPlan plan(grid, s, "the circulant spectrum");
  FoldedSpectrum c = folded_spectrum(q, count, grid, plan, s, "the circulant spectrum", 0.0);
  std::vector<float2> host(grid.voxels());
  CUDA_CHECK(cudaMemcpyAsync(host.data(), c.f.get(), host.size() * sizeof(float2), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> eig(host.size());
  for (std::size_t i = 0; i < eig.size(); ++i) eig[i] = host[i].x;  // real: the column is Hermitian
  return eig;
}

}  // namespace fhd::gpu
