#pragma once
// Field-inhomogeneity compensation (docs/field-maps.md). With a field map f_n
// (Hz, one per voxel) and each sample's time t_m (s after excitation) the
// signal model is
//   (A x)_m = sum_n x_n exp(-i 2 pi (k_m . r_n + f_n t_m)).
// Two operators for A (recon/ops/linop.hpp), so that every solver and every
// composition (SENSE's coils, TV) takes them:
// - exact: A and A^H applied every iteration (FieldKernels: host direct sums
//   on the CPU, gathers on the GPU; no Toeplitz structure, no approximation);
// - time-segmented (Sutton, Noll, Fessler 2003; Fessler et al. 2005):
//   exp(-i 2 pi f t) ~ sum_l a_l(t) exp(-i 2 pi f tau_l) with L segment times
//   tau_l and least-squares interpolators a_l, so that
//   A ~ sum_l diag(a_l) F diag(e_l), e_l = exp(-i 2 pi f tau_l), and
//   A^H A ~ sum_{l,l'} diag(conj e_l) T_{ll'} diag(e_l'), T_{ll'} the
//   Toeplitz operator of Q with weights conj(a_l) a_l' |Phi|^2.
// Both are built on the plan (recon/plan/plan.hpp), so they run on every
// device and, for the segmented one, both operator kinds (exact, NUFFT).
#include <memory>
#include <string>
#include <vector>

#include "recon/plan/plan.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

// InputError unless hz has grid.voxels() finite values and times one finite,
// non-negative value per sample (where: the file or option to name).
void check_field(const FieldData& f, const ImageGrid& grid, std::size_t samples, const std::string& where);
// The times' half of it: one value per sample, seconds in [0, 10] (sample
// times may come without a map: ISMRMRD's TE is made from them).
void check_sample_times(const std::vector<float>& times, std::size_t samples, const std::string& where);

// Temporal interpolators of the time-segmented model.
struct TimeSegments {
  std::vector<double> tau;   // the L segment times, s
  std::vector<cfloat> a;     // a_l(t_m) at [l * samples + m]
  double rms_error = 0;      // RMS of exp(-i2pi f t) - sum_l a_l(t) exp(-i2pi f tau_l) over the
                             // field map's values (256 quantiles) and the sample times (unit-modulus target)
  std::size_t samples() const { return tau.empty() ? 0 : a.size() / tau.size(); }
};

// L segments evenly spaced over [min t, max t] and least-squares interpolators
// for the field map's values (Fessler et al. 2005, eq. 11, its histogram
// taken as 256 quantiles of the map).
TimeSegments time_segments(const FieldData& f, int segments);

// The rule for the default L: the smallest L whose interpolators' RMS error
// (TimeSegments::rms_error) is at most kSegmentTolerance, at most kMaxSegments.
constexpr double kSegmentTolerance = 2e-3;
constexpr int kMaxSegments = 32;
int choose_segments(const FieldData& f);

// The exact model A = Phi G_f (G_f: the sums above, Phi: the plan's); its
// normal is A^H A by two gathers per apply.
OpPtr field_exact_op(const std::shared_ptr<Plan>& plan, const FieldData& f);
// The time-segmented model A = Phi sum_l diag(a_l) F diag(e_l); its normal is
// the L x L Toeplitz blocks (each off-diagonal pair from two real-weighted
// Q's), made at the first normal() and kept.
OpPtr field_segmented_op(const std::shared_ptr<Plan>& plan, const FieldData& f, const TimeSegments& seg);

// The exact model on a device, for one field map and trajectory (made once per operator).
class FieldModel {
 public:
  virtual ~FieldModel() = default;
  virtual void forward(const DeviceVector& x, DeviceVector& d) = 0;  // d_m = sum_n x_n e^{-i 2 pi (k.r + f t)}
  virtual void adjoint(const DeviceVector& d, DeviceVector& x) = 0;  // x_n = sum_m d_m e^{+i 2 pi (k.r + f t)}
};

class FieldKernels {
 public:
  virtual ~FieldKernels() = default;
  virtual std::unique_ptr<FieldModel> model(const Points& k, const FieldData& f, const ImageGrid& grid) = 0;
};
std::unique_ptr<FieldKernels> make_cpu_field(Device& dev);

// e_l = exp(-i 2 pi f_n tau) per voxel.
std::vector<cfloat> field_phase(const std::vector<float>& hz, double tau);

// InputError unless the map numbers the voxels, the times the samples, and
// the vector given (`what`) has `want` values: every device's field model
// checks this (the values themselves: check_field, once per model).
void check_field_sizes(std::size_t samples, const FieldData& f, const ImageGrid& grid, std::size_t given,
                       std::size_t want, const char* what);

// The exact model on the host (the CPU's FieldModel): samples grouped by
// time, each group a separable direct sum.
std::vector<cfloat> field_forward_host(const Trajectory& k, const FieldData& f, const std::vector<cfloat>& image,
                                       const ImageGrid& grid);
std::vector<cfloat> field_adjoint_host(const Trajectory& k, const FieldData& f, const std::vector<cfloat>& data,
                                       const ImageGrid& grid);

}  // namespace fhd
