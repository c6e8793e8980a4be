#pragma once
// The NUFFT on a device, in cmpFhD's convention (docs/conventions.md):
//   type 1: f_n = sum_m c_m exp(+i 2 pi k_m . x_n)   (FhD; Q on the doubled grid)
//   type 2: c_m = sum_n f_n exp(-i 2 pi k_m . x_n)   (the forward model)
// with x_n = (n - len/2) / N per axis over `modes` (the image, or its doubled
// grid for Q) and N the image's size. A plan is made once per trajectory and
// grid and owned by the operator that uses it (the point sort, the fine grid's
// FFT plan); it runs for any number of data vectors. CPU:
// recon/nufft/nufft_cpu.hpp; GPU: cuda/nufft/nufft.hpp.
#include <memory>
#include <vector>

#include "recon/device/device.hpp"

namespace fhd {

class NufftPlan {
 public:
  virtual ~NufftPlan() = default;
  // c: the plan's points; f: modes.voxels(). On the plan's device.
  virtual void type1(const DeviceVector& c, DeviceVector& f) = 0;
  virtual void type2(const DeviceVector& f, DeviceVector& c) = 0;
  // n type 1s in one call: c holds n point-sized slices, f n modes-sized
  // ones. Here one call each; a plan that batches (batches(): the GPU's)
  // overrides it, and so does the CPU's (each transform on a thread of its own).
  virtual void type1_batch(const DeviceVector& c, DeviceVector& f, int n);
  virtual bool batches() const { return false; }
  // Makes now what the first type 1 of n transforms would (the GPU's fine
  // grids, its FFT's plan, the gather's parts), so a caller can pay it beside
  // other work. Here nothing: the CPU plan makes its lanes at first use.
  virtual void reserve_type1(int /*n*/) {}
};

class NufftKernels {
 public:
  virtual ~NufftKernels() = default;
  // A plan for the points k onto `modes`, coordinates set by `image`, accurate to tol.
  virtual std::unique_ptr<NufftPlan> plan(const Points& k, const ImageGrid& modes, const ImageGrid& image,
                                          double tol) = 0;
  // Q(y_j) = sum_m w_m exp(+i 2 pi k_m . y_j) on grid.doubled() (w empty: 1)
  // by a type 1 whose plan (a fine grid 4x the image per axis) is made and
  // dropped here: Q is computed once per trajectory. The weights are made
  // where the device computes.
  virtual VecPtr q(const Points& k, const std::vector<float>& w, const ImageGrid& grid, double tol) = 0;
};

}  // namespace fhd
