// The direct (per-pair) cmpFhD kernels, steps 1-7 of the PMPP ladder:
// out_p = sum_m w_m exp(+i 2 pi k_m . x_p). Each step changes one thing
// (docs/kernels.md). Float trig modes accumulate in float like the book;
// TrigMode::Double is the GPU reference: phase, trig and sums in double.
#include <algorithm>
#include <string>

#include "cuda/device/pools.hpp"
#include "cuda/gather/fhd_common.cuh"
#include "cuda/gather/fhd_launchers.cuh"

namespace fhd::gpu {
namespace {

// ---- one pair, shared by the simple kernels --------------------------------
template <TrigMode T>
struct Acc {
  float r = 0.f, i = 0.f;
};
template <>
struct Acc<TrigMode::Double> {
  double r = 0.0, i = 0.0;
};

template <TrigMode T>
__device__ __forceinline__ void add_pair(Acc<T>& a, float kx, float ky, float kz, float2 w,
                                         double x, double y, double z) {
  if constexpr (T == TrigMode::Double) {
    double s, c;
    turn_sincos_d(double(kx) * x + double(ky) * y + double(kz) * z, &s, &c);
    a.r += double(w.x) * c - double(w.y) * s;
    a.i += double(w.x) * s + double(w.y) * c;
  } else {
    float s, c;
    turn_sincos<T>(fmaf(kx, float(x), fmaf(ky, float(y), kz * float(z))), &s, &c);
    a.r += w.x * c - w.y * s;
    a.i += w.x * s + w.y * c;
  }
}

__device__ __forceinline__ void point_coords(std::size_t p, const OutGrid& g, double* x, double* y,
                                             double* z) {
  int ix, iy, iz;
  unflatten(p, g, &ix, &iy, &iz);
  *x = coord_d(ix, g.lx, g.nx);
  *y = coord_d(iy, g.ly, g.ny);
  *z = coord_d(iz, g.lz, g.nz);
}

void zero_output(float2* out, const OutGrid& g, cudaStream_t st) {
  CUDA_CHECK(cudaMemsetAsync(out, 0, g.points() * sizeof(float2), st));
}

int pick(int v, int dflt) { return v > 0 ? v : dflt; }

void check_threads(int threads, const char* who) {
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    throw InputError(who, "threads", std::to_string(threads), "must be a multiple of 32 in [32, 1024]");
}

// ---- (1) scatter-atomic -----------------------------------------------------
// One thread per sample adding its term to every voxel with atomics. Each
// thread starts at a different voxel (p = (q + m) mod P) so a warp's 32
// atomics hit 32 addresses instead of queueing on one.
template <TrigMode T>
__global__ void scatter_kernel(SampleSet s, OutGrid g, float2* out, std::size_t m0, std::size_t m1) {
  std::size_t m = m0 + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (m >= m1) return;
  const float kx = s.kx[m], ky = s.ky[m], kz = s.kz[m];
  const float2 w = s.w[m];
  const std::size_t P = std::size_t(g.lx) * g.ly * g.lz;
  for (std::size_t q = 0; q < P; ++q) {
    std::size_t p = (q + m) % P;
    double x, y, z;
    point_coords(p, g, &x, &y, &z);
    Acc<T> a;
    add_pair<T>(a, kx, ky, kz, w, x, y, z);
    atomicAdd(&out[p].x, float(a.r));
    atomicAdd(&out[p].y, float(a.i));
  }
}

template <TrigMode T>
void launch_scatter_t(const SampleSet& s, const OutGrid& g, float2* out, const LaunchConfig& cfg,
                      cudaStream_t st) {
  const int threads = pick(cfg.threads, 128);
  check_threads(threads, "scatter-atomic");
  zero_output(out, g, st);
  // Chunks of samples keep each launch short.
  const std::size_t chunk = std::size_t(1) << 16;
  for (std::size_t m0 = 0; m0 < s.m; m0 += chunk) {
    std::size_t m1 = std::min(s.m, m0 + chunk);
    last_launch() = {reinterpret_cast<const void*>(scatter_kernel<T>), threads, 0};
    scatter_kernel<T><<<blocks_covering(m1 - m0, threads), threads, 0, st>>>(s, g, out, m0, m1);
    CUDA_CHECK_LAUNCH();
  }
}

// ---- (2) gather ---------------------------------------------------------------
// One thread per voxel; k and w read from global memory and, as in the book's
// first gather kernel, the running sum kept in the output array itself (float
// modes). Double mode sums in a double register (it is the reference).
template <TrigMode T>
__global__ void gather_kernel(SampleSet s, OutGrid g, float2* out, std::size_t p0, std::size_t np) {
  std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (q >= np) return;
  const std::size_t p = p0 + q;
  double x, y, z;
  point_coords(p, g, &x, &y, &z);
  if constexpr (T == TrigMode::Double) {
    Acc<T> a;
    for (std::size_t m = 0; m < s.m; ++m) add_pair<T>(a, s.kx[m], s.ky[m], s.kz[m], s.w[m], x, y, z);
    out[p] = make_float2(float(a.r), float(a.i));
  } else {
    out[p] = make_float2(0.f, 0.f);
    for (std::size_t m = 0; m < s.m; ++m) {
      Acc<T> a;
      add_pair<T>(a, s.kx[m], s.ky[m], s.kz[m], s.w[m], x, y, z);
      out[p].x += a.r;
      out[p].y += a.i;
    }
  }
}

// ---- (3) registers ----------------------------------------------------------
// Coordinates (as float) and accumulators in registers; k and w still from
// global memory, but read-only through __restrict__/__ldg and the same
// address for the whole warp (one broadcast transaction).
template <TrigMode T>
__global__ void registers_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                 const float* __restrict__ kz, const float2* __restrict__ w,
                                 std::size_t m, OutGrid g, float2* __restrict__ out, std::size_t p0,
                                 std::size_t np) {
  std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (q >= np) return;
  const std::size_t p = p0 + q;
  double x, y, z;
  point_coords(p, g, &x, &y, &z);
  Acc<T> a;
#pragma unroll 4
  for (std::size_t j = 0; j < m; ++j) add_pair<T>(a, __ldg(kx + j), __ldg(ky + j), __ldg(kz + j), __ldg(w + j), x, y, z);
  out[p] = make_float2(float(a.r), float(a.i));
}

template <TrigMode T, bool kRegisters>
void launch_per_point_t(const SampleSet& s, const OutGrid& g, float2* out, const LaunchConfig& cfg,
                        cudaStream_t st) {
  const int threads = pick(cfg.threads, 256);
  check_threads(threads, kRegisters ? "registers" : "gather");
  const std::size_t P = g.points();
  for (std::size_t p0 = 0; p0 < P; p0 += kSlabPoints) {
    std::size_t np = std::min(kSlabPoints, P - p0);
    last_launch() = {kRegisters ? reinterpret_cast<const void*>(registers_kernel<T>)
                                : reinterpret_cast<const void*>(gather_kernel<T>), threads, 0};
    if constexpr (kRegisters)
      registers_kernel<T><<<blocks_covering(np, threads), threads, 0, st>>>(s.kx, s.ky, s.kz, s.w, s.m, g, out, p0, np);
    else
      gather_kernel<T><<<blocks_covering(np, threads), threads, 0, st>>>(s, g, out, p0, np);
    CUDA_CHECK_LAUNCH();
  }
}

// ---- (4) constant-tiles -------------------------------------------------------
// Samples copied chunk by chunk into __constant__ memory as an array of
// structs; every thread of a warp reads the same element (the constant cache's
// broadcast case). One symbol for all instantiations: launches on one stream
// are ordered, so chunks never overlap; concurrent streams must not share it.
struct ConstSample {
  float kx, ky, kz, wr, wi;
};
constexpr int kConstTile = 3200;  // 3200 * 20 B = 62.5 KB of the 64 KB bank
__constant__ ConstSample c_samples[kConstTile];

__global__ void pack_aos_kernel(SampleSet s, ConstSample* aos) {
  std::size_t m = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (m >= s.m) return;
  const float2 w = s.w[m];
  aos[m] = ConstSample{s.kx[m], s.ky[m], s.kz[m], w.x, w.y};
}

template <TrigMode T>
__global__ void constant_kernel(int count, bool first, OutGrid g, float2* out, std::size_t p0,
                                std::size_t np) {
  std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (q >= np) return;
  const std::size_t p = p0 + q;
  double x, y, z;
  point_coords(p, g, &x, &y, &z);
  Acc<T> a;
#pragma unroll 4
  for (int j = 0; j < count; ++j) {
    const ConstSample c = c_samples[j];
    add_pair<T>(a, c.kx, c.ky, c.kz, make_float2(c.wr, c.wi), x, y, z);
  }
  float2 prev = first ? make_float2(0.f, 0.f) : out[p];
  out[p] = make_float2(prev.x + float(a.r), prev.y + float(a.i));
}

template <TrigMode T>
void launch_constant_t(const SampleSet& s, const OutGrid& g, float2* out, const LaunchConfig& cfg,
                       cudaStream_t st) {
  const int threads = pick(cfg.threads, 256);
  check_threads(threads, "constant-tiles");
  const int tile = std::min(pick(cfg.tile, kConstTile), kConstTile);
  if (s.m == 0) return zero_output(out, g, st);
  ConstSample* aos = nullptr;
  CUDA_CHECK(malloc_async(reinterpret_cast<void**>(&aos), s.m * sizeof(ConstSample), st));
  pack_aos_kernel<<<blocks_covering(s.m, 256), 256, 0, st>>>(s, aos);
  CUDA_CHECK_LAUNCH();
  const std::size_t P = g.points();
  for (std::size_t m0 = 0; m0 < s.m; m0 += tile) {
    const int count = int(std::min<std::size_t>(tile, s.m - m0));
    CUDA_CHECK(cudaMemcpyToSymbolAsync(c_samples, aos + m0, count * sizeof(ConstSample), 0,
                                       cudaMemcpyDeviceToDevice, st));
    for (std::size_t p0 = 0; p0 < P; p0 += kSlabPoints) {
      std::size_t np = std::min(kSlabPoints, P - p0);
      last_launch() = {reinterpret_cast<const void*>(constant_kernel<T>), threads, 0};
      constant_kernel<T><<<blocks_covering(np, threads), threads, 0, st>>>(count, m0 == 0, g, out, p0, np);
      CUDA_CHECK_LAUNCH();
    }
  }
  CUDA_CHECK(cudaFreeAsync(aos, st));
}

// ---- (5) shared-tiles, (6) sfu ------------------------------------------------
// The block loads a tile of samples into shared memory cooperatively
// (coalesced), then every thread sweeps it: global traffic drops by the
// block size. Layout per sample: float4 (kx, ky, kz, wr) + float wi.
template <TrigMode T, int U>
__global__ void tiles_kernel(SampleSet s, int tile, OutGrid g, float2* out, std::size_t p0,
                             std::size_t np) {
  extern __shared__ float4 smem[];
  float4* sa = smem;
  float* sb = reinterpret_cast<float*>(smem + tile);
  std::size_t q = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t p = p0 + (q < np ? q : np - 1);  // idle threads still help load tiles
  double xd, yd, zd;
  point_coords(p, g, &xd, &yd, &zd);
  Acc<T> a;
  for (std::size_t m0 = 0; m0 < s.m; m0 += tile) {
    const int count = int(s.m - m0 < std::size_t(tile) ? s.m - m0 : std::size_t(tile));
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
      const float2 w = s.w[m0 + j];
      sa[j] = make_float4(s.kx[m0 + j], s.ky[m0 + j], s.kz[m0 + j], w.x);
      sb[j] = w.y;
    }
    __syncthreads();
#pragma unroll U
    for (int j = 0; j < count; ++j) {
      const float4 k = sa[j];
      add_pair<T>(a, k.x, k.y, k.z, make_float2(k.w, sb[j]), xd, yd, zd);
    }
    __syncthreads();
  }
  if (q < np) out[p] = make_float2(float(a.r), float(a.i));
}

template <TrigMode T, int U>
void launch_tiles_u(const SampleSet& s, const OutGrid& g, float2* out, int threads, int tile,
                    cudaStream_t st) {
  const std::size_t shmem = std::size_t(tile) * (sizeof(float4) + sizeof(float));
  if (shmem > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(tiles_kernel<T, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shmem)));
  const std::size_t P = g.points();
  for (std::size_t p0 = 0; p0 < P; p0 += kSlabPoints) {
    std::size_t np = std::min(kSlabPoints, P - p0);
    last_launch() = {reinterpret_cast<const void*>(tiles_kernel<T, U>), threads, shmem};
    tiles_kernel<T, U><<<blocks_covering(np, threads), threads, shmem, st>>>(s, tile, g, out, p0, np);
    CUDA_CHECK_LAUNCH();
  }
}

template <TrigMode T>
void launch_tiles_t(const SampleSet& s, const OutGrid& g, float2* out, const LaunchConfig& cfg,
                    cudaStream_t st) {
  const int threads = pick(cfg.threads, 256);
  check_threads(threads, "shared-tiles");
  const int tile = pick(cfg.tile, 1024);
  if (s.m == 0) return zero_output(out, g, st);
  switch (pick(cfg.unroll, 4)) {
    case 1: return launch_tiles_u<T, 1>(s, g, out, threads, tile, st);
    case 2: return launch_tiles_u<T, 2>(s, g, out, threads, tile, st);
    case 4: return launch_tiles_u<T, 4>(s, g, out, threads, tile, st);
    case 8: return launch_tiles_u<T, 8>(s, g, out, threads, tile, st);
  }
  throw InputError("shared-tiles", "unroll", std::to_string(cfg.unroll), "must be 1, 2, 4 or 8");
}

// ---- (7) coarsened ------------------------------------------------------------
// C voxels per thread along x, interleaved: thread (ix0, row) owns
// ix = ix0 + j*S, S = ceil(lx / C), so a warp's stores stay coalesced. Along x
// the phase grows by kx*S/nx per voxel, so in float modes only the first voxel
// needs sine/cosine: the others follow by the angle-addition recurrence
// z_{j+1} = z_j * e^{i 2 pi kx S/nx}, with w folded into z_0 (6 FP32 ops per
// pair instead of ~8 + 2 SFU). The step is computed once per sample while the
// tile loads, accurately (sincospif). Double mode evaluates every voxel.
// Shared layout per sample: float4 (kx, ky, kz, wr), float4 (wi, step c, step s, -).
template <TrigMode T, int C, int U>
__global__ void coarsened_kernel(SampleSet s, int tile, OutGrid g, int stride, float2* out,
                                 std::size_t q0, std::size_t nq) {
  extern __shared__ float4 smem[];
  float4* sa = smem;
  float4* sb = smem + tile;
  const std::size_t q = q0 + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const bool live = q < q0 + nq;
  const std::size_t qq = live ? q : q0;  // idle threads still help load tiles
  const int ix0 = int(qq % std::size_t(stride));
  const std::size_t row = qq / std::size_t(stride);
  const int iy = int(row % std::size_t(g.ly)), iz = int(row / std::size_t(g.ly));
  const double x0 = coord_d(ix0, g.lx, g.nx), y = coord_d(iy, g.ly, g.ny), z = coord_d(iz, g.lz, g.nz);
  const double dx = double(stride) / double(g.nx);
  const float step_turns = float(dx);
  using R = typename std::conditional<T == TrigMode::Double, double, float>::type;
  // Two-level sums: each tile into tr/ti, then the tile's sum into ar/ai. A
  // single float sum over ~1M samples had relerr ~2e-5, which long CG runs
  // amplify on underdetermined problems (docs/accuracy.md); this costs one add
  // per voxel per tile, and no occupancy (one 512-thread block per SM either way).
  R ar[C], ai[C], tr[C], ti[C];
#pragma unroll
  for (int v = 0; v < C; ++v) ar[v] = ai[v] = tr[v] = ti[v] = R(0);
  const float xf = float(x0), yf = float(y), zf = float(z);

  for (std::size_t m0 = 0; m0 < s.m; m0 += tile) {
    const int count = int(s.m - m0 < std::size_t(tile) ? s.m - m0 : std::size_t(tile));
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
      const float kxj = s.kx[m0 + j];
      const float2 w = s.w[m0 + j];
      float sn = 0.f, cs = 1.f;
      if constexpr (T != TrigMode::Double) {
        float t = kxj * step_turns;
        t -= rintf(t);
        sincospif(2.0f * t, &sn, &cs);
      }
      sa[j] = make_float4(kxj, s.ky[m0 + j], s.kz[m0 + j], w.x);
      sb[j] = make_float4(w.y, cs, sn, 0.f);
    }
    __syncthreads();
#pragma unroll U
    for (int j = 0; j < count; ++j) {
      const float4 a = sa[j];
      const float4 b = sb[j];
      if constexpr (T == TrigMode::Double) {
#pragma unroll
        for (int v = 0; v < C; ++v) {
          double sd, cd;
          turn_sincos_d(double(a.x) * (x0 + v * dx) + double(a.y) * y + double(a.z) * z, &sd, &cd);
          tr[v] += double(a.w) * cd - double(b.x) * sd;
          ti[v] += double(a.w) * sd + double(b.x) * cd;
        }
      } else {
        float sn, cs;
        turn_sincos<T>(fmaf(a.x, xf, fmaf(a.y, yf, a.z * zf)), &sn, &cs);
        float zr = a.w * cs - b.x * sn;
        float zi = a.w * sn + b.x * cs;
#pragma unroll
        for (int v = 0; v < C; ++v) {
          tr[v] += zr;
          ti[v] += zi;
          if (v + 1 < C) {
            const float nr = zr * b.y - zi * b.z;
            zi = fmaf(zr, b.z, zi * b.y);
            zr = nr;
          }
        }
      }
    }
#pragma unroll
    for (int v = 0; v < C; ++v) {
      ar[v] += tr[v];
      ai[v] += ti[v];
      tr[v] = ti[v] = R(0);
    }
    __syncthreads();
  }
  if (!live) return;
  float2* orow = out + row * std::size_t(g.lx);
#pragma unroll
  for (int v = 0; v < C; ++v) {
    const int ix = ix0 + v * stride;
    if (ix < g.lx) orow[ix] = make_float2(float(ar[v]), float(ai[v]));
  }
}

template <TrigMode T, int C, int U>
void launch_coarsened_cu(const SampleSet& s, const OutGrid& g, float2* out, int threads, int tile,
                         cudaStream_t st) {
  const std::size_t shmem = std::size_t(tile) * 2 * sizeof(float4);
  if (shmem > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(coarsened_kernel<T, C, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shmem)));
  const int stride = (g.lx + C - 1) / C;
  const std::size_t total = std::size_t(stride) * g.ly * g.lz;
  for (std::size_t q0 = 0; q0 < total; q0 += kSlabPoints) {
    std::size_t nq = std::min(kSlabPoints, total - q0);
    last_launch() = {reinterpret_cast<const void*>(coarsened_kernel<T, C, U>), threads, shmem};
    coarsened_kernel<T, C, U><<<blocks_covering(nq, threads), threads, shmem, st>>>(s, tile, g, stride, out, q0, nq);
    CUDA_CHECK_LAUNCH();
  }
}

template <TrigMode T, int C>
void launch_coarsened_c(const SampleSet& s, const OutGrid& g, float2* out, int unroll, int threads,
                        int tile, cudaStream_t st) {
  if constexpr (T == TrigMode::Double) {
    return launch_coarsened_cu<T, C, 1>(s, g, out, threads, tile, st);  // unroll is moot there
  } else {
    switch (unroll) {
      case 1: return launch_coarsened_cu<T, C, 1>(s, g, out, threads, tile, st);
      case 2: return launch_coarsened_cu<T, C, 2>(s, g, out, threads, tile, st);
      case 4: return launch_coarsened_cu<T, C, 4>(s, g, out, threads, tile, st);
      case 8: return launch_coarsened_cu<T, C, 8>(s, g, out, threads, tile, st);
    }
    throw InputError("coarsened", "unroll", std::to_string(unroll), "must be 1, 2, 4 or 8");
  }
}

template <TrigMode T>
void launch_coarsened_t(const SampleSet& s, const OutGrid& g, float2* out, const LaunchConfig& cfg,
                        cudaStream_t st) {
  const CoarsenedDefaults d;
  // Double keeps 2C double accumulators and double sincospi temporaries:
  // 512 threads x 16 voxels does not fit the register file there.
  constexpr bool kDouble = T == TrigMode::Double;
  const int threads = pick(cfg.threads, kDouble ? 256 : d.threads);
  check_threads(threads, "coarsened");
  const int tile = pick(cfg.tile, d.tile), unroll = pick(cfg.unroll, d.unroll);
  if (s.m == 0) return zero_output(out, g, st);
  switch (pick(cfg.coarsen, kDouble ? 4 : d.coarsen(g.lx))) {
    case 1: return launch_coarsened_c<T, 1>(s, g, out, unroll, threads, tile, st);
    case 2: return launch_coarsened_c<T, 2>(s, g, out, unroll, threads, tile, st);
    case 4: return launch_coarsened_c<T, 4>(s, g, out, unroll, threads, tile, st);
    case 8: return launch_coarsened_c<T, 8>(s, g, out, unroll, threads, tile, st);
    case 16: return launch_coarsened_c<T, 16>(s, g, out, unroll, threads, tile, st);
  }
  throw InputError("coarsened", "coarsen", std::to_string(cfg.coarsen), "must be 1, 2, 4, 8 or 16");
}

// Runs F<Double|Single|Sfu> for the run-time mode.
#define FHD_BY_TRIG(F, ...)                                                   \
  switch (trig) {                                                             \
    case TrigMode::Double: return F<TrigMode::Double>(__VA_ARGS__);           \
    case TrigMode::Single: return F<TrigMode::Single>(__VA_ARGS__);           \
    case TrigMode::Sfu: return F<TrigMode::Sfu>(__VA_ARGS__);                 \
  }

}  // namespace

void launch_scatter(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                    const LaunchConfig& cfg, cudaStream_t st) {
  FHD_BY_TRIG(launch_scatter_t, s, g, out, cfg, st);
}
void launch_gather(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                   const LaunchConfig& cfg, cudaStream_t st) {
  if (s.m == 0) return zero_output(out, g, st);
  switch (trig) {
    case TrigMode::Double: return launch_per_point_t<TrigMode::Double, false>(s, g, out, cfg, st);
    case TrigMode::Single: return launch_per_point_t<TrigMode::Single, false>(s, g, out, cfg, st);
    case TrigMode::Sfu: return launch_per_point_t<TrigMode::Sfu, false>(s, g, out, cfg, st);
  }
}
void launch_registers(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                      const LaunchConfig& cfg, cudaStream_t st) {
  switch (trig) {
    case TrigMode::Double: return launch_per_point_t<TrigMode::Double, true>(s, g, out, cfg, st);
    case TrigMode::Single: return launch_per_point_t<TrigMode::Single, true>(s, g, out, cfg, st);
    case TrigMode::Sfu: return launch_per_point_t<TrigMode::Sfu, true>(s, g, out, cfg, st);
  }
}
void launch_constant(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                     const LaunchConfig& cfg, cudaStream_t st) {
  FHD_BY_TRIG(launch_constant_t, s, g, out, cfg, st);
}
void launch_tiles(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                  const LaunchConfig& cfg, cudaStream_t st) {
  FHD_BY_TRIG(launch_tiles_t, s, g, out, cfg, st);
}
// Step 6: the tiled kernel with the hardware sine/cosine. Double stays the
// reference; both float modes take the SFU path (that is this variant).
void launch_sfu(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                const LaunchConfig& cfg, cudaStream_t st) {
  if (trig == TrigMode::Double) return launch_tiles_t<TrigMode::Double>(s, g, out, cfg, st);
  return launch_tiles_t<TrigMode::Sfu>(s, g, out, cfg, st);
}
void launch_coarsened(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                      const LaunchConfig& cfg, cudaStream_t st) {
  FHD_BY_TRIG(launch_coarsened_t, s, g, out, cfg, st);
}

}  // namespace fhd::gpu
