#pragma once
// The CPU NUFFT plan's state (CpuPlan::Impl) and its constants, shared by the
// plan (recon/nufft/nufft_cpu.cpp: setup, lanes, FFTs, the transforms) and its
// work on the fine grid (recon/nufft/nufft_cpu_grid.cpp: sorting the points
// into subproblems, spreading, interpolation, the modes in and out). Internal
// to those two files.
#include <fftw3.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "recon/nufft/nufft_cpu.hpp"
#include "recon/ops/fft_pruned.hpp"
#include "recon/nufft/nufft_horner.hpp"
#include "recon/nufft/nufft_spread.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fhd::nufft {

// Named (not anonymous: CpuPlan::Impl, which has external linkage, holds
// these types) and brought into fhd::nufft for nufft_cpu.cpp and nufft_cpu_grid.cpp.
namespace cpu_impl {

const int kBin[3] = {16, 4, 4};      // fine cells per bin and axis
const int kBlock = 4;                // a subproblem's block: one row of bins x kBlock^2 in y, z
const std::size_t kMaxRun = 4096;    // points per subproblem
const int kRowLocks = 4096;          // fine-grid rows share these locks by index
const std::size_t kLocateBlock = 1024;  // points per call of the locate kernel
const std::size_t kFineBudget = std::size_t(512) << 20;  // bytes of fine grids one call may hold

inline int default_threads() {
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

}  // namespace cpu_impl

using namespace cpu_impl;

struct CpuPlan::Impl {
  Options opt;
  KernelParams kp;
  const HornerTable* table = nullptr;
  const detail::SpreadKernels* kern = nullptr;
  ImageGrid modes, image, finegrid;  // modes and image as given; the fine grid in the plan's axis order
  // The plan's axis a is the given axis axis[a] (axis_order: axes of one
  // mode idle and last). len, nf, width, deapod and the fine grid are in the
  // plan's order.
  std::array<int, 3> axis{0, 1, 2};
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

}  // namespace fhd::nufft
