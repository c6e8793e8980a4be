#pragma once
// The CPU NUFFT (docs/cpu-backend.md, "NUFFT"): tolerance-controlled type 1 (adjoint) and
// type 2 (forward) transforms between a trajectory and a Cartesian grid, in the
// project's conventions (voxel x_i = (i - len/2)/N, k in cycles/FOV):
//   type 1: f_n = sum_m c_m exp(+i 2 pi k_m . x_n)   (cmpFhD; Q on the doubled grid)
//   type 2: c_m = sum_n f_n exp(-i 2 pi k_m . x_n)   (the forward model, Phi = 1)
// Spread/interpolate with the ES kernel on a fine grid (sigma 2 or 1.25),
// FFTW, deapodize. Single precision throughout, sums in float.
#include <memory>
#include <vector>

#include "recon/nufft/nufft_kernel.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::nufft {

struct Options {
  double tol = 1e-6;   // requested relative error (kernel_for's range)
  double sigma = 2.0;  // fine-grid upsampling: 2 or 1.25
};

// One plan per trajectory and mode grid: the points' fine-grid positions are
// computed and sorted into bins once, the fine grid and both FFTW plans are
// made once; type1/type2 then run many times. Not re-entrant (one fine grid).
class CpuPlan {
 public:
  // modes: the output grid (image, or image.doubled() for Q); image sets the
  // spacing 1/N of x_n = (i - len/2)/N. An axis with image length 1 is not
  // transformed (its x is 0 and k along it is ignored).
  CpuPlan(const Trajectory& traj, const ImageGrid& modes, const ImageGrid& image, const Options& opt);
  ~CpuPlan();
  CpuPlan(const CpuPlan&) = delete;
  CpuPlan& operator=(const CpuPlan&) = delete;

  std::vector<cfloat> type1(const std::vector<cfloat>& c);  // c: trajectory.size(); out: modes
  std::vector<cfloat> type2(const std::vector<cfloat>& f);  // f: modes.voxels(); out: trajectory.size()

  const KernelParams& kernel() const;
  ImageGrid fine() const;
  std::size_t points() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Q(y_j) = sum_m w_m exp(+i 2 pi k_m . y_j) on grid.doubled() (w empty = 1):
// the type 1 of w onto the doubled grid.
std::vector<cfloat> q_by_nufft(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                               const Options& opt);

}  // namespace fhd::nufft
