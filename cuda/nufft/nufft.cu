// The GPU NUFFT (cuda/nufft/nufft.hpp; method and measurements in docs/nufft-gpu.md).
//
// Type 1: spread c_m onto the fine grid with the exponential-of-semicircle
// kernel, inverse FFT (exp +i), deapodize and copy the modes out. Type 2: the
// reverse. Point m sits at fine-grid cell coordinate u = k_m * nf / N per
// axis (unwrapped: |u| stays small, so float keeps its precision) and touches
// the w cells ceil(u - w/2) .. + w - 1, wrapped periodically.
//
// Spreading (PMPP's privatization): points are counting-sorted by the bin
// holding floor(u); each block takes one subproblem (at most max_subproblem
// points of one bin) and spreads into a shared-memory copy of the bin padded
// by ceil(w/2) cells per side, then adds that tile to the fine grid with
// global atomics. Inside a block the points are taken in chunks: each
// point's w kernel values per axis are computed once into shared memory, then
// the chunk's (point, row) pairs are shared out among the threads
// (coarsening: threads per point = threads / chunk), each row w shared
// atomics along x.
#include <algorithm>
#include <cmath>
#include <exception>
#include <cub/device/device_scan.cuh>
#include <string>

#include "cuda/gather/fhd_launchers.cuh"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/nufft/nufft.hpp"
#include "core/error.hpp"
#include "recon/nufft/nufft_kernel.hpp"

namespace fhd::gpu {
namespace {

constexpr int kMinWidth = 2, kMaxWidth = 16;

struct Geom {
  int nf[3];        // fine grid per axis (1 on the unused z of a 2D plan)
  int bin[3];       // bin (tile core) cells per axis
  int nbins[3];     // bins per axis
  int pad[3];       // ceil(w/2) on used axes, 0 on an unused one
  int tile[3];      // bin + 2 pad
  float scale[3];   // fine cells per cycle/FOV: u = k * scale
  float half_w;     // w / 2
  float inv_half_w; // 2 / w
  float beta;
  int chunk;        // points whose weights a block stages at once
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

// The w kernel values of a point on one axis, and its first tap's cell,
// shifted so the point's own cell floor(u) lies in [0, nf).
template <int W>
__device__ __forceinline__ int tap_weights(float u, int nf, const Geom& g, float* ker, int stride = 1) {
  const float i0 = ceilf(u - g.half_w);
#pragma unroll
  for (int t = 0; t < W; ++t) {
    const float x = (i0 + float(t) - u) * g.inv_half_w;
    const float r = 1.f - x * x;
    ker[t * stride] = r > 0.f ? expf(g.beta * (sqrtf(r) - 1.f)) : 0.f;
  }
  const int fl = int(floorf(u));
  return int(i0) - fl + wrap(fl, nf);
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

template <int DIM>
__global__ void bin_count_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                 const float* __restrict__ kz, std::size_t m, Geom g, unsigned* __restrict__ bin,
                                 unsigned* __restrict__ rank, unsigned* __restrict__ counts) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int bx = axis_bin(fine_coord(kx[i], g.scale[0], g.nf[0]), g, 0);
    const int by = axis_bin(fine_coord(ky[i], g.scale[1], g.nf[1]), g, 1);
    const int bz = DIM == 3 ? axis_bin(fine_coord(kz[i], g.scale[2], g.nf[2]), g, 2) : 0;
    const unsigned b = unsigned(bx + g.nbins[0] * (by + g.nbins[1] * bz));
    bin[i] = b;
    rank[i] = atomicAdd(counts + b, 1u);
  }
}

template <int DIM>
__global__ void bin_place_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                 const float* __restrict__ kz, std::size_t m, Geom g,
                                 const unsigned* __restrict__ bin, const unsigned* __restrict__ rank,
                                 const unsigned* __restrict__ start, unsigned* __restrict__ order,
                                 float* __restrict__ ux, float* __restrict__ uy, float* __restrict__ uz) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const unsigned pos = start[bin[i]] + rank[i];
    order[pos] = unsigned(i);
    ux[pos] = fine_coord(kx[i], g.scale[0], g.nf[0]);
    uy[pos] = fine_coord(ky[i], g.scale[1], g.nf[1]);
    uz[pos] = DIM == 3 ? fine_coord(kz[i], g.scale[2], g.nf[2]) : 0.f;
  }
}

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
      subs[sub_start[b] + k] = make_int4(int(b), int(start[b] + k * maxsub), int(min(maxsub, counts[b] - k * maxsub)), 0);
}

// ---- spreading (type 1)

// Shared memory of spread_shared: the tile, then per staged point its value,
// first tap per axis (tile-local) and DIM x W weights.
template <int DIM, int W>
__global__ void spread_shared(const float* __restrict__ ux, const float* __restrict__ uy,
                              const float* __restrict__ uz, const unsigned* __restrict__ order,
                              const float2* __restrict__ c, const int4* __restrict__ subs, Geom g,
                              float2* __restrict__ fine) {
  extern __shared__ float2 smem[];
  const int tx = g.tile[0], ty = g.tile[1], cells = tx * ty * g.tile[2];
  const int chunk = g.chunk;
  float2* tile = smem;
  float2* val = tile + cells;                          // chunk
  int* first = reinterpret_cast<int*>(val + chunk);    // 3 x chunk
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
      const int s = sp.y + base + p;
      val[p] = c[order[s]];
      first[p] = tap_weights<W>(ux[s], g.nf[0], g, wts + p * W) - o.x + g.pad[0];
      first[chunk + p] = tap_weights<W>(uy[s], g.nf[1], g, wts + (chunk + p) * W) - o.y + g.pad[1];
      first[2 * chunk + p] =
          DIM == 3 ? tap_weights<W>(uz[s], g.nf[2], g, wts + (2 * chunk + p) * W) - o.z + g.pad[2] : 0;
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
__global__ void spread_global(const float* __restrict__ ux, const float* __restrict__ uy,
                              const float* __restrict__ uz, const unsigned* __restrict__ order,
                              const float2* __restrict__ c, std::size_t m, Geom g, float2* __restrict__ fine) {
  for (std::size_t s = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; s < m;
       s += std::size_t(gridDim.x) * blockDim.x) {
    float wx[W], wy[W], wz[W];
    const int fx = tap_weights<W>(ux[s], g.nf[0], g, wx);
    const int fy = tap_weights<W>(uy[s], g.nf[1], g, wy);
    const int fz = DIM == 3 ? tap_weights<W>(uz[s], g.nf[2], g, wz) : 0;
    const float2 v = c[order[s]];
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
__global__ void interp_shared(const float* __restrict__ ux, const float* __restrict__ uy,
                              const float* __restrict__ uz, const unsigned* __restrict__ order,
                              const int4* __restrict__ subs, Geom g, const float2* __restrict__ fine,
                              float2* __restrict__ c) {
  extern __shared__ float2 tile[];
  const int tx = g.tile[0], ty = g.tile[1], cells = tx * ty * g.tile[2];
  const int4 sp = subs[blockIdx.x];
  const BinOrigin o = bin_origin(sp.x, g);
  for (int i = threadIdx.x; i < cells; i += blockDim.x) tile[i] = __ldg(fine + tile_to_fine(i, o, g));
  __syncthreads();
  for (int p = threadIdx.x; p < sp.z; p += blockDim.x) {
    const int s = sp.y + p;
    float wx[W], wy[W], wz[W];
    const int fx = tap_weights<W>(ux[s], g.nf[0], g, wx) - o.x + g.pad[0];
    const int fy = tap_weights<W>(uy[s], g.nf[1], g, wy) - o.y + g.pad[1];
    const int fz = DIM == 3 ? tap_weights<W>(uz[s], g.nf[2], g, wz) - o.z + g.pad[2] : 0;
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
    c[order[s]] = acc;
  }
}

template <int DIM, int W>
__global__ void interp_global(const float* __restrict__ ux, const float* __restrict__ uy,
                              const float* __restrict__ uz, const unsigned* __restrict__ order, std::size_t m,
                              Geom g, const float2* __restrict__ fine, float2* __restrict__ c) {
  for (std::size_t s = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; s < m;
       s += std::size_t(gridDim.x) * blockDim.x) {
    float wx[W], wy[W], wz[W];
    const int fx = tap_weights<W>(ux[s], g.nf[0], g, wx);
    const int fy = tap_weights<W>(uy[s], g.nf[1], g, wy);
    const int fz = DIM == 3 ? tap_weights<W>(uz[s], g.nf[2], g, wz) : 0;
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
    c[order[s]] = acc;
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

__global__ void deapodize_out(const float2* __restrict__ fine, Geom g, ModeMap mm, const float* __restrict__ dx,
                              const float* __restrict__ dy, const float* __restrict__ dz, float2* __restrict__ f) {
  const std::size_t total = std::size_t(mm.n[0]) * mm.n[1] * mm.n[2];
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
  static void spread(bool shared, const float* ux, const float* uy, const float* uz, const unsigned* order,
                     const float2* c, const int4* subs, std::size_t nsub, std::size_t m, const Geom& g,
                     std::size_t smem, int threads, float2* fine, cudaStream_t s) {
    if (shared) {
      CUDA_CHECK(cudaFuncSetAttribute(spread_shared<DIM, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      spread_shared<DIM, W><<<unsigned(nsub), threads, smem, s>>>(ux, uy, uz, order, c, subs, g, fine);
    } else {
      spread_global<DIM, W><<<blocks_for(m, 128), 128, 0, s>>>(ux, uy, uz, order, c, m, g, fine);
    }
    CUDA_CHECK_LAUNCH();
  }
  static void interp(bool shared, const float* ux, const float* uy, const float* uz, const unsigned* order,
                     const int4* subs, std::size_t nsub, std::size_t m, const Geom& g, std::size_t smem, int threads,
                     const float2* fine, float2* c, cudaStream_t s) {
    if (shared) {
      CUDA_CHECK(cudaFuncSetAttribute(interp_shared<DIM, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      interp_shared<DIM, W><<<unsigned(nsub), threads, smem, s>>>(ux, uy, uz, order, subs, g, fine, c);
    } else {
      interp_global<DIM, W><<<blocks_for(m, 128), 128, 0, s>>>(ux, uy, uz, order, m, g, fine, c);
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

DeviceBuffer<float> upload_deapodization(int n, int nf, const nufft::KernelParams& kp, bool used,
                                         cudaStream_t s) {
  std::vector<float> d(std::size_t(n), 1.f);
  if (used) {
    const std::vector<double> dd = nufft::deapodization(n, nf, kp);
    for (int i = 0; i < n; ++i) d[i] = float(dd[i]);
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

struct NufftPlan::Impl {
  cudaStream_t s;
  NufftOptions opt;
  int dim = 3, w = 0;
  ModeMap mm{};
  Geom g{};
  ImageGrid fine_grid;
  std::size_t m = 0, nsub = 0;
  std::size_t smem_spread = 0, smem_interp = 0;
  DeviceBuffer<float> dx, dy, dz, ux, uy, uz;
  DeviceBuffer<unsigned> order;
  DeviceBuffer<int4> subs;
  DeviceBuffer<float2> fine;
  std::unique_ptr<CufftPlan> fft;

  void sort_points(const float* kx, const float* ky, const float* kz);
};

NufftPlan::NufftPlan(const ImageGrid& modes, const ImageGrid& image, const NufftOptions& opt, cudaStream_t s)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.s = s;
  p.opt = opt;
  if (!(opt.tol > 0 && opt.tol < 1))
    throw InputError("nufft", "tolerance", std::to_string(opt.tol), "must lie in (0, 1)");
  if (opt.sigma != 2.0 && opt.sigma != 1.25)
    throw InputError("nufft", "upsampling", std::to_string(opt.sigma), "must be 2 or 1.25");
  if (opt.sigma < 2.0 && opt.tol < kMinTolSigma125) p.opt.sigma = 2.0;
  const nufft::KernelParams kp = nufft::kernel_for(opt.tol, p.opt.sigma);
  p.w = kp.width;
  if (p.w < kMinWidth || p.w > kMaxWidth)
    throw InputError("nufft", "tolerance", std::to_string(opt.tol),
                     "gives kernel width " + std::to_string(p.w) + ", outside 2..16");
  if (modes.nx < 2 || modes.ny < 2 || image.nx < 1 || image.ny < 1 || image.nz < 1)
    throw InputError("nufft", "grid", dims_string(modes), "needs at least 2 voxels along x and y");
  p.dim = modes.nz > 1 ? 3 : 2;
  const int n[3] = {modes.nx, modes.ny, modes.nz}, img[3] = {image.nx, image.ny, image.nz};
  const int defaults3[3] = {16, 16, 8}, defaults2[3] = {32, 32, 1};
  Geom& g = p.g;
  for (int a = 0; a < 3; ++a) {
    const bool used = a < p.dim;
    p.mm.n[a] = used ? n[a] : 1;
    g.nf[a] = used ? nufft::fine_size(n[a], kp) : 1;
    g.scale[a] = used ? float(double(g.nf[a]) / double(img[a])) : 0.f;
    const int want = opt.bin[a] > 0 ? opt.bin[a] : (p.dim == 3 ? defaults3[a] : defaults2[a]);
    g.bin[a] = used ? std::min(want, g.nf[a]) : 1;
    g.nbins[a] = (g.nf[a] + g.bin[a] - 1) / g.bin[a];
    g.pad[a] = used ? (p.w + 1) / 2 : 0;
    g.tile[a] = g.bin[a] + 2 * g.pad[a];
  }
  g.half_w = 0.5f * float(p.w);
  g.inv_half_w = 2.f / float(p.w);
  g.beta = float(kp.beta);
  g.chunk = opt.chunk;
  if (opt.threads < 32 || opt.threads > 1024 || opt.chunk < 1 || opt.chunk > opt.threads ||
      opt.threads % opt.chunk)
    throw InputError("nufft", "threads/chunk", std::to_string(opt.threads) + "/" + std::to_string(opt.chunk),
                     "threads must be 32..1024 and a multiple of chunk");
  const std::size_t cells = std::size_t(g.tile[0]) * g.tile[1] * g.tile[2];
  p.smem_interp = cells * sizeof(float2);
  p.smem_spread = p.smem_interp + std::size_t(g.chunk) * (sizeof(float2) + 3 * sizeof(int) + 3 * p.w * sizeof(float));
  const int limit = max_shared_bytes();
  if (p.smem_spread > std::size_t(limit))
    throw InputError("nufft", "bin size",
                     std::to_string(g.bin[0]) + "x" + std::to_string(g.bin[1]) + "x" + std::to_string(g.bin[2]),
                     "needs " + std::to_string(p.smem_spread) + " bytes of shared memory, the device has " +
                         std::to_string(limit));
  p.fine_grid = {g.nf[0], g.nf[1], g.nf[2]};
  const std::string what = "the NUFFT fine grid " + dims_string(p.fine_grid);
  require_free(double(p.fine_grid.voxels()) * sizeof(float2), what);
  p.fine.allocate(p.fine_grid.voxels(), what);
  p.fft = std::make_unique<CufftPlan>(p.fine_grid, s, what);
  p.dx = upload_deapodization(p.mm.n[0], g.nf[0], kp, true, s);
  p.dy = upload_deapodization(p.mm.n[1], g.nf[1], kp, true, s);
  p.dz = upload_deapodization(p.mm.n[2], g.nf[2], kp, p.dim == 3, s);
}

NufftPlan::~NufftPlan() = default;

OwnedStream::OwnedStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
OwnedStream::~OwnedStream() {
  cudaStreamSynchronize(s_);  // no throw from a destructor
  try {
    release_blas_handle(s_);  // the bench's separable rows may have made one
  } catch (const std::exception&) {
  }
  cudaStreamDestroy(s_);
}

void NufftPlan::Impl::sort_points(const float* kx, const float* ky, const float* kz) {
  const unsigned nbins = unsigned(g.nbins[0]) * g.nbins[1] * g.nbins[2];
  const std::string what = "NUFFT bins (" + std::to_string(m) + " points, " + std::to_string(nbins) + " bins)";
  require_free(6.0 * m * sizeof(unsigned) + 4.0 * (nbins + 1) * sizeof(unsigned), what);
  DeviceBuffer<unsigned> bin(m, what), rank(m, what);
  DeviceBuffer<unsigned> counts(nbins + 1, what), start(nbins + 1, what), sub(nbins + 1, what),
      sub_start(nbins + 1, what);
  order.allocate(m, what);
  ux.allocate(m, what);
  uy.allocate(m, what);
  uz.allocate(m, what);
  CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, counts.bytes(), s));
  CUDA_CHECK(cudaMemsetAsync(sub.get(), 0, sub.bytes(), s));  // entry nbins stays 0: the scans' total
  constexpr unsigned threads = 256;
  if (dim == 3)
    bin_count_kernel<3><<<blocks_for(m, threads), threads, 0, s>>>(kx, ky, kz, m, g, bin.get(), rank.get(), counts.get());
  else
    bin_count_kernel<2><<<blocks_for(m, threads), threads, 0, s>>>(kx, ky, kz, m, g, bin.get(), rank.get(), counts.get());
  CUDA_CHECK_LAUNCH();
  std::size_t temp_bytes = 0;
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts.get(), start.get(), nbins + 1, s));
  DeviceBuffer<char> temp(temp_bytes, what + " (scan scratch)");
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, counts.get(), start.get(), nbins + 1, s));
  if (dim == 3)
    bin_place_kernel<3><<<blocks_for(m, threads), threads, 0, s>>>(kx, ky, kz, m, g, bin.get(), rank.get(), start.get(),
                                                                   order.get(), ux.get(), uy.get(), uz.get());
  else
    bin_place_kernel<2><<<blocks_for(m, threads), threads, 0, s>>>(kx, ky, kz, m, g, bin.get(), rank.get(), start.get(),
                                                                   order.get(), ux.get(), uy.get(), uz.get());
  CUDA_CHECK_LAUNCH();
  const unsigned maxsub = unsigned(std::max(1, opt.max_subproblem));
  subproblem_count_kernel<<<blocks_for(nbins, threads), threads, 0, s>>>(counts.get(), nbins, maxsub, sub.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), temp_bytes, sub.get(), sub_start.get(), nbins + 1, s));
  unsigned total = 0;
  download(sub_start.get() + nbins, 1, &total, s);  // the launch size: the plan's one round trip
  nsub = total;
  subs.allocate(std::max<std::size_t>(nsub, 1), what + " (subproblems)");
  subproblem_fill_kernel<<<blocks_for(nbins, threads), threads, 0, s>>>(counts.get(), start.get(), sub.get(),
                                                                        sub_start.get(), nbins, maxsub, subs.get());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));  // the scratch buffers are freed at return
}

void NufftPlan::set_points(const float* kx, const float* ky, const float* kz, std::size_t m) {
  if (m >= (std::size_t(1) << 31))
    throw InputError("nufft", "points", std::to_string(m), "must be fewer than 2^31");
  impl_->m = m;
  impl_->nsub = 0;
  if (m) impl_->sort_points(kx, ky, kz);
}

void NufftPlan::type1(const float2* c, float2* f) {
  Impl& p = *impl_;
  CUDA_CHECK(cudaMemsetAsync(p.fine.get(), 0, p.fine.bytes(), p.s));
  if (p.m)
    dispatch(p.dim, p.w, [&](auto k) {
      k.spread(p.opt.spread == NufftMethod::Shared, p.ux.get(), p.uy.get(), p.uz.get(), p.order.get(), c,
               p.subs.get(), p.nsub, p.m, p.g, p.smem_spread, p.opt.threads, p.fine.get(), p.s);
    });
  p.fft->exec(p.fine.get(), CUFFT_INVERSE);
  const std::size_t modes = std::size_t(p.mm.n[0]) * p.mm.n[1] * p.mm.n[2];
  deapodize_out<<<blocks_for(modes, 256), 256, 0, p.s>>>(p.fine.get(), p.g, p.mm, p.dx.get(), p.dy.get(), p.dz.get(), f);
  CUDA_CHECK_LAUNCH();
}

void NufftPlan::type2(const float2* f, float2* c) {
  Impl& p = *impl_;
  deapodize_in<<<blocks_for(p.fine.size(), 256), 256, 0, p.s>>>(f, p.g, p.mm, p.dx.get(), p.dy.get(), p.dz.get(),
                                                                 p.fine.get());
  CUDA_CHECK_LAUNCH();
  p.fft->exec(p.fine.get(), CUFFT_FORWARD);
  if (p.m)
    dispatch(p.dim, p.w, [&](auto k) {
      k.interp(p.opt.interp == NufftMethod::Shared, p.ux.get(), p.uy.get(), p.uz.get(), p.order.get(), p.subs.get(),
               p.nsub, p.m, p.g, p.smem_interp, p.opt.threads, p.fine.get(), c, p.s);
    });
}

int NufftPlan::width() const { return impl_->w; }
double NufftPlan::sigma() const { return impl_->opt.sigma; }
ImageGrid NufftPlan::fine() const { return impl_->fine_grid; }
std::size_t NufftPlan::points() const { return impl_->m; }
std::size_t NufftPlan::subproblems() const { return impl_->nsub; }

// ---- host conveniences

namespace {

struct HostPoints {
  DeviceBuffer<float> kx, ky, kz;
  std::size_t m = 0;
};

HostPoints upload_points(const Trajectory& t, cudaStream_t s) {
  HostPoints h;
  h.m = t.size();
  const std::string what = "NUFFT points (" + std::to_string(h.m) + ")";
  h.kx.allocate(h.m, what);
  h.ky.allocate(h.m, what);
  h.kz.allocate(h.m, what);
  upload(t.kx.data(), h.m, h.kx.get(), s);
  upload(t.ky.data(), h.m, h.ky.get(), s);
  if (t.kz.size() == h.m)
    upload(t.kz.data(), h.m, h.kz.get(), s);
  else if (h.m)
    CUDA_CHECK(cudaMemsetAsync(h.kz.get(), 0, h.m * sizeof(float), s));
  return h;
}

std::vector<cfloat> run_type1(const Trajectory& t, const std::vector<cfloat>& c, const ImageGrid& modes,
                              const ImageGrid& image, const NufftOptions& opt) {
  if (c.size() != t.size())
    throw InputError("nufft", "values", std::to_string(c.size()),
                     "must number the trajectory's " + std::to_string(t.size()) + " points");
  OwnedStream s;
  HostPoints pts = upload_points(t, s);
  DeviceBuffer<float2> dc(std::max<std::size_t>(c.size(), 1), "NUFFT values");
  upload(reinterpret_cast<const float2*>(c.data()), c.size(), dc.get(), s);
  NufftPlan plan(modes, image, opt, s);
  plan.set_points(pts.kx.get(), pts.ky.get(), pts.kz.get(), pts.m);
  DeviceBuffer<float2> df(modes.voxels(), "NUFFT modes " + dims_string(modes));
  plan.type1(dc.get(), df.get());
  std::vector<cfloat> out(modes.voxels());
  download(df.get(), out.size(), reinterpret_cast<float2*>(out.data()), s);
  return out;
}

}  // namespace

std::vector<cfloat> nufft_type1(const Trajectory& t, const std::vector<cfloat>& c, const ImageGrid& grid,
                                const NufftOptions& opt) {
  return run_type1(t, c, grid, grid, opt);
}

std::vector<cfloat> nufft_q(const Trajectory& t, const std::vector<float>& w, const ImageGrid& grid,
                            const NufftOptions& opt) {
  std::vector<cfloat> c(t.size(), cfloat(1.f, 0.f));
  if (!w.empty()) {
    if (w.size() != t.size())
      throw InputError("nufft", "weights", std::to_string(w.size()),
                       "must number the trajectory's " + std::to_string(t.size()) + " points");
    for (std::size_t i = 0; i < w.size(); ++i) c[i] = cfloat(w[i], 0.f);
  }
  return run_type1(t, c, grid.doubled(), grid, opt);
}

std::vector<cfloat> nufft_type2(const Trajectory& t, const std::vector<cfloat>& f, const ImageGrid& grid,
                                const NufftOptions& opt) {
  if (f.size() != grid.voxels())
    throw InputError("nufft", "image", std::to_string(f.size()),
                     "must have the grid's " + std::to_string(grid.voxels()) + " voxels");
  OwnedStream s;
  HostPoints pts = upload_points(t, s);
  NufftPlan plan(grid, grid, opt, s);
  plan.set_points(pts.kx.get(), pts.ky.get(), pts.kz.get(), pts.m);
  DeviceBuffer<float2> df(f.size(), "NUFFT modes"), dc(std::max<std::size_t>(t.size(), 1), "NUFFT values");
  upload(reinterpret_cast<const float2*>(f.data()), f.size(), df.get(), s);
  plan.type2(df.get(), dc.get());
  std::vector<cfloat> out(t.size());
  download(dc.get(), out.size(), reinterpret_cast<float2*>(out.data()), s);
  return out;
}

}  // namespace fhd::gpu
