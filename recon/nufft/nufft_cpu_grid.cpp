// The CPU NUFFT's work on the fine grid (recon/nufft/nufft_cpu_impl.hpp; the
// plan and the transforms are in nufft_cpu.cpp, whose opening comment gives the
// parallel structure): the points sorted into bins and cut into subproblems,
// spreading them through per-thread subgrids, interpolation, and the modes
// moved between the fine grid and the output.
#include "recon/nufft/nufft_cpu_impl.hpp"

#include <algorithm>
#include <stdexcept>

namespace fhd::nufft {

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
  // In the plan's axis order (make): an idle axis's k is not read.
  const std::vector<float>* given[3] = {&traj.kx, &traj.ky, &traj.kz};
  const int given_img[3] = {image.nx, image.ny, image.nz};
  const float* k[3] = {nullptr, nullptr, nullptr};
  int n_img[3];
  for (int a = 0; a < 3; ++a) {
    n_img[a] = given_img[axis[a]];
    if (width[a] == 1) continue;
    if (given[axis[a]]->size() != m) throw std::invalid_argument("nufft: kx, ky and kz must have one value per point");
    k[a] = given[axis[a]]->data();
  }
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

}  // namespace fhd::nufft
