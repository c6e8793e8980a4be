#pragma once
// Spreading by gather (type 1, 3D; cuda/nufft/nufft.cu includes it once,
// after nufft_device.cuh; docs/nufft-gpu.md, "Spreading by gather").
//
// Why: the shared-tile spread (spread_shared) adds each point's w^3 values
// with shared-memory atomics, one set per transform, so a batch of coils costs
// what its single calls cost. Here each thread owns one fine-grid cell of an
// 8^3 box and sums, in registers, the points that reach it: a point's first
// taps and kernel values are staged once in shared memory and serve every
// transform of the batch, whose values are the only per-transform work (two
// FMAs a cell). No shared atomics, and each cell goes to the fine grid once
// per block.
//
// Work: a box reads the sorted points of the bins within reach of it (the
// bins of floor(u) within pad cells of the box), keeps those whose taps
// cover a cell of the box, and every thread tests each kept point against
// its cell (a warp skips a point none of its cells takes). A box with many
// candidates (radial centres) is cut into parts of kGatherCandidates, each
// its own block, which add their sums to the fine grid atomically.
//
// Where it applies: 3D plans whose fine grid holds, on every axis, a box and
// its reach plus one bin (so a box's reach never wraps onto itself and its
// bins are one cyclic run per axis); the plan keeps the shared tile otherwise.

namespace fhd::gpu {
namespace {

constexpr int kBox = 8;                          // box edge in fine cells
constexpr int kBoxThreads = kBox * kBox * kBox;  // a thread a cell
constexpr unsigned kGatherCandidates = 4096;     // candidate points per block at most
constexpr int kGatherGroup = 8;                  // transforms a block sums at once in a batch
constexpr int kMaxRuns = 128;                    // runs of sorted points a box reads (see Runs)

__host__ __device__ inline int boxes_along(const Geom& g, int a) { return (g.nf[a] + kBox - 1) / kBox; }

// The gather's geometry condition (see the top).
// The bins a box's reach spans along axis a, at most.
inline int reach_bins(const Geom& g, int a) { return (kBox + 2 * g.pad[a] + g.bin[a] - 1) / g.bin[a] + 1; }

inline bool gather_fits(const Geom& g, int dim) {
  if (dim != 3) return false;
  for (int a = 0; a < 3; ++a)
    if (g.nf[a] < kBox + 2 * g.pad[a] + g.bin[a]) return false;
  return 2 * reach_bins(g, 1) * reach_bins(g, 2) <= kMaxRuns;
}

// Shared memory of spread_gather: per staged point its packed first taps,
// 3 W kernel values and TG values.
inline std::size_t gather_shared_bytes(int w, int tg) {
  return std::size_t(kBoxThreads) * (sizeof(int) + 3 * w * sizeof(float) + tg * sizeof(float2));
}

// The bins, along axis a, holding floor(u) of the points that reach box
// `box`: one cyclic run from `first`, `n` long.
struct BinRun {
  int first, n;
};
__device__ __forceinline__ BinRun bin_run(int box, int a, const Geom& g) {
  const int o = box * kBox, nf = g.nf[a];
  const int lo = wrap(o - g.pad[a], nf) / g.bin[a], hi = wrap(o + kBox - 1 + g.pad[a], nf) / g.bin[a];
  return {lo, (hi - lo + g.nbins[a]) % g.nbins[a] + 1};
}

struct BoxRuns {
  BinRun x, y, z;
  int3 origin;
};
__device__ __forceinline__ BoxRuns box_runs(unsigned box, const Geom& g) {
  const int bx = int(box % unsigned(boxes_along(g, 0)));
  const int by = int(box / unsigned(boxes_along(g, 0)) % unsigned(boxes_along(g, 1)));
  const int bz = int(box / unsigned(boxes_along(g, 0) * boxes_along(g, 1)));
  return {bin_run(bx, 0, g), bin_run(by, 1, g), bin_run(bz, 2, g), make_int3(bx * kBox, by * kBox, bz * kBox)};
}

__device__ __forceinline__ unsigned run_bin(const BoxRuns& r, int i, int j, int k, const Geom& g) {
  const int x = (r.x.first + i) % g.nbins[0], y = (r.y.first + j) % g.nbins[1], z = (r.z.first + k) % g.nbins[2];
  return unsigned(x + g.nbins[0] * (y + g.nbins[1] * z));
}

// Half h of the runs of (y, z) bin pair (j, k): the x bins before the wrap
// (h 0) or after it (h 1), as one span of sorted points.
struct Span {
  unsigned begin, len;
};
__device__ __forceinline__ Span run_span(const BoxRuns& r, int j, int k, int h, const unsigned* __restrict__ counts,
                                         const unsigned* __restrict__ start, const Geom& g) {
  const int head = min(r.x.n, g.nbins[0] - r.x.first);  // x bins before the wrap
  const int i0 = h ? head : 0, i1 = h ? r.x.n : head;
  if (i1 <= i0) return {0, 0};
  const unsigned first = run_bin(r, i0, j, k, g), last = run_bin(r, i1 - 1, j, k, g);
  return {start[first], start[last] + counts[last] - start[first]};
}

// Parts per box: its candidates (the same spans spread_gather reads) over
// kGatherCandidates, rounded up.
__global__ void gather_count_kernel(const unsigned* __restrict__ counts, const unsigned* __restrict__ start, Geom g,
                                    unsigned nboxes, unsigned* __restrict__ parts) {
  for (unsigned b = blockIdx.x * blockDim.x + threadIdx.x; b < nboxes; b += gridDim.x * blockDim.x) {
    const BoxRuns r = box_runs(b, g);
    unsigned n = 0;
    for (int k = 0; k < r.z.n; ++k)
      for (int j = 0; j < r.y.n; ++j)
        for (int h = 0; h < 2; ++h) n += run_span(r, j, k, h, counts, start, g).len;
    parts[b] = (n + kGatherCandidates - 1) / kGatherCandidates;
  }
}

// A part = (box, index of its kGatherCandidates-long run of candidates).
__global__ void gather_fill_kernel(const unsigned* __restrict__ parts, const unsigned* __restrict__ part_start,
                                   unsigned nboxes, int2* __restrict__ out) {
  for (unsigned b = blockIdx.x * blockDim.x + threadIdx.x; b < nboxes; b += gridDim.x * blockDim.x)
    for (unsigned p = 0; p < parts[b]; ++p) out[part_start[b] + p] = make_int2(int(b), int(p));
}

// First tap of a point relative to the box origin o along one axis, taken
// modulo nf into [-(W-1), nf - W]: it reaches the box iff it is < kBox.
template <int W>
__device__ __forceinline__ int box_tap(float u, int o, int nf, const Geom& g) {
  int r = first_tap(u, ceilf(u - g.half_w), nf) - o + (W - 1);
  if (r < 0) r += nf;
  if (r >= nf) r -= nf;
  return r - (W - 1);
}

// The staging of one stride of candidates: each thread tests one, and the
// kept ones take the next slots (a warp's in one shared atomic).
template <int W, int TG>
struct Stage {
  int* packed;    // per slot: first taps + 64, a byte per axis
  float* wts;     // per slot: W values of x, then y, then z
  float2* val;    // per slot: TG transforms' values
  int* count;     // slots taken

  __device__ void add(const float4& pt, const int3& o, const Geom& g, const float2* __restrict__ c,
                      std::size_t c_stride, int nt, bool valid) {
    int rx = 0, ry = 0, rz = 0;
    if (valid) {
      rx = box_tap<W>(pt.x, o.x, g.nf[0], g);
      ry = box_tap<W>(pt.y, o.y, g.nf[1], g);
      rz = box_tap<W>(pt.z, o.z, g.nf[2], g);
    }
    const bool keep = valid && rx < kBox && ry < kBox && rz < kBox;
    const unsigned mask = __ballot_sync(0xffffffffu, keep);
    const int lane = threadIdx.x & 31;
    int base = 0;
    if (lane == 0 && mask) base = atomicAdd(count, __popc(mask));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (!keep) return;
    const int slot = base + __popc(mask & ((1u << lane) - 1u));
    packed[slot] = (rx + 64) | ((ry + 64) << 8) | ((rz + 64) << 16);
    float* w = wts + slot * 3 * W;
    tap_weights<W>(pt.x, g.nf[0], g, w);
    tap_weights<W>(pt.y, g.nf[1], g, w + W);
    tap_weights<W>(pt.z, g.nf[2], g, w + 2 * W);
    const unsigned idx = point_index(pt);
#pragma unroll
    for (int t = 0; t < TG; ++t) val[slot * TG + t] = t < nt ? c[t * c_stride + idx] : make_float2(0.f, 0.f);
  }
};

// A box's candidates as runs of the sorted points: the bins along x of one
// (y, z) bin pair are adjacent in the sort, so each pair is one run (two
// where the x bins wrap). Slot 2 (j + ny k) + h holds half h of pair (j, k).
struct Runs {
  unsigned begin[kMaxRuns];    // first sorted point of each run
  unsigned cum[kMaxRuns + 1];  // candidates before each run; cum[n] all of them
  int n;
};

// Threads 0 .. pairs-1 each lay out their pair's runs; thread 0 sums them.
__device__ void lay_out_runs(const BoxRuns& r, const unsigned* __restrict__ counts,
                             const unsigned* __restrict__ start, const Geom& g, Runs& runs) {
  const int pairs = r.y.n * r.z.n;
  if (int(threadIdx.x) < pairs) {
    const int j = int(threadIdx.x) % r.y.n, k = int(threadIdx.x) / r.y.n;
    for (int h = 0; h < 2; ++h) {
      const Span sp = run_span(r, j, k, h, counts, start, g);
      runs.begin[2 * threadIdx.x + h] = sp.begin;
      runs.cum[2 * threadIdx.x + h + 1] = sp.len;  // a length until the sum below
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    runs.n = 2 * pairs;
    runs.cum[0] = 0;
    for (int i = 1; i <= runs.n; ++i) runs.cum[i] += runs.cum[i - 1];
  }
  __syncthreads();
}

// The sorted position of candidate q (< runs.cum[runs.n]): the last run
// starting at or before it (empty runs are passed over).
__device__ __forceinline__ unsigned candidate(const Runs& runs, unsigned q) {
  int lo = 0, hi = runs.n;  // cum[lo] <= q < cum[hi]
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (runs.cum[mid] <= q)
      lo = mid;
    else
      hi = mid;
  }
  return runs.begin[lo] + (q - runs.cum[lo]);
}

// One block a part: 512 threads, one cell each (x fastest, so a warp holds
// 8 x 4 cells of one plane); blockIdx.y the group of TG transforms. Each
// stride stages up to 512 candidates, then every thread sums the kept ones.
template <int W, int TG>
__global__ void __launch_bounds__(kBoxThreads) spread_gather(const float4* __restrict__ pts,
                                                             const float2* __restrict__ c,
                                                             const int2* __restrict__ parts,
                                                             const unsigned* __restrict__ counts,
                                                             const unsigned* __restrict__ start, Geom g,
                                                             float2* __restrict__ fine, std::size_t c_stride,
                                                             std::size_t fine_stride, int n) {
  extern __shared__ int gather_smem[];
  __shared__ int staged;
  __shared__ Runs runs;
  Stage<W, TG> st{gather_smem, reinterpret_cast<float*>(gather_smem + kBoxThreads), nullptr, &staged};
  st.val = reinterpret_cast<float2*>(st.wts + kBoxThreads * 3 * W);
  const int t0 = int(blockIdx.y) * TG, nt = min(TG, n - t0);
  c += std::size_t(t0) * c_stride;
  const int2 part = parts[blockIdx.x];
  const BoxRuns r = box_runs(unsigned(part.x), g);
  lay_out_runs(r, counts, start, g, runs);
  const int cx = threadIdx.x % kBox, cy = threadIdx.x / kBox % kBox, cz = threadIdx.x / (kBox * kBox);
  float2 acc[TG];
#pragma unroll
  for (int t = 0; t < TG; ++t) acc[t] = make_float2(0.f, 0.f);

  const unsigned lo = unsigned(part.y) * kGatherCandidates, hi = min(lo + kGatherCandidates, runs.cum[runs.n]);
  for (unsigned base = lo; base < hi; base += kBoxThreads) {
    if (threadIdx.x == 0) staged = 0;
    __syncthreads();
    const unsigned q = base + threadIdx.x;
    st.add(q < hi ? pts[candidate(runs, q)] : make_float4(0.f, 0.f, 0.f, 0.f), r.origin, g, c, c_stride, nt, q < hi);
    __syncthreads();
    const int ns = staged;
    for (int p = 0; p < ns; ++p) {
      const int pk = st.packed[p];
      const int dx = cx + 64 - (pk & 0xff), dy = cy + 64 - ((pk >> 8) & 0xff), dz = cz + 64 - (pk >> 16);
      if (unsigned(dx) < unsigned(W) && unsigned(dy) < unsigned(W) && unsigned(dz) < unsigned(W)) {
        const float* w = st.wts + p * 3 * W;
        const float kv = w[dx] * w[W + dy] * w[2 * W + dz];
        const float2* v = st.val + p * TG;
#pragma unroll
        for (int t = 0; t < TG; ++t) {
          acc[t].x = fmaf(kv, v[t].x, acc[t].x);
          acc[t].y = fmaf(kv, v[t].y, acc[t].y);
        }
      }
    }
    __syncthreads();  // the stage is read before the next stride fills it
  }
  const int gx = r.origin.x + cx, gy = r.origin.y + cy, gz = r.origin.z + cz;
  if (gx >= g.nf[0] || gy >= g.nf[1] || gz >= g.nf[2]) return;
  const std::size_t cell = gx + std::size_t(g.nf[0]) * (gy + std::size_t(g.nf[1]) * gz);
#pragma unroll
  for (int t = 0; t < TG; ++t)
    if (t < nt && (acc[t].x != 0.f || acc[t].y != 0.f)) add2(fine + (t0 + t) * fine_stride + cell, acc[t]);
}

template <int DIM, int W>
struct GatherKernels {
  // n transforms in groups of kGatherGroup (one group: blockIdx.y).
  static void spread(const float4* pts, const float2* c, const int2* parts, std::size_t nparts, const unsigned* counts,
                     const unsigned* start, const Geom& g, float2* fine, std::size_t m, int n, std::size_t fine_stride,
                     cudaStream_t s) {
    static_assert(DIM == 3, "the gather spreads 3D plans");
    if (n == 1)
      launch<1>(pts, c, parts, nparts, counts, start, g, fine, m, n, fine_stride, s);
    else
      launch<kGatherGroup>(pts, c, parts, nparts, counts, start, g, fine, m, n, fine_stride, s);
  }
  template <int TG>
  static void launch(const float4* pts, const float2* c, const int2* parts, std::size_t nparts, const unsigned* counts,
                     const unsigned* start, const Geom& g, float2* fine, std::size_t m, int n, std::size_t fine_stride,
                     cudaStream_t s) {
    const int smem = int(gather_shared_bytes(W, TG));
    CUDA_CHECK(cudaFuncSetAttribute(spread_gather<W, TG>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const dim3 grid(unsigned(nparts), unsigned((n + TG - 1) / TG));
    spread_gather<W, TG><<<grid, kBoxThreads, smem, s>>>(pts, c, parts, counts, start, g, fine, m, fine_stride, n);
    CUDA_CHECK_LAUNCH();
  }
};

}  // namespace
}  // namespace fhd::gpu
