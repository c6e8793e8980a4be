#pragma once
// The CPU NUFFT's inner loops (docs/cpu-backend.md, "NUFFT"): spreading a run
// of sorted points into a subgrid, interpolating them from the fine grid, and
// finding where the points' kernels sit. Written once with 8-lane vectors
// (recon/nufft/nufft_spread_impl.hpp) and compiled twice: for the baseline x86-64
// target (SSE2) and, on GCC for x86-64, for AVX2 + FMA; spread_kernels()
// picks the best the running CPU has.
#include <cstddef>
#include <cstdint>
#include <string>

#include "recon/nufft/nufft_horner.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::nufft::detail {

// Where a point's kernel sits: its first cell i0 and Horner variable s per
// axis (recon/nufft/nufft_horner.hpp; axis 2 is 0 when wz == 1). One cache line or
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

// Spread one transform's values (point m's at c[m]) into a subproblem's
// subgrid of interleaved complex floats: `grid` points at cell lo (floats),
// rows sit row_stride complex values apart (>= 4 cells past the run's
// extent: the last point writes whole vectors), planes plane_stride. Nothing
// wraps. The subgrid is added to, not cleared.
struct SpreadJob {
  PointRun pts;
  KernelShape k;
  const cfloat* c;
  float* grid;
  std::size_t row_stride, plane_stride;
  int lo[3];
};

// The fine grid's rows carry halos: kHaloLeft cells before each row,
// kHaloRight after it, copies of its other end.
const int kHaloLeft = 8, kHaloRight = 16;

// Interpolate one fine grid at the run's points into out[perm[p]]. grid
// points at cell (0, 0, 0) (floats); rows of nf[0] cells sit row_stride
// complex values apart, planes plane_stride, y and z wrap, x reads into the
// halos and never wraps.
struct InterpJob {
  PointRun pts;
  KernelShape k;
  const float* grid;
  std::size_t row_stride, plane_stride;
  int nf[3];
  cfloat* out;
};

// Where n points' kernels sit along one axis: u = k scale folded into
// [0, nf) in double, i0 = ceil(u - w/2), s = 2 (i0 - u) + w - 1 (only this
// in-cell offset is rounded to float: a float u would carry 1e-5 cells of
// error at nf ~ 300, ten times the 1e-6 tolerance's budget).
struct LocateJob {
  const float* k;
  std::size_t n;
  double scale;
  int nf, w;
  std::int32_t* i0;
  float* s;
};

struct SpreadKernels {
  const char* name;  // "generic" (baseline SSE2) or "avx2" (AVX2 + FMA)
  void (*spread)(const SpreadJob&);
  void (*interp)(const InterpJob&);
  void (*locate)(const LocateJob&);
};

// simd: "auto" (the best this CPU runs), "generic" or "avx2"; throws
// std::invalid_argument for a variant this build or CPU does not have.
const SpreadKernels& spread_kernels(const std::string& simd = "auto");

// The two instantiations (recon/nufft/nufft_spread.cpp, recon/nufft/nufft_spread_avx2.cpp);
// avx2_kernels() is null where the build has no AVX2 version.
const SpreadKernels* generic_kernels();
const SpreadKernels* avx2_kernels();

}  // namespace fhd::nufft::detail
