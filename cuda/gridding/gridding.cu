// Gridding scatter on the GPU: sum_m v_m C(u - u_m) onto the oversampled grid,
// with the CPU gridding's exact tap rule (recon/gridding/gridding_cpu.cpp): per axis,
// u = k * G/N + G/2 in double, taps j = ceil(u - W/2) .. floor(u + W/2),
// weight float(C(j - u)) in double, periodic wrap; an axis of size 1 takes
// one tap of weight 1. The value is scaled z, then y, then x, in float.
//
// Two methods (PMPP's histogram chapter):
// - Atomic: one thread per sample, every tap an atomicAdd on the global grid.
// - Privatized: samples binned by the tile (T cells per axis) holding their
//   first tap; each block spreads up to kSubproblem samples of one tile into
//   a private copy of the tile plus its kernel halo in shared memory (fast
//   shared atomics, contention stays on chip), then adds the non-zero cells
//   of that copy to the global grid. Big bins (the centre of a radial
//   trajectory) are cut into several subproblems, so no block runs alone at
//   the end.
// - Hybrid: tiles holding kDenseTile samples or more go through shared
//   memory, the samples of sparser tiles straight to global atomics.
// Auto (the backend's choice) is Atomic: on the H200, at 1M samples on grids
// of 128^3..512^3 cells, Hopper's L2 atomics rarely collide and the binning
// plus the private tiles' zeroing and flush cost more than they save
// (docs/gpu-backend.md has the table); privatization won only where samples
// pile up much more densely (1M samples on a 64^3 image).
#include <math.h>

#include <cub/device/device_scan.cuh>
#include <string>

#include "cuda/device/gpu_internal.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "recon/gridding/gridding.hpp"

// The kernel formulas, compiled for the device too (the header is written to
// be wrapped like this: plain inline functions of doubles, only <math.h>).
namespace fhd_kb_device {
#pragma push_macro("inline")
#define inline __host__ __device__ inline
#include "recon/gridding/kaiser_bessel.hpp"
#pragma pop_macro("inline")
}  // namespace fhd_kb_device

namespace fhd::gpu {
namespace {

constexpr int kMaxTaps = 17;            // floor(16) + 1: the widest kernel resolve_kernel allows
constexpr unsigned kSubproblem = 1024;  // samples per block in the privatized method
constexpr unsigned kTileThreads = 256;
// Hybrid: a tile is spread privately from this many samples on; sparser tiles'
// samples go straight to global atomics, where they rarely collide and the
// private copy's zeroing and flush would cost more than it saves.
constexpr unsigned kDenseTile = 128;
constexpr std::size_t kSharedLimit = 48 * 1024;  // dynamic shared memory a block gets without opting in

struct ScatterParams {
  int g[3];  // grid size per axis
  double scale[3], offset[3];
  int kb;  // Kaiser-Bessel (1) or trilinear (0)
  double width, beta;
  int tile[3], ext[3], ntiles[3];  // privatized: core cells, core + halo, tiles per axis
};

__device__ double kernel_value(const ScatterParams& p, double d) {
  return p.kb ? fhd_kb_device::fhd::kb_value(d, p.width, p.beta) : fhd_kb_device::fhd::tri_value(d);
}

__device__ int wrap(int j, int g) {
  const int w = j % g;
  return w < 0 ? w + g : w;
}

// First tap (unwrapped) and number of taps of one sample on one axis.
struct AxisSpan {
  double u;
  int j0, n;
};

__device__ AxisSpan axis_span(const ScatterParams& p, int a, float k) {
  if (p.g[a] == 1) return {0.0, 0, 1};
  const double u = double(k) * p.scale[a] + p.offset[a];
  const double half = 0.5 * p.width;
  const int j0 = int(ceil(u - half));
  const int j1 = int(floor(u + half));
  return {u, j0, min(j1 - j0 + 1, kMaxTaps)};
}

__device__ float tap_weight(const ScatterParams& p, int a, const AxisSpan& s, int j) {
  return p.g[a] == 1 ? 1.f : float(kernel_value(p, double(j) - s.u));
}

// Visits every tap of sample (kx, ky, kz, v): add(cell offsets per axis from
// the first tap, value). The order and float rounding match the CPU's add_sample.
template <class Add>
__device__ void for_each_tap(const ScatterParams& p, float kx, float ky, float kz, float2 v, Add add) {
  const AxisSpan sx = axis_span(p, 0, kx), sy = axis_span(p, 1, ky), sz = axis_span(p, 2, kz);
  // Each axis' weights once (the kernel evaluations, in double, dominate the
  // arithmetic): 3 x taps evaluations instead of one per cell.
  float wx[kMaxTaps], wy[kMaxTaps], wz[kMaxTaps];
  for (int a = 0; a < sx.n; ++a) wx[a] = tap_weight(p, 0, sx, sx.j0 + a);
  for (int b = 0; b < sy.n; ++b) wy[b] = tap_weight(p, 1, sy, sy.j0 + b);
  for (int c = 0; c < sz.n; ++c) wz[c] = tap_weight(p, 2, sz, sz.j0 + c);
  for (int c = 0; c < sz.n; ++c) {
    const float2 vz = make_float2(v.x * wz[c], v.y * wz[c]);
    for (int b = 0; b < sy.n; ++b) {
      const float2 vy = make_float2(vz.x * wy[b], vz.y * wy[b]);
      for (int a = 0; a < sx.n; ++a) add(sx.j0, sy.j0, sz.j0, a, b, c, make_float2(vy.x * wx[a], vy.y * wx[a]));
    }
  }
}

__device__ void atomic_add2(float2* p, float2 v) {
  atomicAdd(&p->x, v.x);
  atomicAdd(&p->y, v.y);
}

// With `tile` non-null, samples of tiles holding `dense` or more samples are
// skipped: the privatized kernel takes those (the hybrid method).
__global__ void scatter_atomic_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                      const float* __restrict__ kz, const float2* __restrict__ v, std::size_t m,
                                      ScatterParams p, float2* grid, const unsigned* __restrict__ tile,
                                      const unsigned* __restrict__ counts, unsigned dense) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (tile && counts[tile[i]] >= dense) continue;
    for_each_tap(p, kx[i], ky[i], kz[i], v[i], [&](int x0, int y0, int z0, int a, int b, int c, float2 val) {
      const std::size_t idx = wrap(x0 + a, p.g[0]) +
                              std::size_t(p.g[0]) * (wrap(y0 + b, p.g[1]) + std::size_t(p.g[1]) * wrap(z0 + c, p.g[2]));
      atomic_add2(grid + idx, val);
    });
  }
}

// The tile of a sample: the one holding its first tap (wrapped) on every axis.
__device__ unsigned tile_of(const ScatterParams& p, float kx, float ky, float kz) {
  const int t0 = wrap(axis_span(p, 0, kx).j0, p.g[0]) / p.tile[0];
  const int t1 = wrap(axis_span(p, 1, ky).j0, p.g[1]) / p.tile[1];
  const int t2 = wrap(axis_span(p, 2, kz).j0, p.g[2]) / p.tile[2];
  return unsigned(t0 + p.ntiles[0] * (t1 + p.ntiles[1] * t2));
}

// Counting sort, pass one: tile and rank within the tile of every sample.
__global__ void bin_count_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                 const float* __restrict__ kz, std::size_t m, ScatterParams p,
                                 unsigned* __restrict__ tile, unsigned* __restrict__ rank, unsigned* counts) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const unsigned t = tile_of(p, kx[i], ky[i], kz[i]);
    tile[i] = t;
    rank[i] = atomicAdd(counts + t, 1u);
  }
}

// Pass two: sample indices grouped by tile.
__global__ void bin_place_kernel(const unsigned* __restrict__ tile, const unsigned* __restrict__ rank,
                                 const unsigned* __restrict__ start, std::size_t m, unsigned* __restrict__ order) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x)
    order[start[tile[i]] + rank[i]] = unsigned(i);
}

// Subproblems per tile: ceil(count / kSubproblem) for tiles of `dense` or
// more samples, none for the others (their samples go to the atomic kernel).
__global__ void subproblem_count_kernel(const unsigned* __restrict__ counts, unsigned* __restrict__ sub,
                                        unsigned ntiles, unsigned dense) {
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < ntiles; t += gridDim.x * blockDim.x)
    sub[t] = counts[t] >= dense ? (counts[t] + kSubproblem - 1) / kSubproblem : 0;
}

__global__ void subproblem_fill_kernel(const unsigned* __restrict__ sub, const unsigned* __restrict__ sub_start,
                                       const unsigned* __restrict__ start, unsigned ntiles,
                                       uint2* __restrict__ subproblems) {
  for (unsigned t = blockIdx.x * blockDim.x + threadIdx.x; t < ntiles; t += gridDim.x * blockDim.x)
    for (unsigned k = 0; k < sub[t]; ++k) subproblems[sub_start[t] + k] = make_uint2(t, start[t] + k * kSubproblem);
}

// One block per subproblem: spread into the private tile, then flush it.
__global__ void __launch_bounds__(kTileThreads)
    scatter_tile_kernel(const float* __restrict__ kx, const float* __restrict__ ky, const float* __restrict__ kz,
                        const float2* __restrict__ v, const unsigned* __restrict__ order,
                        const unsigned* __restrict__ start, const uint2* __restrict__ subproblems, ScatterParams p,
                        float2* grid) {
  extern __shared__ float2 local[];  // ext[0] * ext[1] * ext[2] cells, sized at launch
  const uint2 sp = subproblems[blockIdx.x];
  const unsigned t = sp.x;
  const unsigned first = sp.y, last = min(sp.y + kSubproblem, start[t + 1]);
  const int o0 = int(t % p.ntiles[0]) * p.tile[0];
  const int o1 = int((t / p.ntiles[0]) % p.ntiles[1]) * p.tile[1];
  const int o2 = int(t / (unsigned(p.ntiles[0]) * p.ntiles[1])) * p.tile[2];
  const int e0 = p.ext[0], e1 = p.ext[1], cells = p.ext[0] * p.ext[1] * p.ext[2];

  for (int c = threadIdx.x; c < cells; c += blockDim.x) local[c] = make_float2(0.f, 0.f);
  __syncthreads();
  for (unsigned s = first + threadIdx.x; s < last; s += blockDim.x) {
    const unsigned i = order[s];
    for_each_tap(p, kx[i], ky[i], kz[i], v[i], [&](int x0, int y0, int z0, int a, int b, int c, float2 val) {
      // Local cell: first tap (wrapped) minus the tile origin, plus the tap offset;
      // always inside core + halo since the first tap lies in the core.
      const int lx = wrap(x0, p.g[0]) - o0 + a, ly = wrap(y0, p.g[1]) - o1 + b, lz = wrap(z0, p.g[2]) - o2 + c;
      float2* cell = local + lx + e0 * (ly + e1 * lz);
      atomicAdd(&cell->x, val.x);
      atomicAdd(&cell->y, val.y);
    });
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cells; c += blockDim.x) {
    const float2 val = local[c];
    if (val.x == 0.f && val.y == 0.f) continue;  // most halo cells of a sparse tile: skip the global atomic
    const int lx = c % e0, ly = (c / e0) % e1, lz = c / (e0 * e1);
    const std::size_t idx = wrap(o0 + lx, p.g[0]) +
                            std::size_t(p.g[0]) * (wrap(o1 + ly, p.g[1]) + std::size_t(p.g[1]) * wrap(o2 + lz, p.g[2]));
    atomic_add2(grid + idx, val);
  }
}

ScatterParams make_params(const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel) {
  const ResolvedKernel k = resolve_kernel(kernel);
  const GridMap map = oversampled_map(image, over);
  ScatterParams p{};
  const int dims = (over.nx > 1) + (over.ny > 1) + (over.nz > 1);
  const int core = dims >= 3 ? 8 : dims == 2 ? 32 : 1024;  // tile cells per convolved axis
  for (int a = 0; a < 3; ++a) {
    p.g[a] = map.size[a];
    p.scale[a] = map.scale[a];
    p.offset[a] = map.offset[a];
    p.tile[a] = p.g[a] == 1 ? 1 : std::min(core, p.g[a]);
    p.ext[a] = p.g[a] == 1 ? 1 : p.tile[a] + int(std::floor(k.width));
    p.ntiles[a] = (p.g[a] + p.tile[a] - 1) / p.tile[a];
  }
  p.kb = k.kb ? 1 : 0;
  p.width = k.width;
  p.beta = k.beta;
  return p;
}

bool tile_fits(const ScatterParams& p) {
  return std::size_t(p.ext[0]) * p.ext[1] * p.ext[2] * sizeof(float2) <= kSharedLimit;
}

void scatter_atomic(const DeviceTrajectory& t, const float2* v, const ScatterParams& p, float2* grid,
                    cudaStream_t s, const unsigned* tile = nullptr, const unsigned* counts = nullptr,
                    unsigned dense = 0) {
  constexpr unsigned threads = 128;
  scatter_atomic_kernel<<<blocks_for(t.m, threads), threads, 0, s>>>(t.kx.get(), t.ky.get(), t.kz.get(), v, t.m, p,
                                                                      grid, tile, counts, dense);
  CUDA_CHECK_LAUNCH();
}

// Tiles of `dense` or more samples are spread privately, the rest with global
// atomics (dense = 1: every sample privately).
void scatter_privatized(const DeviceTrajectory& t, const float2* v, const ScatterParams& p, float2* grid,
                        cudaStream_t s, unsigned dense) {
  const std::size_t m = t.m;
  const unsigned ntiles = unsigned(p.ntiles[0]) * p.ntiles[1] * p.ntiles[2];
  const std::string what = "gridding bins (" + std::to_string(m) + " samples, " + std::to_string(ntiles) + " tiles)";
  // Per sample: tile, rank, order; per tile: count, start, subproblem count and start.
  require_free(3.0 * m * sizeof(unsigned) + 4.0 * (ntiles + 1) * sizeof(unsigned), what);
  DeviceBuffer<unsigned> tile(m, what, Reach::DeviceOnly), rank(m, what, Reach::DeviceOnly),
      order(m, what, Reach::DeviceOnly);
  DeviceBuffer<unsigned> counts(ntiles + 1, what), start(ntiles + 1, what), sub(ntiles + 1, what),
      sub_start(ntiles + 1, what);
  CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, counts.bytes(), s));
  CUDA_CHECK(cudaMemsetAsync(sub.get(), 0, sub.bytes(), s));  // the extra last entry stays 0
  constexpr unsigned threads = 256;
  bin_count_kernel<<<blocks_for(m, threads), threads, 0, s>>>(t.kx.get(), t.ky.get(), t.kz.get(), m, p, tile.get(),
                                                               rank.get(), counts.get());
  CUDA_CHECK_LAUNCH();
  // Exclusive scans over ntiles + 1 entries: entry ntiles is the total.
  std::size_t temp_bytes = 0, temp2 = 0;
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts.get(), start.get(), ntiles + 1, s));
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp2, sub.get(), sub_start.get(), ntiles + 1, s));
  DeviceBuffer<char> temp(std::max(temp_bytes, temp2), what + " (scan scratch)", Reach::DeviceOnly);
  temp_bytes = temp.size();
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, counts.get(), start.get(), ntiles + 1, s));
  bin_place_kernel<<<blocks_for(m, threads), threads, 0, s>>>(tile.get(), rank.get(), start.get(), m, order.get());
  CUDA_CHECK_LAUNCH();
  subproblem_count_kernel<<<blocks_for(ntiles, threads), threads, 0, s>>>(counts.get(), sub.get(), ntiles, dense);
  CUDA_CHECK_LAUNCH();
  temp_bytes = temp.size();
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, sub.get(), sub_start.get(), ntiles + 1, s));
  if (dense > 1) scatter_atomic(t, v, p, grid, s, tile.get(), counts.get(), dense);
  unsigned nsub = 0;
  download(sub_start.get() + ntiles, 1, &nsub, s);  // the one host round trip: the launch size
  if (nsub == 0) return;
  DeviceBuffer<uint2> subproblems(nsub, what + " (subproblems)");
  subproblem_fill_kernel<<<blocks_for(ntiles, threads), threads, 0, s>>>(sub.get(), sub_start.get(), start.get(),
                                                                         ntiles, subproblems.get());
  CUDA_CHECK_LAUNCH();
  const std::size_t shared = std::size_t(p.ext[0]) * p.ext[1] * p.ext[2] * sizeof(float2);
  scatter_tile_kernel<<<nsub, kTileThreads, shared, s>>>(t.kx.get(), t.ky.get(), t.kz.get(), v, order.get(), start.get(),
                                                    subproblems.get(), p, grid);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));  // the bins are freed at return
}

}  // namespace

void grid_scatter_device(const DeviceTrajectory& traj, const float2* values, const ImageGrid& image,
                         const ImageGrid& over, const GridKernel& kernel, ScatterMethod method, float2* grid,
                         cudaStream_t s) {
  const ScatterParams p = make_params(image, over, kernel);
  if (traj.m == 0) return;
  const bool atomic = method == ScatterMethod::Atomic || method == ScatterMethod::Auto;
  if (atomic || !tile_fits(p) || traj.m >= (std::size_t(1) << 32))
    scatter_atomic(traj, values, p, grid, s);
  else
    scatter_privatized(traj, values, p, grid, s, method == ScatterMethod::Privatized ? 1 : kDenseTile);
}

DeviceBuffer<float2> grid_scatter_on_device(const DeviceTrajectory& traj, const std::vector<cfloat>& weighted_data,
                                            const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel,
                                            ScatterMethod method, cudaStream_t s) {
  make_params(image, over, kernel);  // validates the kernel and the grids before any allocation
  if (weighted_data.size() != traj.m)
    throw InputError("gridding", "samples", std::to_string(weighted_data.size()),
                     "data length differs from the trajectory's " + std::to_string(traj.m));
  const std::string what = "the gridding grid " + dims_string(over) + " and its samples";
  require_free(double(over.voxels() + traj.m) * sizeof(float2), what);
  DeviceBuffer<float2> grid(over.voxels(), what, Reach::DeviceOnly), v(traj.m, what, Reach::DeviceOnly);
  CUDA_CHECK(cudaMemsetAsync(grid.get(), 0, grid.bytes(), s));
  upload(reinterpret_cast<const float2*>(weighted_data.data()), traj.m, v.get(), s);
  grid_scatter_device(traj, v.get(), image, over, kernel, method, grid.get(), s);
  CUDA_CHECK(cudaStreamSynchronize(s));  // v is freed at scope end
  return grid;
}

std::vector<cfloat> grid_scatter(const DeviceTrajectory& traj, const std::vector<cfloat>& weighted_data,
                                 const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel,
                                 ScatterMethod method, cudaStream_t s) {
  DeviceBuffer<float2> grid = grid_scatter_on_device(traj, weighted_data, image, over, kernel, method, s);
  std::vector<cfloat> host(over.voxels());
  download(grid.get(), host.size(), reinterpret_cast<float2*>(host.data()), s);
  return host;
}

namespace {

// Scatter, inverse FFT and crop on the device: only the image window crosses
// to the host (at 128^3 with 2x oversampling, 16 MiB instead of 3 x 128 MiB).
class GpuGridding : public GriddingKernels {
 public:
  explicit GpuGridding(Device& dev) : dev_(dev) {}
  std::vector<cfloat> grid_to_image(const Points& k, const std::vector<cfloat>& weighted_data, const ImageGrid& image,
                                    const ImageGrid& over, const GridKernel& kernel) override {
    DeviceScope scope(dev_);
    const DeviceTrajectory& traj = on_device(k);
    if (weighted_data.size() != traj.m)
      throw InputError("grid_to_image", "data size", std::to_string(weighted_data.size()),
                       "must equal the trajectory's " + std::to_string(traj.m) + " samples");
    const cudaStream_t s = stream_of(dev_);
    DeviceBuffer<float2> grid = grid_scatter_on_device(traj, weighted_data, image, over, kernel, ScatterMethod::Auto, s);
    const std::string what = "the gridding image " + dims_string(image);
    DeviceBuffer<float2> work(over.voxels(), what, Reach::DeviceOnly), out(image.voxels(), what, Reach::DeviceOnly);
    centered_dft_window(grid.get(), work.get(), over, image, out.get(), true, s);
    std::vector<cfloat> host(image.voxels());
    download(out.get(), host.size(), reinterpret_cast<float2*>(host.data()), s);
    return host;
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<GriddingKernels> make_gpu_gridding(Device& dev) { return std::make_unique<GpuGridding>(dev); }

}  // namespace fhd::gpu
