// The exact off-resonance model's gathers (cuda/field/field_gather.hpp).
//
// The phase of a (sample, voxel) pair, k.x + f t, is the dot product of the
// sample's (kx, ky, kz, t) with the voxel's (x, y, z, f). So both directions
// are one kernel: each thread owns points of one side (kOwn of them) and streams the
// other side through shared-memory tiles (PMPP's gather with on-chip tiles),
//   out_i = sum_j v_j exp(sign i 2 pi own_i . other_j).
// The adjoint owns voxels and streams samples; the forward the reverse. Sums
// are two-level (each tile, then the total), as the coarsened cmpFhD kernel's:
// a single float sum over ~1M terms loses about 1e-5, which CG amplifies.
#include <string>

#include "core/error.hpp"
#include "cuda/device/blocks.hpp"
#include "cuda/device/check.hpp"
#include "cuda/gather/fhd_common.cuh"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/field/field_gather.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "cuda/nufft/nufft.hpp"

namespace fhd::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 1024;  // streamed points per shared-memory tile (20 KB)

// Each thread owns kOwn points, a block's apart, so one shared-memory read of a
// streamed point serves kOwn pairs (PMPP's thread coarsening). The sine and
// cosine come from the SFU (MUFU.SIN/COS, absolute error about 5e-7 after the
// reduction to one turn), as the book's FastTrig step: validated against float64
// direct sums in the tests and by PSNR against the time-segmented model.
constexpr int kOwn = 2;

template <int Sign>
__global__ void pair_gather(const float4* __restrict__ own, std::size_t n_own, const float4* __restrict__ other,
                            const float2* __restrict__ val, std::size_t n_other, float2* __restrict__ out) {
  __shared__ float4 pos[kTile];
  __shared__ float2 v[kTile];
  const std::size_t base = blockIdx.x * std::size_t(blockDim.x) * kOwn + threadIdx.x;
  float4 a[kOwn];
  float ar[kOwn], ai[kOwn];
#pragma unroll
  for (int o = 0; o < kOwn; ++o) {
    const std::size_t i = base + std::size_t(o) * blockDim.x;
    a[o] = own[i < n_own ? i : 0];  // idle threads still help load tiles
    ar[o] = ai[o] = 0.f;
  }
  for (std::size_t j0 = 0; j0 < n_other; j0 += kTile) {
    const int count = int(n_other - j0 < std::size_t(kTile) ? n_other - j0 : std::size_t(kTile));
    __syncthreads();  // the previous tile is consumed
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
      pos[j] = other[j0 + j];
      v[j] = val[j0 + j];
    }
    __syncthreads();
    float tr[kOwn], ti[kOwn];
#pragma unroll
    for (int o = 0; o < kOwn; ++o) tr[o] = ti[o] = 0.f;
    for (int j = 0; j < count; ++j) {
      const float4 b = pos[j];
      const float2 w = v[j];
#pragma unroll
      for (int o = 0; o < kOwn; ++o) {
        float s, c;
        turn_sincos<TrigMode::Sfu>(fmaf(a[o].x, b.x, fmaf(a[o].y, b.y, fmaf(a[o].z, b.z, a[o].w * b.w))), &s, &c);
        const float sn = Sign > 0 ? s : -s;
        tr[o] += w.x * c - w.y * sn;
        ti[o] += w.x * sn + w.y * c;
      }
    }
#pragma unroll
    for (int o = 0; o < kOwn; ++o) {
      ar[o] += tr[o];
      ai[o] += ti[o];
    }
  }
#pragma unroll
  for (int o = 0; o < kOwn; ++o) {
    const std::size_t i = base + std::size_t(o) * blockDim.x;
    if (i < n_own) out[i] = make_float2(ar[o], ai[o]);
  }
}

__global__ void pack_samples(FieldSamples s, bool volume, float4* __restrict__ out) {
  for (std::size_t m = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; m < s.m;
       m += std::size_t(gridDim.x) * blockDim.x)
    out[m] = make_float4(s.kx[m], s.ky[m], volume ? s.kz[m] : 0.f, s.t[m]);
}

__global__ void pack_voxels(int nx, int ny, int nz, const float* __restrict__ fmap, float4* __restrict__ out) {
  const std::size_t total = std::size_t(nx) * ny * nz;
  for (std::size_t p = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; p < total;
       p += std::size_t(gridDim.x) * blockDim.x) {
    const int ix = int(p % nx), iy = int((p / nx) % ny), iz = int(p / (std::size_t(nx) * ny));
    out[p] = make_float4(float(coord_d(ix, nx, nx)), float(coord_d(iy, ny, ny)), float(coord_d(iz, nz, nz)), fmap[p]);
  }
}

template <int Sign>
void launch_gather(const float4* own, std::size_t n_own, const float4* other, const float2* val, std::size_t n_other,
                   float2* out, cudaStream_t st) {
  if (n_own == 0) return;
  pair_gather<Sign><<<blocks_covering(n_own, kThreads * kOwn), kThreads, 0, st>>>(own, n_own, other, val, n_other, out);
  CUDA_CHECK_LAUNCH();
}

void check_length(const char* field, std::size_t got, std::size_t want) {
  if (got != want)
    throw InputError("field gather", field, std::to_string(got), "must be " + std::to_string(want));
}

}  // namespace

FieldGather::FieldGather(const FieldSamples& s, const ImageGrid& grid, const float* fmap, cudaStream_t st)
    : st_(st) {
  samples_.allocate(s.m, "the field model's samples (" + std::to_string(s.m) + ")");
  voxels_.allocate(grid.voxels(), "the field model's voxels " + dims_string(grid));
  if (s.m) {
    pack_samples<<<blocks_for(s.m, kThreads), kThreads, 0, st>>>(s, grid.nz > 1, samples_.get());
    CUDA_CHECK_LAUNCH();
  }
  pack_voxels<<<blocks_for(grid.voxels(), kThreads), kThreads, 0, st>>>(grid.nx, grid.ny, grid.nz, fmap,
                                                                          voxels_.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(st));  // the caller may free s's arrays and fmap on return
}

void FieldGather::adjoint(const float2* d, float2* out) const {
  if (samples_.size() == 0) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, voxels_.size() * sizeof(float2), st_));
    return;
  }
  launch_gather<+1>(voxels_.get(), voxels_.size(), samples_.get(), d, samples_.size(), out, st_);
}

void FieldGather::forward(const float2* x, float2* out) const {
  launch_gather<-1>(samples_.get(), samples_.size(), voxels_.get(), x, voxels_.size(), out, st_);
}

namespace {

// Uploads the samples, times and map; runs `fn` on the plan; downloads n results.
template <class Fn>
std::vector<cfloat> on_device(const Trajectory& traj, const std::vector<float>& times, const ImageGrid& grid,
                              const std::vector<float>& fmap, const std::vector<cfloat>& in, std::size_t n_out,
                              Fn fn) {
  check_length("times", times.size(), traj.size());
  check_length("field map", fmap.size(), grid.voxels());
  OwnedStream st;
  const std::size_t m = traj.size();
  DeviceBuffer<float> kx(m, "kx"), ky(m, "ky"), kz(m, "kz"), t(m, "times"), f(fmap.size(), "field map");
  upload(traj.kx.data(), m, kx.get(), st);
  upload(traj.ky.data(), m, ky.get(), st);
  if (traj.kz.size() == m)
    upload(traj.kz.data(), m, kz.get(), st);
  else if (m)
    CUDA_CHECK(cudaMemsetAsync(kz.get(), 0, m * sizeof(float), st));
  upload(times.data(), m, t.get(), st);
  upload(fmap.data(), fmap.size(), f.get(), st);
  FieldGather plan({kx.get(), ky.get(), kz.get(), t.get(), m}, grid, f.get(), st);
  DeviceBuffer<float2> a(in.size(), "field gather input"), b(n_out, "field gather output");
  upload(reinterpret_cast<const float2*>(in.data()), in.size(), a.get(), st);
  fn(plan, a.get(), b.get());
  std::vector<cfloat> out(n_out);
  download(b.get(), n_out, reinterpret_cast<float2*>(out.data()), st);
  return out;
}

}  // namespace

std::vector<cfloat> field_adjoint(const Trajectory& traj, const std::vector<float>& times,
                                  const std::vector<cfloat>& d, const ImageGrid& grid, const std::vector<float>& fmap) {
  check_length("data", d.size(), traj.size());
  return on_device(traj, times, grid, fmap, d, grid.voxels(),
                   [](const FieldGather& p, const float2* in, float2* out) { p.adjoint(in, out); });
}

std::vector<cfloat> field_forward(const Trajectory& traj, const std::vector<float>& times,
                                  const std::vector<cfloat>& x, const ImageGrid& grid, const std::vector<float>& fmap) {
  check_length("image", x.size(), grid.voxels());
  return on_device(traj, times, grid, fmap, x, traj.size(),
                   [](const FieldGather& p, const float2* in, float2* out) { p.forward(in, out); });
}

namespace {

// The exact model of one field map on the GPU's points, made once per
// operator (before, the GPU backend cached it in its Points under a checksum
// of the map, so two maps of equal checksum would have shared a stale model).
class GpuFieldModel : public FieldModel {
 public:
  GpuFieldModel(Device& dev, const Points& k, const FieldData& f, const ImageGrid& grid)
      : dev_(dev), samples_(k.size()), grid_(grid), f_(f) {
    DeviceScope scope(dev);
    check_field_sizes(k.size(), f, grid, grid.voxels(), grid.voxels(), "image");
    const cudaStream_t s = stream_of(dev);
    const DeviceTrajectory& t = gpu::on_device(k);
    const std::string what = "the field model's map and times";
    DeviceBuffer<float> hz(f.hz.size(), what), times(f.times.size(), what);
    upload(f.hz.data(), f.hz.size(), hz.get(), s);
    upload(f.times.data(), f.times.size(), times.get(), s);
    gather_ = std::make_unique<FieldGather>(FieldSamples{t.kx.get(), t.ky.get(), t.kz.get(), times.get(), t.m},
                                            grid, hz.get(), s);
    CUDA_CHECK(cudaStreamSynchronize(s));  // hz and times go at scope end
  }
  void forward(const DeviceVector& x, DeviceVector& d) override {
    DeviceScope scope(dev_);
    check_field_sizes(samples_, f_, grid_, x.size(), grid_.voxels(), "image");
    check_field_sizes(samples_, f_, grid_, d.size(), samples_, "data");
    require_gpu(dev_, x, "field model");
    require_gpu(dev_, d, "field model");
    gather_->forward(dptr(x), dptr(d));
  }
  void adjoint(const DeviceVector& d, DeviceVector& x) override {
    DeviceScope scope(dev_);
    check_field_sizes(samples_, f_, grid_, d.size(), samples_, "data");
    check_field_sizes(samples_, f_, grid_, x.size(), grid_.voxels(), "image");
    require_gpu(dev_, x, "field model");
    require_gpu(dev_, d, "field model");
    gather_->adjoint(dptr(d), dptr(x));
  }

 private:
  Device& dev_;
  std::size_t samples_;
  ImageGrid grid_;
  FieldData f_;
  std::unique_ptr<FieldGather> gather_;
};

class GpuField : public FieldKernels {
 public:
  explicit GpuField(Device& dev) : dev_(dev) {}
  std::unique_ptr<FieldModel> model(const Points& k, const FieldData& f, const ImageGrid& grid) override {
    return std::make_unique<GpuFieldModel>(dev_, k, f, grid);
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<FieldKernels> make_gpu_field(Device& dev) { return std::make_unique<GpuField>(dev); }

}  // namespace fhd::gpu
