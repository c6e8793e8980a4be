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
//
// This file: the plan (setup, lanes, FFTs, the transforms). The work on the
// fine grid (sorting, spreading, interpolation, modes in and out) is in
// nufft_cpu_grid.cpp; the state both share in nufft_cpu_impl.hpp.
#include "recon/nufft/nufft_cpu.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "recon/nufft/nufft_cpu_impl.hpp"

namespace fhd::nufft {

void CpuPlan::Impl::make(const ImageGrid& modes_in, const ImageGrid& image_in, const Options& o) {
  opt = o;
  kp = kernel_for(o.tol, o.sigma);
  table = &horner_table(kp, o.tol);
  kern = &detail::spread_kernels(o.simd);
  threads = o.threads > 0 ? o.threads : default_threads();
  modes = modes_in;
  image = image_in;
  const int n_mod[3] = {modes.nx, modes.ny, modes.nz};
  // Axes of one mode idle and last (axis_order; capi/nufft_c.cpp drops them).
  // Q's doubled grid of a 7x1x5 slab, 14x2x10, has none: an image axis of one
  // voxel with 2 modes is transformed as any other, at spacing 1.
  axis = axis_order(n_mod);
  for (int a = 0; a < 3; ++a) {
    const int n = n_mod[axis[a]];
    if (a < 2 && n < 2)
      throw std::invalid_argument("nufft: " + dims_string(modes) +
                                  " modes: two axes need 2 or more (an axis of 1 mode is idle; a 1D transform is "
                                  "not offered)");
    len[a] = n;
    nf[a] = n == 1 ? 1 : fine_size(n, kp);
    width[a] = n == 1 ? 1 : kp.width;
    std::vector<double> d = deapodization(n, nf[a], kp);
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
// waiting between steps), the last round too, with lanes to spare: a batch is
// then bitwise repeatable, whichever lane takes which transform (the same
// plans on grids of the same alignment). A single transform on several
// threads, and a batch whose fine grids fit one lane only, run threaded one at
// a time (their sums vary in the last bits). Lanes, grids and plans are made
// before the parallel loop (FFTW planning is serial anyway).
template <class One>
void CpuPlan::Impl::transforms(int n, One one) {
  const int nl = threads == 1 ? 1 : std::min(n, lane_limit());
  const int by_lanes = threads == 1 || nl > 1 ? n : 0;
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
