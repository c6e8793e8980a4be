#pragma once
// The CPU NUFFT's inner loops (docs/cpu-backend.md, "NUFFT"): spreading a run
// of sorted points into a subgrid or the fine grid, and interpolating them
// from the fine grid. Written once with 8-lane vectors
// (recon/nufft_spread_impl.hpp) and compiled twice: for the baseline x86-64
// target (SSE2) and, on GCC for x86-64, for AVX2 + FMA; spread_kernels()
// picks the best the running CPU has.
#include <cstddef>
#include <cstdint>
#include <string>

#include "recon/nufft_horner.hpp"
#include "recon/types.hpp"

namespace fhd::nufft::detail {

// Where a point's kernel sits: its first cell i0 and Horner variable s per
// axis (recon/nufft_horner.hpp; axis 2 is 0 when wz == 1). One cache line or
// less per point: the spreader reads them in sorted order.
struct PointPos {
  std::int32_t i0[3];
  float s[3];
};

// The points of one subproblem: pos[begin, end) in sorted order, and each
// point's index in the caller's (trajectory) order.
struct PointRun {
  const PointPos* pos;
  const std::uint32_t* perm;
  std::size_t begin, end;
};

struct KernelShape {
  const HornerTable* table;
  int wy, wz;  // 1 on an idle axis (its kernel is the constant 1)
};

// Spread one transform's values (point m's at c[m]) into a grid of
// interleaved complex floats: `grid` points at cell lo (floats), rows sit
// row_stride complex values apart, planes plane_stride. wrap[a] == 0: the grid
// is a subproblem's subgrid (its x rows hold >= 4 cells past the run's extent)
// and nothing wraps; wrap[a] = nf[a] (a = 1, 2, lo = 0): the fine grid itself,
// y and z wrap, x spills into the rows' halos (kHaloLeft/kHaloRight below),
// which the caller folds back. The grid is added to, not cleared.
const int kHaloLeft = 8, kHaloRight = 16;
struct SpreadJob {
  PointRun pts;
  KernelShape k;
  const cfloat* c;
  float* grid;
  std::size_t row_stride, plane_stride;
  int lo[3];
  int wrap[3];
};

// Interpolate one fine grid at the run's points into out[perm[p]]. grid
// points at cell (0, 0, 0) (floats); rows of nf[0] cells sit row_stride
// complex values apart, planes plane_stride, y and z wrap, and each row
// carries halos (kHaloLeft cells before it, kHaloRight after it, copies of its
// other end), so x never wraps.
struct InterpJob {
  PointRun pts;
  KernelShape k;
  const float* grid;
  std::size_t row_stride, plane_stride;
  int nf[3];
  cfloat* out;
};

struct SpreadKernels {
  const char* name;  // "generic" (baseline SSE2) or "avx2" (AVX2 + FMA)
  void (*spread)(const SpreadJob&);
  void (*interp)(const InterpJob&);
};

// simd: "auto" (the best this CPU runs), "generic" or "avx2"; throws
// std::invalid_argument for a variant this build or CPU does not have.
const SpreadKernels& spread_kernels(const std::string& simd = "auto");

// The two instantiations (recon/nufft_spread.cpp, recon/nufft_spread_avx2.cpp);
// avx2_kernels() is null where the build has no AVX2 version.
const SpreadKernels* generic_kernels();
const SpreadKernels* avx2_kernels();

}  // namespace fhd::nufft::detail
