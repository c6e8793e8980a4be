#pragma once
// The exact gather on a device (the book's cmpFhD and cmpQ, and the forward
// model's direct sum): every sample-voxel pair, no approximation but the
// trig mode's. CPU: recon/gather/cpu_fhd.cpp (OpenMP, BLAS); GPU: the kernel
// table of cuda/gather/.
#include <vector>

#include "recon/device/device.hpp"
#include "recon/gather/fhd_options.hpp"

namespace fhd {

class GatherKernels {
 public:
  virtual ~GatherKernels() = default;
  // out = FhD: out_n = sum_m mu_m exp(+i 2 pi k_m . x_n) on grid's voxel centres.
  virtual void adjoint(const Points& k, const DeviceVector& mu, const ImageGrid& grid, const FhdOptions& opt,
                       DeviceVector& out) = 0;
  // out_m = sum_n x_n exp(-i 2 pi k_m . x_n) (the forward model, Phi = 1).
  virtual void forward(const Points& k, const DeviceVector& x, const ImageGrid& grid, const FhdOptions& opt,
                       DeviceVector& out) = 0;
  // Q(y_j) = sum_m w_m exp(+i 2 pi k_m . y_j) on grid.doubled() (w empty: 1).
  virtual VecPtr q(const Points& k, const std::vector<float>& w, const ImageGrid& grid, const FhdOptions& opt) = 0;

  // ---- Parts for a partition over devices (recon/plan/partition.hpp): the
  // image's last axis (z in 3D, y in 2D) in slabs.
  // FhD on slices [a0, a0 + h) of the last axis.
  virtual void adjoint_slab(const Points& k, const DeviceVector& mu, const ImageGrid& grid, int a0, int h,
                            const FhdOptions& opt, DeviceVector& out) = 0;
  // Slices [a0, a0 + h) of Q's Hermitian half box (q_half_box).
  virtual VecPtr q_half_slab(const Points& k, const std::vector<float>& w, const ImageGrid& grid, int a0, int h,
                             const FhdOptions& opt) = 0;
  // Q from its half box computed elsewhere (the faces and the assembly here).
  virtual VecPtr q_from_half(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                             const FhdOptions& opt, const DeviceVector& half) = 0;
};

// The box Q's Hermitian-half gather covers on the doubled grid: every slice
// 0..n of the mirror axis (z in 3D, y in 2D).
void q_half_box(const ImageGrid& img, int box[3]);

}  // namespace fhd
