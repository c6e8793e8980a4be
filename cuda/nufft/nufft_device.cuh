#pragma once
// The GPU NUFFT's device code (cuda/nufft/nufft.cu includes it once): the
// fine-grid geometry, the counting sort, spreading and interpolation (shared
// and global), deapodization fused with the mode copy, and the dispatch of
// the kernels templated on dimension and width.
#include <cub/device/device_scan.cuh>

#include "cuda/device/gpu_internal.hpp"
#include "cuda/gather/fhd_launchers.cuh"
#include "cuda/nufft/nufft.hpp"
#include "recon/nufft/nufft_kernel.hpp"

namespace fhd::gpu {
namespace {

constexpr int kMinWidth = 2, kMaxWidth = 16;

struct Geom {
  int nf[3];         // fine grid per axis (1 on the unused z of a 2D plan)
  int bin[3];        // bin (tile core) cells per axis
  int nbins[3];      // bins per axis
  int pad[3];        // ceil(w/2) on used axes, 0 on an unused one
  int tile[3];       // bin + 2 pad
  float scale[3];    // fine cells per cycle/FOV: u = k * scale
  float half_w;      // w / 2
  float inv_half_w;  // 2 / w
  float beta;
  int chunk;  // points whose weights a block stages at once
};

__device__ __forceinline__ int wrap(int i, int n) {
  i %= n;
  return i < 0 ? i + n : i;
}

// Fine-grid coordinate of k. Non-finite k becomes 0 and huge k is reduced
// modulo nf, so no input can index outside the grid.
__device__ __forceinline__ float fine_coord(float k, float scale, int nf) {
  float u = k * scale;
  if (!isfinite(u)) return 0.f;
  if (fabsf(u) > 1e6f) u = fmodf(u, float(nf));
  return u;
}

__device__ __forceinline__ void add2(float2* p, float2 v) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(p, v);  // one vector atomic on Hopper
#else
  atomicAdd(&p->x, v.x);
  atomicAdd(&p->y, v.y);
#endif
}

// The kernel's value at tap t of a point whose first tap is cell i0.
__device__ __forceinline__ float tap_weight(float u, float i0, int t, const Geom& g) {
  const float x = (i0 + float(t) - u) * g.inv_half_w;
  const float r = 1.f - x * x;
  return r > 0.f ? expf(g.beta * (sqrtf(r) - 1.f)) : 0.f;
}

// The first tap's cell, shifted so the point's own cell floor(u) lies in [0, nf).
__device__ __forceinline__ int first_tap(float u, float i0, int nf) {
  const int fl = int(floorf(u));
  return int(i0) - fl + wrap(fl, nf);
}

// The w kernel values of a point on one axis, and its first tap's cell,
// shifted so the point's own cell floor(u) lies in [0, nf).
template <int W>
__device__ __forceinline__ int tap_weights(float u, int nf, const Geom& g, float* ker, int stride = 1) {
  const float i0 = ceilf(u - g.half_w);
#pragma unroll
  for (int t = 0; t < W; ++t) ker[t * stride] = tap_weight(u, i0, t, g);
  return first_tap(u, i0, nf);
}

__device__ __forceinline__ int axis_bin(float u, const Geom& g, int a) {
  return wrap(int(floorf(u)), g.nf[a]) / g.bin[a];
}

struct BinOrigin {
  int x, y, z;
};
__device__ __forceinline__ BinOrigin bin_origin(int b, const Geom& g) {
  return {(b % g.nbins[0]) * g.bin[0], (b / g.nbins[0]) % g.nbins[1] * g.bin[1],
          b / (g.nbins[0] * g.nbins[1]) * g.bin[2]};
}

// Fine-grid index of tile cell i of the bin at origin o.
__device__ __forceinline__ std::size_t tile_to_fine(int i, BinOrigin o, const Geom& g) {
  const int tx = g.tile[0], ty = g.tile[1];
  const int ix = i % tx, iy = (i / tx) % ty, iz = i / (tx * ty);
  return wrap(o.x - g.pad[0] + ix, g.nf[0]) +
         std::size_t(g.nf[0]) *
             (wrap(o.y - g.pad[1] + iy, g.nf[1]) + std::size_t(g.nf[1]) * wrap(o.z - g.pad[2] + iz, g.nf[2]));
}

// ---- plan: counting sort by bin

// Point i's fine-grid coordinates (w: its index, as bits) and its bin. Both
// passes of the sort compute them alike from k, so the first need store
// nothing per point.
template <int DIM>
__device__ __forceinline__ unsigned point_record(const float* __restrict__ kx, const float* __restrict__ ky,
                                                 const float* __restrict__ kz, std::size_t i, const Geom& g,
                                                 float4& rec) {
  const float ux = fine_coord(kx[i], g.scale[0], g.nf[0]), uy = fine_coord(ky[i], g.scale[1], g.nf[1]);
  const float uz = DIM == 3 ? fine_coord(kz[i], g.scale[2], g.nf[2]) : 0.f;
  rec = make_float4(ux, uy, uz, __uint_as_float(unsigned(i)));
  const int bz = DIM == 3 ? axis_bin(uz, g, 2) : 0;
  return unsigned(axis_bin(ux, g, 0) + g.nbins[0] * (axis_bin(uy, g, 1) + g.nbins[1] * bz));
}

// The sort's first pass: points per bin (atomics whose result is unused,
// which the L2 performs without a round trip).
template <int DIM>
__global__ void bin_count_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                 const float* __restrict__ kz, std::size_t m, Geom g, unsigned* __restrict__ counts) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x) {
    float4 rec;
    atomicAdd(counts + point_record<DIM>(kx, ky, kz, i, g, rec), 1u);
  }
}

// The second: each point's record written to the next free place of its
// bin (`cursor` starts at the bins' starts). One random 16-byte write a point
// (a sector's read-modify-write); the records are not kept between the
// passes, so set_points needs no scratch of its own per point. Writing the
// three coordinates apart cost three such writes (3.9 of set_points' 5 ms at
// 16.8M points); scattering the index alone and gathering the records after
// cost a second pass over them (0.70 ms).
template <int DIM>
__global__ void bin_place_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                 const float* __restrict__ kz, std::size_t m, Geom g, unsigned* __restrict__ cursor,
                                 float4* __restrict__ pts) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x) {
    float4 rec;
    const unsigned b = point_record<DIM>(kx, ky, kz, i, g, rec);
    pts[atomicAdd(cursor + b, 1u)] = rec;
  }
}

// A sorted point's original index (its record's w).
__device__ __forceinline__ unsigned point_index(const float4& p) { return __float_as_uint(p.w); }

__global__ void subproblem_count_kernel(const unsigned* __restrict__ counts, unsigned nbins, unsigned maxsub,
                                        unsigned* __restrict__ sub) {
  for (unsigned b = blockIdx.x * blockDim.x + threadIdx.x; b < nbins; b += gridDim.x * blockDim.x)
    sub[b] = (counts[b] + maxsub - 1) / maxsub;
}

// Subproblem = (bin, first sorted point, point count).
__global__ void subproblem_fill_kernel(const unsigned* __restrict__ counts, const unsigned* __restrict__ start,
                                       const unsigned* __restrict__ sub, const unsigned* __restrict__ sub_start,
                                       unsigned nbins, unsigned maxsub, int4* __restrict__ subs) {
  for (unsigned b = blockIdx.x * blockDim.x + threadIdx.x; b < nbins; b += gridDim.x * blockDim.x)
    for (unsigned k = 0; k < sub[b]; ++k)
      subs[sub_start[b] + k] =
          make_int4(int(b), int(start[b] + k * maxsub), int(min(maxsub, counts[b] - k * maxsub)), 0);
}

// ---- spreading (type 1)

// Shared memory of spread_shared: the tile, then per staged point its value,
// first tap per axis (tile-local) and DIM x W weights.
template <int DIM, int W>
__global__ void spread_shared(const float4* __restrict__ pts, const float2* __restrict__ c,
                              const int4* __restrict__ subs, Geom g, float2* __restrict__ fine, std::size_t c_stride,
                              std::size_t fine_stride) {
  extern __shared__ float2 smem[];
  c += blockIdx.y * c_stride;  // transform blockIdx.y of a batch
  fine += blockIdx.y * fine_stride;
  const int tx = g.tile[0], ty = g.tile[1], cells = tx * ty * g.tile[2];
  const int chunk = g.chunk;
  float2* tile = smem;
  float2* val = tile + cells;                                // chunk
  int* first = reinterpret_cast<int*>(val + chunk);          // 3 x chunk
  float* wts = reinterpret_cast<float*>(first + 3 * chunk);  // DIM x chunk x W, point-major per axis

  const int4 sp = subs[blockIdx.x];
  const BinOrigin o = bin_origin(sp.x, g);
  for (int i = threadIdx.x; i < cells; i += blockDim.x) tile[i] = make_float2(0.f, 0.f);

  constexpr int rows = DIM == 3 ? W * W : W;
  const int lane_pt = threadIdx.x % chunk, row0 = threadIdx.x / chunk, rstride = blockDim.x / chunk;
  for (int base = 0; base < sp.z; base += chunk) {
    const int cnt = min(chunk, sp.z - base);
    __syncthreads();  // tile zeroed / previous chunk's staging consumed
    for (int p = threadIdx.x; p < cnt; p += blockDim.x) {
      const float4 pt = pts[sp.y + base + p];
      val[p] = c[point_index(pt)];
      first[p] = tap_weights<W>(pt.x, g.nf[0], g, wts + p * W) - o.x + g.pad[0];
      first[chunk + p] = tap_weights<W>(pt.y, g.nf[1], g, wts + (chunk + p) * W) - o.y + g.pad[1];
      first[2 * chunk + p] =
          DIM == 3 ? tap_weights<W>(pt.z, g.nf[2], g, wts + (2 * chunk + p) * W) - o.z + g.pad[2] : 0;
    }
    __syncthreads();
    if (lane_pt >= cnt) continue;
    const int p = lane_pt;
    const float* wx = wts + p * W;
    const float* wy = wts + (chunk + p) * W;
    const float* wz = wts + (2 * chunk + p) * W;
    const float2 v = val[p];
    const int fx = first[p], fy = first[chunk + p], fz = first[2 * chunk + p];
    for (int r = row0; r < rows; r += rstride) {
      const int dy = r % W, dz = r / W;
      const float wyz = DIM == 3 ? wy[dy] * wz[dz] : wy[dy];
      const float2 vr = make_float2(v.x * wyz, v.y * wyz);
      float2* row = tile + fx + tx * (fy + dy + ty * (fz + dz));
#pragma unroll
      for (int dx = 0; dx < W; ++dx) {
        atomicAdd(&row[dx].x, vr.x * wx[dx]);
        atomicAdd(&row[dx].y, vr.y * wx[dx]);
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < cells; i += blockDim.x) {
    const float2 t = tile[i];
    if (t.x == 0.f && t.y == 0.f) continue;  // halo cells no point reached
    add2(fine + tile_to_fine(i, o, g), t);
  }
}

// The unprivatized baseline: one thread per sorted point, global atomics.
template <int DIM, int W>
__global__ void spread_global(const float4* __restrict__ pts, const float2* __restrict__ c, std::size_t m, Geom g,
                              float2* __restrict__ fine, std::size_t c_stride, std::size_t fine_stride) {
  c += blockIdx.y * c_stride;
  fine += blockIdx.y * fine_stride;
  for (std::size_t s = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; s < m;
       s += std::size_t(gridDim.x) * blockDim.x) {
    const float4 pt = pts[s];
    float wx[W], wy[W], wz[W];
    const int fx = tap_weights<W>(pt.x, g.nf[0], g, wx);
    const int fy = tap_weights<W>(pt.y, g.nf[1], g, wy);
    const int fz = DIM == 3 ? tap_weights<W>(pt.z, g.nf[2], g, wz) : 0;
    const float2 v = c[point_index(pt)];
    for (int dz = 0; dz < (DIM == 3 ? W : 1); ++dz) {
      const std::size_t zoff = DIM == 3 ? std::size_t(wrap(fz + dz, g.nf[2])) * g.nf[1] : 0;
      const float wzv = DIM == 3 ? wz[dz] : 1.f;
      for (int dy = 0; dy < W; ++dy) {
        const float wyz = wy[dy] * wzv;
        float2* row = fine + (zoff + wrap(fy + dy, g.nf[1])) * g.nf[0];
#pragma unroll
        for (int dx = 0; dx < W; ++dx)
          add2(row + wrap(fx + dx, g.nf[0]), make_float2(v.x * wyz * wx[dx], v.y * wyz * wx[dx]));
      }
    }
  }
}

// ---- interpolation (type 2)

// One block per subproblem: the padded tile read once into shared memory,
// then one thread per point sums its w^DIM cells from it.
template <int DIM, int W>
__global__ void interp_shared(const float4* __restrict__ pts, const int4* __restrict__ subs, Geom g,
                              const float2* __restrict__ fine, float2* __restrict__ c, std::size_t c_stride,
                              std::size_t fine_stride) {
  extern __shared__ float2 tile[];
  c += blockIdx.y * c_stride;
  fine += blockIdx.y * fine_stride;
  const int tx = g.tile[0], ty = g.tile[1], cells = tx * ty * g.tile[2];
  const int4 sp = subs[blockIdx.x];
  const BinOrigin o = bin_origin(sp.x, g);
  for (int i = threadIdx.x; i < cells; i += blockDim.x) tile[i] = __ldg(fine + tile_to_fine(i, o, g));
  __syncthreads();
  for (int p = threadIdx.x; p < sp.z; p += blockDim.x) {
    const float4 pt = pts[sp.y + p];
    float wx[W], wy[W], wz[W];
    const int fx = tap_weights<W>(pt.x, g.nf[0], g, wx) - o.x + g.pad[0];
    const int fy = tap_weights<W>(pt.y, g.nf[1], g, wy) - o.y + g.pad[1];
    const int fz = DIM == 3 ? tap_weights<W>(pt.z, g.nf[2], g, wz) - o.z + g.pad[2] : 0;
    float2 acc = make_float2(0.f, 0.f);
    for (int dz = 0; dz < (DIM == 3 ? W : 1); ++dz) {
      for (int dy = 0; dy < W; ++dy) {
        const float2* row = tile + fx + tx * (fy + dy + ty * (fz + dz));
        float2 racc = make_float2(0.f, 0.f);
#pragma unroll
        for (int dx = 0; dx < W; ++dx) {
          const float2 t = row[dx];
          racc.x += t.x * wx[dx];
          racc.y += t.y * wx[dx];
        }
        const float wyz = DIM == 3 ? wy[dy] * wz[dz] : wy[dy];
        acc.x += racc.x * wyz;
        acc.y += racc.y * wyz;
      }
    }
    c[point_index(pt)] = acc;
  }
}

template <int DIM, int W>
__global__ void interp_global(const float4* __restrict__ pts, std::size_t m, Geom g, const float2* __restrict__ fine,
                              float2* __restrict__ c, std::size_t c_stride, std::size_t fine_stride) {
  c += blockIdx.y * c_stride;
  fine += blockIdx.y * fine_stride;
  for (std::size_t s = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; s < m;
       s += std::size_t(gridDim.x) * blockDim.x) {
    const float4 pt = pts[s];
    float wx[W], wy[W], wz[W];
    const int fx = tap_weights<W>(pt.x, g.nf[0], g, wx);
    const int fy = tap_weights<W>(pt.y, g.nf[1], g, wy);
    const int fz = DIM == 3 ? tap_weights<W>(pt.z, g.nf[2], g, wz) : 0;
    int ix[W];
#pragma unroll
    for (int dx = 0; dx < W; ++dx) ix[dx] = wrap(fx + dx, g.nf[0]);
    float2 acc = make_float2(0.f, 0.f);
    for (int dz = 0; dz < (DIM == 3 ? W : 1); ++dz) {
      const std::size_t zoff = DIM == 3 ? std::size_t(wrap(fz + dz, g.nf[2])) * g.nf[1] : 0;
      for (int dy = 0; dy < W; ++dy) {
        const float2* row = fine + (zoff + wrap(fy + dy, g.nf[1])) * g.nf[0];
        float2 racc = make_float2(0.f, 0.f);
#pragma unroll
        for (int dx = 0; dx < W; ++dx) {
          const float2 t = __ldg(row + ix[dx]);
          racc.x += t.x * wx[dx];
          racc.y += t.y * wx[dx];
        }
        const float wyz = DIM == 3 ? wy[dy] * wz[dz] : wy[dy];
        acc.x += racc.x * wyz;
        acc.y += racc.y * wyz;
      }
    }
    c[point_index(pt)] = acc;
  }
}

// Lanes per point of interp_rows: the power of two that covers a row of W taps.
template <int W>
__host__ __device__ constexpr int row_lanes() {
  return W <= 2 ? 2 : W <= 4 ? 4 : W <= 8 ? 8 : 16;
}

// One axis of a point seen by its L lanes: lane t holds tap t's weight and
// wrapped cell (t < W); the other lanes read them by shuffles.
struct LaneTap {
  float w;
  int cell;
};
template <int W>
__device__ __forceinline__ LaneTap lane_tap(float u, int nf, int lane, const Geom& g) {
  const float i0 = ceilf(u - g.half_w);
  return {lane < W ? tap_weight(u, i0, lane, g) : 0.f, wrap(int(i0) + lane, nf)};
}

// Interpolation by rows: L = row_lanes<W>() threads per sorted point, lane l
// reading cell x + l of each of the point's W^(DIM-1) rows. A warp load then
// covers 32 / L short runs of adjacent cells (a few sectors) where one thread
// per point (interp_global) touches 32 scattered cells: 1.15 -> 0.99 ms at
// 128^3 modes, 21.3 -> 11.8 ms at 256^3 (H100, docs/nufft-gpu.md). Each lane
// sums its column weighted by wy * wz, scales by its own wx, and the L lanes
// add up by shuffles within their group.
template <int DIM, int W>
__global__ void interp_rows(const float4* __restrict__ pts, std::size_t m, Geom g, const float2* __restrict__ fine,
                            float2* __restrict__ c, std::size_t c_stride, std::size_t fine_stride) {
  constexpr int L = row_lanes<W>();
  constexpr int NZ = DIM == 3 ? W : 1;
  c += blockIdx.y * c_stride;
  fine += blockIdx.y * fine_stride;
  const int lane = threadIdx.x % L;
  // The group's lanes within the warp: shuffles name only them, so a group
  // that leaves the loop early never waits for another.
  const unsigned group_mask = (L == 32 ? 0xffffffffu : ((1u << L) - 1u)) << (threadIdx.x % 32 / L * L);
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x / L;
  for (std::size_t s = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / L; s < m; s += stride) {
    const float4 pt = pts[s];
    const LaneTap tx = lane_tap<W>(pt.x, g.nf[0], lane, g);
    const LaneTap ty = lane_tap<W>(pt.y, g.nf[1], lane, g);
    const LaneTap tz = DIM == 3 ? lane_tap<W>(pt.z, g.nf[2], lane, g) : LaneTap{1.f, 0};
    float2 acc = make_float2(0.f, 0.f);
#pragma unroll
    for (int dz = 0; dz < NZ; ++dz) {
      const float wz = DIM == 3 ? __shfl_sync(group_mask, tz.w, dz, L) : 1.f;
      const std::size_t zoff = DIM == 3 ? std::size_t(__shfl_sync(group_mask, tz.cell, dz, L)) * g.nf[1] : 0;
      float2 zacc = make_float2(0.f, 0.f);
#pragma unroll
      for (int dy = 0; dy < W; ++dy) {
        const float wy = __shfl_sync(group_mask, ty.w, dy, L);
        const int iy = __shfl_sync(group_mask, ty.cell, dy, L);
        if (lane < W) {
          const float2 t = __ldg(fine + (zoff + iy) * g.nf[0] + tx.cell);
          zacc.x += t.x * wy;
          zacc.y += t.y * wy;
        }
      }
      acc.x += zacc.x * wz;
      acc.y += zacc.y * wz;
    }
    acc.x *= tx.w;  // 0 on lanes past W
    acc.y *= tx.w;
#pragma unroll
    for (int off = L / 2; off > 0; off /= 2) {
      acc.x += __shfl_xor_sync(group_mask, acc.x, off, L);
      acc.y += __shfl_xor_sync(group_mask, acc.y, off, L);
    }
    if (lane == 0) c[point_index(pt)] = acc;
  }
}

// ---- deapodization fused with the fine <-> mode copy (fftshift by index)

struct ModeMap {
  int n[3];  // modes per axis
};

// Mode index i on an axis of n modes (mode i - n/2) sits at fine cell
// (i - n/2) mod nf.
__device__ __forceinline__ int mode_to_fine(int i, int n, int nf) {
  const int j = i - n / 2;
  return j < 0 ? j + nf : j;
}

// Transform blockIdx.y of a batch: fine grids nf apart, modes `total` apart.
__global__ void deapodize_out(const float2* __restrict__ fine, Geom g, ModeMap mm, const float* __restrict__ dx,
                              const float* __restrict__ dy, const float* __restrict__ dz, float2* __restrict__ f) {
  const std::size_t total = std::size_t(mm.n[0]) * mm.n[1] * mm.n[2];
  fine += blockIdx.y * (std::size_t(g.nf[0]) * g.nf[1] * g.nf[2]);
  f += blockIdx.y * total;
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const int ix = int(o % mm.n[0]), iy = int((o / mm.n[0]) % mm.n[1]), iz = int(o / (std::size_t(mm.n[0]) * mm.n[1]));
    const std::size_t fi = mode_to_fine(ix, mm.n[0], g.nf[0]) +
                           std::size_t(g.nf[0]) * (mode_to_fine(iy, mm.n[1], g.nf[1]) +
                                                   std::size_t(g.nf[1]) * mode_to_fine(iz, mm.n[2], g.nf[2]));
    const float d = dx[ix] * dy[iy] * dz[iz];
    const float2 v = fine[fi];
    f[o] = make_float2(v.x * d, v.y * d);
  }
}

// Writes every fine cell: the deapodized mode where one lands, else zero
// (one pass instead of a memset and a scatter).
__device__ __forceinline__ int fine_to_mode(int fi, int n, int nf) {
  const int j = fi < (nf + 1) / 2 ? fi : fi - nf;  // signed frequency of the cell
  const int i = j + n / 2;
  return (i >= 0 && i < n) ? i : -1;
}

__global__ void deapodize_in(const float2* __restrict__ f, Geom g, ModeMap mm, const float* __restrict__ dx,
                             const float* __restrict__ dy, const float* __restrict__ dz, float2* __restrict__ fine) {
  const std::size_t total = std::size_t(g.nf[0]) * g.nf[1] * g.nf[2];
  fine += blockIdx.y * total;  // transform blockIdx.y of a batch
  f += blockIdx.y * (std::size_t(mm.n[0]) * mm.n[1] * mm.n[2]);
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const int fx = int(o % g.nf[0]), fy = int((o / g.nf[0]) % g.nf[1]), fz = int(o / (std::size_t(g.nf[0]) * g.nf[1]));
    const int ix = fine_to_mode(fx, mm.n[0], g.nf[0]), iy = fine_to_mode(fy, mm.n[1], g.nf[1]),
              iz = fine_to_mode(fz, mm.n[2], g.nf[2]);
    float2 v = make_float2(0.f, 0.f);
    if (ix >= 0 && iy >= 0 && iz >= 0) {
      const float d = dx[ix] * dy[iy] * dz[iz];
      const float2 m = f[ix + std::size_t(mm.n[0]) * (iy + std::size_t(mm.n[1]) * iz)];
      v = make_float2(m.x * d, m.y * d);
    }
    fine[o] = v;
  }
}

// ---- width dispatch: kernels are templates on the dimension and width so
// the tap loops unroll and the weights stay in registers.

template <int DIM, int W>
struct Kernels {
  // n transforms (blockIdx.y): values m apart, fine grids fine_stride apart.
  static void spread(bool shared, const float4* pts, const float2* c, const int4* subs, std::size_t nsub, std::size_t m,
                     const Geom& g, std::size_t smem, int threads, float2* fine, int n, std::size_t fine_stride,
                     cudaStream_t s) {
    if (shared) {
      CUDA_CHECK(cudaFuncSetAttribute(spread_shared<DIM, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      spread_shared<DIM, W><<<dim3(unsigned(nsub), n), threads, smem, s>>>(pts, c, subs, g, fine, m, fine_stride);
    } else {
      spread_global<DIM, W><<<dim3(blocks_for(m, 128), n), 128, 0, s>>>(pts, c, m, g, fine, m, fine_stride);
    }
    CUDA_CHECK_LAUNCH();
  }
  static void interp(NufftMethod method, const float4* pts, const int4* subs, std::size_t nsub, std::size_t m,
                     const Geom& g, std::size_t smem, int threads, const float2* fine, float2* c, int n,
                     std::size_t fine_stride, cudaStream_t s) {
    if (method == NufftMethod::Rows) {
      constexpr unsigned kThreads = 256;  // a multiple of 32: groups never straddle warps
      const std::size_t lanes = m * std::size_t(row_lanes<W>());
      interp_rows<DIM, W><<<dim3(blocks_for(lanes, kThreads), n), kThreads, 0, s>>>(pts, m, g, fine, c, m, fine_stride);
    } else if (method == NufftMethod::Shared) {
      CUDA_CHECK(cudaFuncSetAttribute(interp_shared<DIM, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      interp_shared<DIM, W><<<dim3(unsigned(nsub), n), threads, smem, s>>>(pts, subs, g, fine, c, m, fine_stride);
    } else {
      interp_global<DIM, W><<<dim3(blocks_for(m, 128), n), 128, 0, s>>>(pts, m, g, fine, c, m, fine_stride);
    }
    CUDA_CHECK_LAUNCH();
  }
};

template <int DIM, template <int, int> class K, class F>
void with_width(int w, F&& f) {
  switch (w) {
#define FHD_W(N) \
  case N:        \
    f(K<DIM, N>{}); return;
    FHD_W(2) FHD_W(3) FHD_W(4) FHD_W(5) FHD_W(6) FHD_W(7) FHD_W(8) FHD_W(9) FHD_W(10) FHD_W(11) FHD_W(12)
    FHD_W(13) FHD_W(14) FHD_W(15) FHD_W(16)
#undef FHD_W
    default:
      throw InputError("nufft", "kernel width", std::to_string(w),
                       "must be " + std::to_string(kMinWidth) + ".." + std::to_string(kMaxWidth));
  }
}

template <class F>
void dispatch(int dim, int w, F&& f) {
  if (dim == 3)
    with_width<3, Kernels>(w, f);
  else
    with_width<2, Kernels>(w, f);
}

// The three axes' deapodization factors in one buffer (x, then y, then z):
// one upload, and each table computed once where axes share their lengths
// (a cubic plan's three are one). An unused axis's factors are 1.
DeviceBuffer<float> upload_deapodization(const int n[3], const int nf[3], int dim, const nufft::KernelParams& kp,
                                         cudaStream_t s) {
  std::vector<float> d(std::size_t(n[0]) + n[1] + n[2], 1.f);
  std::size_t at[3] = {0, std::size_t(n[0]), std::size_t(n[0]) + n[1]};
  for (int a = 0; a < dim; ++a) {
    const bool same = a > 0 && n[a] == n[a - 1] && nf[a] == nf[a - 1];
    if (same) {
      std::copy_n(d.begin() + at[a - 1], n[a], d.begin() + at[a]);
      continue;
    }
    const std::vector<double> dd = nufft::deapodization(n[a], nf[a], kp);
    std::copy(dd.begin(), dd.end(), d.begin() + at[a]);
  }
  DeviceBuffer<float> buf(d.size(), "NUFFT deapodization");
  upload(d.data(), d.size(), buf.get(), s);
  CUDA_CHECK(cudaStreamSynchronize(s));  // d is freed at return
  return buf;
}

int max_shared_bytes() {
  int dev = 0, v = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return v;
}

}  // namespace

}  // namespace fhd::gpu
