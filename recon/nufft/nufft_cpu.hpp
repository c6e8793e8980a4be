#pragma once
// The CPU NUFFT (docs/cpu-backend.md, "NUFFT"): tolerance-controlled type 1 (adjoint) and
// type 2 (forward) transforms between a trajectory and a Cartesian grid, in the
// project's conventions (voxel x_i = (i - len/2)/N, k in cycles/FOV):
//   type 1: f_n = sum_m c_m exp(+i 2 pi k_m . x_n)   (cmpFhD; Q on the doubled grid)
//   type 2: c_m = sum_n f_n exp(-i 2 pi k_m . x_n)   (the forward model, Phi = 1)
// Spread/interpolate with the ES kernel (as piecewise polynomials) on a fine
// grid (sigma 2 or 1.25), FFTW, deapodize. Single precision throughout, sums in float.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "recon/nufft/nufft_kernel.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::nufft {

struct Options {
  double tol = 1e-6;   // requested relative error (kernel_for's range)
  double sigma = 2.0;  // fine-grid upsampling: 2 or 1.25
  int threads = 0;     // OpenMP threads (and FFTW's); 0 = omp_get_max_threads() when the plan is made
  std::string simd = "auto";  // spreading kernels: auto | generic | avx2 (recon/nufft/nufft_spread.hpp)
};

// One plan per trajectory and mode grid, in FINUFFT's three steps:
//   make        kernel, fine-grid size, deapodization (no point, no grid memory);
//   set_points  the points' fine-grid positions, sorted into bins and cut into
//               subproblems, once per trajectory;
//   type1/type2 n transforms per call over those points (n coils): the fine
//               grids and their FFTW plans are made at the first call of each
//               batch size and kept.
// Not re-entrant: one call at a time per plan (it owns the fine grids).
class CpuPlan {
 public:
  // modes: the output grid (image, or image.doubled() for Q); image sets the
  // spacing 1/N of x_n = (i - len/2)/N. An axis of 1 mode, x, y or z, is not
  // transformed (its x is 0 and k along it is ignored); two axes need 2 or
  // more modes. Throws std::invalid_argument for a grid the plan cannot take
  // (one of 1D modes), fhd::InputError
  // for a tolerance or sigma out of range.
  CpuPlan(const ImageGrid& modes, const ImageGrid& image, const Options& opt);
  // make + set_points.
  CpuPlan(const Trajectory& traj, const ImageGrid& modes, const ImageGrid& image, const Options& opt);
  ~CpuPlan();
  CpuPlan(const CpuPlan&) = delete;
  CpuPlan& operator=(const CpuPlan&) = delete;

  // Replaces the points (kz may be empty when the image has one z voxel).
  void set_points(const Trajectory& traj);

  // n transforms: type1 reads c[t * points() + m] and writes f[t * modes().voxels() + i];
  // type2 the reverse. Batched, the points are sorted once and each point's
  // kernel values are computed once for all n.
  void type1(const cfloat* c, cfloat* f, int n);
  void type2(const cfloat* f, cfloat* c, int n);
  // The same with n = c.size() / points() (or f.size() / modes().voxels());
  // std::invalid_argument when the size is not a positive multiple.
  std::vector<cfloat> type1(const std::vector<cfloat>& c);
  std::vector<cfloat> type2(const std::vector<cfloat>& f);

  const KernelParams& kernel() const;
  ImageGrid modes() const;
  ImageGrid fine() const;
  std::size_t points() const;
  int threads() const;
  const char* simd() const;  // the spreading kernels in use: "generic" or "avx2"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Q(y_j) = sum_m w_m exp(+i 2 pi k_m . y_j) on grid.doubled() (w empty = 1):
// the type 1 of w onto the doubled grid.
std::vector<cfloat> q_by_nufft(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                               const Options& opt);

}  // namespace fhd::nufft
