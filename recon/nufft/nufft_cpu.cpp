// The CPU NUFFT (see nufft_cpu.hpp and docs/cpu-backend.md, "NUFFT").
//
// Point m sits at fine-grid coordinate u = k_m nf / N (mod nf) on each axis:
// exp(+i 2 pi k x_j) with x_j = j/N is N-periodic in k, which is exactly the
// nf-periodicity of the fine grid, so any k is exact. The kernel covers the
// w cells i0 .. i0 + w - 1, i0 = ceil(u - w/2); u is found in double and only
// the offset i0 - u (within one cell) is rounded to float.
//
// Parallel structure (FINUFFT's): set_points sorts the points into bins of
// 16 x 8 x 8 fine cells and cuts the sorted order into subproblems, one row of
// bins (all x, one y and z bin) each, split at kMaxRun points. Each thread
// spreads a subproblem into its own subgrid (the run's bounding box, no wrap,
// no atomics) and adds it into the fine grid row by row under a lock of the
// row. Interpolation reads the fine grid directly. The fine grid's FFT is
// pruned: type 1 reads only the modes at both ends of each axis, type 2 starts
// from them (recon/ops/fft_pruned.hpp).
#include "recon/nufft/nufft_cpu.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "recon/ops/fft_pruned.hpp"
#include "recon/nufft/nufft_horner.hpp"
#include "recon/nufft/nufft_spread.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fhd::nufft {

namespace {

const int kBin[3] = {16, 4, 4};      // fine cells per bin and axis
const int kBlock = 4;                // a subproblem's block: one row of bins x kBlock^2 in y, z
const std::size_t kMaxRun = 4096;    // points per subproblem
const int kRowLocks = 4096;          // fine-grid rows share these locks by index
const std::size_t kLocateBlock = 1024;  // points per call of the locate kernel
const std::size_t kFineBudget = std::size_t(512) << 20;  // bytes of fine grids one call may hold

int default_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

inline int wrap(int i, int n) {
  i %= n;
  return i < 0 ? i + n : i;
}

// The sort order: blocks of one bin row in x by kBlock x kBlock bins in y
// and z (z slowest), x bins, then the bins of the block. A subproblem is a
// block: its subgrid spans kBlock bins in y and z (the kernel's w - 1 extra
// cells cost less, relative, than over one bin), while consecutive points
// stay within one bin, whose kernels' rows fit the L1 cache together.
struct BinOrder {
  int nb[3], nblock[2];  // bins per axis; blocks in y, z
  BinOrder(const int nf[3]) {
    for (int a = 0; a < 3; ++a) nb[a] = (nf[a] + kBin[a] - 1) / kBin[a];
    for (int a = 1; a < 3; ++a) nblock[a - 1] = (nb[a] + kBlock - 1) / kBlock;
  }
  std::size_t keys() const { return std::size_t(nblock[1]) * nblock[0] * nb[0] * kBlock * kBlock; }
  std::uint32_t key(int cx, int cy, int cz) const {
    const int bx = cx / kBin[0], by = cy / kBin[1], bz = cz / kBin[2];
    const std::uint32_t block = std::uint32_t(bz / kBlock) * nblock[0] + by / kBlock;
    return (block * nb[0] + bx) * (kBlock * kBlock) + (bz % kBlock) * kBlock + by % kBlock;
  }
  std::uint32_t block_of(std::uint32_t key) const { return key / (std::uint32_t(nb[0]) * kBlock * kBlock); }
};

struct Run {
  std::size_t begin, end;
  int lo[3], size[3];  // bounding box of the kernels' cells (unwrapped)
};

// Memory FFTW aligns for its SIMD codelets, freed with fftwf_free.
struct FftwFree {
  void operator()(void* p) const { fftwf_free(p); }
};
using FineBuffer = std::unique_ptr<cfloat, FftwFree>;

}  // namespace

struct CpuPlan::Impl {
  Options opt;
  KernelParams kp;
  const HornerTable* table = nullptr;
  const detail::SpreadKernels* kern = nullptr;
  ImageGrid modes, image, finegrid;
  int len[3], nf[3], width[3];  // mode length, fine length, kernel width (1 on an idle axis)
  std::vector<float> deapod[3];  // 1/phihat per mode, per axis
  int threads = 1;

  // Points (set_points).
  std::size_t m = 0;
  std::vector<std::uint32_t> perm;  // sorted position -> trajectory index
  std::vector<detail::PointPos> pos;  // kernel position per point, sorted order
  std::vector<Run> runs;

  // Execution state, made at first use and kept: fine grids ("lanes") with
  // their FFTW plans, the subproblems' scratch, the row locks.
  struct Lane {
    FineBuffer grid;
    std::unique_ptr<PrunedFft> fft[2][2];  // [type 2?][threaded?]
  };
  std::vector<Lane> lanes;
  std::unique_ptr<std::mutex[]> row_locks;
  std::vector<std::vector<float>> subgrids;  // per thread

  void make(const ImageGrid& modes_in, const ImageGrid& image_in, const Options& o);
  std::vector<std::uint32_t> place(const Trajectory& traj);
  void cut_runs(const std::vector<std::uint32_t>& rows);
  int lane_limit() const;
  cfloat* lane_grid(int lane);
  PrunedFft& fft(int lane, bool type2, bool threaded);
  detail::PointRun point_run(const Run& r) const;
  detail::KernelShape shape() const { return {table, width[1], width[2]}; }
  void zero(cfloat* g, int nt) const;
  void spread_runs(const cfloat* c, cfloat* g, int nt, std::vector<float>* own);
  void add_subgrid(const Run& r, const float* sub, int sx, cfloat* g, bool lock);
  void fill_halos(cfloat* g, int nt) const;
  void modes_out(const cfloat* g, cfloat* f, int nt) const;
  void modes_in(const cfloat* f, cfloat* g, int nt) const;
  void interp(const cfloat* g, cfloat* c, int nt) const;
  void one_type1(const cfloat* c, cfloat* f, int lane, bool threaded);
  void one_type2(const cfloat* f, cfloat* c, int lane, bool threaded);
  template <class One>
  void transforms(int n, One one);
  // Fine grid layout: rows of nf[0] cells with halos (interpolation never
  // wraps in x) at row_stride, planes at plane_stride; cell (x, y, z) at
  // cell0() + x + row_offset(y, z).
  std::size_t row_stride = 0, plane_stride = 0;
  std::size_t fine_stride() const { return plane_stride * nf[2]; }
  std::size_t cell0() const { return detail::kHaloLeft; }
  std::size_t row_offset(std::size_t y, std::size_t z) const { return row_stride * y + plane_stride * z; }
  GridLayout layout() const {
    return {{1, std::ptrdiff_t(row_stride), std::ptrdiff_t(plane_stride)}, std::ptrdiff_t(fine_stride())};
  }
  void choose_strides();
  std::size_t fine_index(int i, int a) const { return std::size_t(wrap(i - len[a] / 2, nf[a])); }
};

void CpuPlan::Impl::make(const ImageGrid& modes_in, const ImageGrid& image_in, const Options& o) {
  opt = o;
  kp = kernel_for(o.tol, o.sigma);
  table = &horner_table(kp, o.tol);
  kern = &detail::spread_kernels(o.simd);
  threads = o.threads > 0 ? o.threads : default_threads();
  modes = modes_in;
  image = image_in;
  const int n_img[3] = {image.nx, image.ny, image.nz}, n_mod[3] = {modes.nx, modes.ny, modes.nz};
  for (int a = 0; a < 3; ++a) {
    if (n_img[a] == 1 && n_mod[a] != 1) throw std::invalid_argument("nufft: an idle image axis needs 1 mode");
    if (a < 2 && n_img[a] < 2) throw std::invalid_argument("nufft: x and y need at least 2 voxels");
    len[a] = n_mod[a];
    nf[a] = n_img[a] == 1 ? 1 : fine_size(n_mod[a], kp);
    width[a] = n_img[a] == 1 ? 1 : kp.width;
    std::vector<double> d = deapodization(n_mod[a], nf[a], kp);
    deapod[a].assign(d.begin(), d.end());
  }
  finegrid = {nf[0], nf[1], nf[2]};
  choose_strides();
}

// Rows and planes an odd number of cache lines (8 complex values) apart:
// strides of 2^k bytes put the w rows and w planes a point reads into the same
// cache sets (the L1 holds 8 lines per set). At 64^3 (fine 128^3) dense rows
// and planes made interpolation 3x slower than spreading.
void CpuPlan::Impl::choose_strides() {
  const std::size_t line = 8;
  auto odd_lines = [&](std::size_t n) {
    n = (n + line - 1) / line * line;
    return (n / line) % 2 ? n : n + line;
  };
  row_stride = odd_lines(nf[0] + detail::kHaloLeft + detail::kHaloRight);
  plane_stride = odd_lines(row_stride * nf[1]);
}

// Storage that is written before it is read: no zeroing pass over it (a
// std::vector would write every element once more, on one thread).
template <class T>
std::unique_ptr<T[]> uninitialized(std::size_t n) {
  return std::unique_ptr<T[]>(new T[n]);
}

// Where every point's kernel sits and its bin (trajectory order, blocks of
// kLocateBlock points through the SIMD locate kernel), then a counting sort by
// BinOrder's key that moves the positions into sorted order as it places them.
// Returns the block of each sorted point.
std::vector<std::uint32_t> CpuPlan::Impl::place(const Trajectory& traj) {
  m = traj.size();
  if (m >= (std::size_t(1) << 32)) throw std::invalid_argument("nufft: too many points");
  if (traj.ky.size() != m || (width[2] > 1 && traj.kz.size() != m))
    throw std::invalid_argument("nufft: kx, ky and kz must have one value per point");
  const float* k[3] = {traj.kx.data(), traj.ky.data(), width[2] > 1 ? traj.kz.data() : nullptr};
  const int n_img[3] = {image.nx, image.ny, image.nz};
  const BinOrder order(nf);
  auto unsorted = uninitialized<detail::PointPos>(m);
  auto bin_of = uninitialized<std::uint32_t>(m);
  std::vector<std::uint32_t> rows(m);
  const int nt = threads;
  std::vector<std::size_t> count(order.keys() * nt + 1, 0);  // [bin][thread], then prefix sums
  perm.resize(m);
  pos.resize(m);
  const std::size_t blocks = (m + kLocateBlock - 1) / kLocateBlock;
#pragma omp parallel num_threads(nt)
  {
#ifdef _OPENMP
    const int t = omp_get_thread_num();
#else
    const int t = 0;
#endif
    std::int32_t i0[3][kLocateBlock] = {};
    float sv[3][kLocateBlock] = {};
#pragma omp for schedule(static)
    for (std::size_t blk = 0; blk < blocks; ++blk) {
      const std::size_t b0 = blk * kLocateBlock, n = std::min(kLocateBlock, m - b0);
      for (int a = 0; a < 3; ++a)
        if (width[a] > 1)
          kern->locate({k[a] + b0, n, double(nf[a]) / n_img[a], nf[a], width[a], i0[a], sv[a]});
      for (std::size_t j = 0; j < n; ++j) {
        detail::PointPos q{{i0[0][j], i0[1][j], i0[2][j]}, {sv[0][j], sv[1][j], sv[2][j]}};
        int cell[3];
        for (int a = 0; a < 3; ++a) cell[a] = std::clamp(q.i0[a] + width[a] / 2, 0, nf[a] - 1);
        const std::uint32_t key = order.key(cell[0], cell[1], cell[2]);
        unsorted[b0 + j] = q;
        bin_of[b0 + j] = key;
        ++count[std::size_t(key) * nt + t + 1];
      }
    }
#pragma omp single
    for (std::size_t j = 1; j < count.size(); ++j) count[j] += count[j - 1];
    // Same static split as above: each thread places its own points in order.
#pragma omp for schedule(static)
    for (std::size_t blk = 0; blk < blocks; ++blk) {
      const std::size_t b0 = blk * kLocateBlock, e = std::min(m, b0 + kLocateBlock);
      for (std::size_t i = b0; i < e; ++i) {
        const std::size_t d = count[std::size_t(bin_of[i]) * nt + t]++;
        perm[d] = std::uint32_t(i);
        pos[d] = unsorted[i];
        rows[d] = order.block_of(bin_of[i]);
      }
    }
  }
  return rows;
}

// Subproblems: one block (`rows`: the block of each sorted point) each, split
// every kMaxRun points.
void CpuPlan::Impl::cut_runs(const std::vector<std::uint32_t>& rows) {
  runs.clear();
  for (std::size_t b = 0; b < m;) {
    std::size_t e = b + 1;
    while (e < m && e - b < kMaxRun && rows[e] == rows[b]) ++e;
    runs.push_back({b, e, {0, 0, 0}, {1, 1, 1}});
    b = e;
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (int a = 0; a < 3; ++a) {
      if (width[a] == 1) continue;
      int lo = pos[runs[r].begin].i0[a], hi = lo;
      for (std::size_t p = runs[r].begin; p < runs[r].end; ++p) {
        lo = std::min(lo, pos[p].i0[a]);
        hi = std::max(hi, pos[p].i0[a]);
      }
      runs[r].lo[a] = lo;
      runs[r].size[a] = hi - lo + width[a];
    }
}

// Lanes that fit the fine-grid budget (each lane is one fine grid).
int CpuPlan::Impl::lane_limit() const {
  const std::size_t bytes = fine_stride() * sizeof(cfloat);
  return int(std::max<std::size_t>(1, std::min<std::size_t>(threads, kFineBudget / bytes)));
}

cfloat* CpuPlan::Impl::lane_grid(int lane) {
  if (lanes.size() <= std::size_t(lane)) lanes.resize(lane + 1);
  Lane& l = lanes[lane];
  if (!l.grid) {
    l.grid.reset(static_cast<cfloat*>(fftwf_malloc(fine_stride() * sizeof(cfloat))));
    if (!l.grid) throw std::bad_alloc();
  }
  return l.grid.get();
}

// The modes of axis a sit at fine indices [0, len - len/2) and [nf - len/2, nf).
// threaded: FFTW's threads (the plan's count) for a transform that has the
// machine to itself; else one, for a lane beside others.
PrunedFft& CpuPlan::Impl::fft(int lane, bool type2, bool threaded) {
  cfloat* data = lane_grid(lane) + cell0();
  auto& slot = lanes[lane].fft[type2][threaded];
  if (!slot) {
    std::array<std::vector<KeptRange>, 3> kept;
    for (int a = 0; a < 3; ++a) kept[a] = {{0, len[a] - len[a] / 2}, {nf[a] - len[a] / 2, len[a] / 2}};
    slot = std::make_unique<PrunedFft>(finegrid, layout(), kept,
                                       type2 ? PrunedFft::Pruned::Input : PrunedFft::Pruned::Output,
                                       std::array<int, 3>{0, 1, 2}, type2 ? FFTW_FORWARD : FFTW_BACKWARD, 1, data,
                                       threaded ? threads : 1);
  }
  return *slot;
}

detail::PointRun CpuPlan::Impl::point_run(const Run& r) const { return {pos.data(), perm.data(), r.begin, r.end}; }

void CpuPlan::Impl::zero(cfloat* g, int nt) const {
  const std::size_t total = fine_stride();
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::size_t i = 0; i < total; ++i) g[i] = cfloat(0.f);
}

// Adds a subgrid (rows of sx complex values) into the fine grid g, wrapping
// every axis; x in up to three unwrapped pieces.
void CpuPlan::Impl::add_subgrid(const Run& r, const float* sub, int sx, cfloat* g, bool lock) {
  g += cell0();
  for (int z = 0; z < r.size[2]; ++z)
    for (int y = 0; y < r.size[1]; ++y) {
      const std::size_t gy = wrap(r.lo[1] + y, nf[1]), gz = wrap(r.lo[2] + z, nf[2]);
      std::unique_lock<std::mutex> guard(row_locks[(gy + nf[1] * gz) % kRowLocks], std::defer_lock);
      if (lock) guard.lock();
      const float* src = sub + 2 * std::size_t(sx) * (y + std::size_t(r.size[1]) * z);
      float* dst = reinterpret_cast<float*>(g + row_offset(gy, gz));
      for (int x = 0; x < r.size[0];) {
        const int gx = wrap(r.lo[0] + x, nf[0]);
        const int count = std::min(r.size[0] - x, nf[0] - gx);
        float* d = dst + 2 * gx;
        const float* q = src + 2 * x;
#pragma omp simd
        for (int i = 0; i < 2 * count; ++i) d[i] += q[i];
        x += count;
      }
    }
}

// One transform spread by nt threads: each subproblem into the thread's
// subgrid (`own`, or the plan's per thread), added into g (under the row
// locks when nt > 1). One thread per transform (a lane) spreads the same way:
// into the fine grid directly, wrapping rows, was 10-20% slower at 64^3
// (the subgrid stays in L2; 27.5-30.8 ms against 33-34 ms, one thread).
void CpuPlan::Impl::spread_runs(const cfloat* c, cfloat* g, int nt, std::vector<float>* own) {
  zero(g, nt);
#pragma omp parallel num_threads(nt)
  {
#ifdef _OPENMP
    std::vector<float>& sub = own ? *own : subgrids[omp_get_thread_num()];
#else
    std::vector<float>& sub = own ? *own : subgrids[0];
#endif
#pragma omp for schedule(dynamic, 1)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const Run& r = runs[i];
      // Rows with room for the last point's full vectors.
      const int sx = r.size[0] + 4;
      sub.assign(2 * std::size_t(sx) * r.size[1] * r.size[2], 0.f);
      float* first = sub.data();  // cell lo of the run
      detail::SpreadJob job{point_run(r), shape(), c, first, std::size_t(sx), std::size_t(sx) * r.size[1],
                            {r.lo[0], r.lo[1], r.lo[2]}};
      kern->spread(job);
      add_subgrid(r, first, sx, g, nt > 1);
    }
  }
}

// Each row's halos: its last kHaloLeft cells before it, its first kHaloRight after it.
void CpuPlan::Impl::fill_halos(cfloat* g, int nt) const {
  const int left = detail::kHaloLeft, right = detail::kHaloRight;
  g += cell0();
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt)
  for (int z = 0; z < nf[2]; ++z)
    for (int y = 0; y < nf[1]; ++y) {
      cfloat* row = g + row_offset(y, z);
      for (int i = 0; i < left; ++i) row[i - left] = row[wrap(i - left, nf[0])];
      for (int i = 0; i < right; ++i) row[nf[0] + i] = row[wrap(i, nf[0])];
    }
}

// Type 1's last step: the modes from both ends of each fine axis, deapodized.
void CpuPlan::Impl::modes_out(const cfloat* g, cfloat* f, int nt) const {
  const int lx = len[0], ly = len[1], lz = len[2];
  g += cell0();
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt)
  for (int z = 0; z < lz; ++z)
    for (int y = 0; y < ly; ++y) {
      const float dyz = deapod[1][y] * deapod[2][z];
      const cfloat* src = g + row_offset(fine_index(y, 1), fine_index(z, 2));
      cfloat* dst = f + std::size_t(lx) * (y + std::size_t(ly) * z);
      for (int x = 0; x < lx; ++x) dst[x] = src[fine_index(x, 0)] * (dyz * deapod[0][x]);
    }
}

// Type 2's first step: the fine grid zeroed, the deapodized modes at both ends.
void CpuPlan::Impl::modes_in(const cfloat* f, cfloat* g, int nt) const {
  const int lx = len[0], ly = len[1], lz = len[2];
  zero(g, nt);
  g += cell0();
#pragma omp parallel for collapse(2) schedule(static) num_threads(nt)
  for (int z = 0; z < lz; ++z)
    for (int y = 0; y < ly; ++y) {
      const float dyz = deapod[1][y] * deapod[2][z];
      cfloat* dst = g + row_offset(fine_index(y, 1), fine_index(z, 2));
      const cfloat* src = f + std::size_t(lx) * (y + std::size_t(ly) * z);
      for (int x = 0; x < lx; ++x) dst[fine_index(x, 0)] = src[x] * (dyz * deapod[0][x]);
    }
}

void CpuPlan::Impl::interp(const cfloat* g, cfloat* c, int nt) const {
  const float* cell = reinterpret_cast<const float*>(g + cell0());
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
  for (std::size_t i = 0; i < runs.size(); ++i) {
    detail::InterpJob job{point_run(runs[i]), shape(), cell, row_stride, plane_stride, {nf[0], nf[1], nf[2]}, c};
    kern->interp(job);
  }
}

// One transform on lane `lane`: threaded, by every thread (subproblems, FFTW's
// threads); else by the calling thread alone.
void CpuPlan::Impl::one_type1(const cfloat* c, cfloat* f, int lane, bool threaded) {
  cfloat* g = lane_grid(lane);
  PrunedFft& plan = fft(lane, false, threaded);
  if (threaded)
    spread_runs(c, g, threads, nullptr);
  else
    spread_runs(c, g, 1, &subgrids[lane]);
  plan.execute();
  modes_out(g, f, threaded ? threads : 1);
}

void CpuPlan::Impl::one_type2(const cfloat* f, cfloat* c, int lane, bool threaded) {
  const int nt = threaded ? threads : 1;
  cfloat* g = lane_grid(lane);
  PrunedFft& plan = fft(lane, true, threaded);
  modes_in(f, g, nt);
  plan.execute();
  fill_halos(g, nt);
  interp(g, c, nt);
}

// n transforms: with one thread, or as many transforms as lanes at a time,
// each thread does whole transforms in its own lane (nothing shared, no
// waiting between steps); the remainder, and a single transform on several
// threads, run threaded one at a time. Lanes, grids and plans are made before
// the parallel loop (FFTW planning is serial anyway).
template <class One>
void CpuPlan::Impl::transforms(int n, One one) {
  const int nl = threads == 1 ? 1 : std::min(n, lane_limit());
  const int by_lanes = threads == 1 ? n : nl > 1 ? n / nl * nl : 0;
  for (int l = 0; l < (by_lanes > 0 ? nl : 0); ++l) lane_grid(l);
  if (!row_locks) row_locks = std::make_unique<std::mutex[]>(kRowLocks);
  if (subgrids.size() < std::size_t(std::max(threads, nl))) subgrids.resize(std::max(threads, nl));
#pragma omp parallel for schedule(dynamic, 1) num_threads(nl) if (by_lanes > 0 && nl > 1)
  for (int t = 0; t < by_lanes; ++t) {
#ifdef _OPENMP
    const int lane = nl > 1 ? omp_get_thread_num() : 0;
#else
    const int lane = 0;
#endif
    one(t, lane, false);
  }
  for (int t = by_lanes; t < n; ++t) one(t, 0, true);
}

CpuPlan::CpuPlan(const ImageGrid& modes, const ImageGrid& image, const Options& opt)
    : impl_(std::make_unique<Impl>()) {
  impl_->make(modes, image, opt);
}

CpuPlan::CpuPlan(const Trajectory& traj, const ImageGrid& modes, const ImageGrid& image, const Options& opt)
    : CpuPlan(modes, image, opt) {
  set_points(traj);
}

CpuPlan::~CpuPlan() = default;

void CpuPlan::set_points(const Trajectory& traj) {
  impl_->cut_runs(impl_->place(traj));
}

const KernelParams& CpuPlan::kernel() const { return impl_->kp; }
ImageGrid CpuPlan::modes() const { return impl_->modes; }
ImageGrid CpuPlan::fine() const { return impl_->finegrid; }
std::size_t CpuPlan::points() const { return impl_->m; }
int CpuPlan::threads() const { return impl_->threads; }
const char* CpuPlan::simd() const { return impl_->kern->name; }

void CpuPlan::type1(const cfloat* c, cfloat* f, int n) {
  Impl& s = *impl_;
  const std::size_t m = s.m, v = s.modes.voxels();
  s.transforms(n, [&](int t, int lane, bool threaded) { s.one_type1(c + t * m, f + t * v, lane, threaded); });
}

void CpuPlan::type2(const cfloat* f, cfloat* c, int n) {
  Impl& s = *impl_;
  const std::size_t m = s.m, v = s.modes.voxels();
  s.transforms(n, [&](int t, int lane, bool threaded) { s.one_type2(f + t * v, c + t * m, lane, threaded); });
}

namespace {

int transform_count(std::size_t size, std::size_t per, const char* what) {
  if (per == 0 ? size != 0 : (size == 0 || size % per != 0))
    throw std::invalid_argument(std::string("nufft ") + what);
  return per == 0 ? 1 : int(size / per);
}

}  // namespace

std::vector<cfloat> CpuPlan::type1(const std::vector<cfloat>& c) {
  const int n = transform_count(c.size(), points(), "type 1: need one value per trajectory point and transform");
  std::vector<cfloat> f(impl_->modes.voxels() * n);
  type1(c.data(), f.data(), n);
  return f;
}

std::vector<cfloat> CpuPlan::type2(const std::vector<cfloat>& f) {
  const int n = transform_count(f.size(), impl_->modes.voxels(), "type 2: need one value per mode and transform");
  std::vector<cfloat> c(points() * n);
  type2(f.data(), c.data(), n);
  return c;
}

std::vector<cfloat> q_by_nufft(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                               const Options& opt) {
  if (!w.empty() && w.size() != traj.size()) throw std::invalid_argument("nufft Q: need one weight per point");
  CpuPlan plan(traj, grid.doubled(), grid, opt);
  std::vector<cfloat> c(traj.size(), cfloat(1));
  for (std::size_t i = 0; i < w.size(); ++i) c[i] = w[i];
  return plan.type1(c);
}

}  // namespace fhd::nufft
