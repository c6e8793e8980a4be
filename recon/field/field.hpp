#pragma once
// Field-inhomogeneity compensation (docs/field-maps.md). With a field map f_n
// (Hz, one per voxel) and each sample's time t_m (s after excitation) the
// signal model is
//   (A x)_m = sum_n x_n exp(-i 2 pi (k_m . r_n + f_n t_m)).
// Two ways to solve (A^H A + lambda R^H R) x = A^H d by CG:
// - exact: A and A^H applied every iteration (Backend::field_forward and
//   field_adjoint; no Toeplitz structure, no approximation);
// - time-segmented (Sutton, Noll, Fessler 2003; Fessler et al. 2005):
//   exp(-i 2 pi f t) ~ sum_l a_l(t) exp(-i 2 pi f tau_l) with L segment times
//   tau_l and least-squares interpolators a_l, so that
//   A ~ sum_l diag(a_l) F diag(e_l), e_l = exp(-i 2 pi f tau_l), and
//   A^H A ~ sum_{l,l'} diag(conj e_l) T_{ll'} diag(e_l'), T_{ll'} the
//   Toeplitz operator of Q with weights conj(a_l) a_l' |Phi|^2.
// Both are written against the plan (recon/plan/plan.hpp), so they run on every
// backend and, for the segmented one, both operator kinds (exact, NUFFT).
#include <memory>
#include <string>
#include <vector>

#include "recon/plan/plan.hpp"

namespace fhd {

// InputError unless hz has grid.voxels() finite values and times one finite,
// non-negative value per sample (where: the file or option to name).
void check_field(const FieldData& f, const ImageGrid& grid, std::size_t samples, const std::string& where);

// Temporal interpolators of the time-segmented model.
struct TimeSegments {
  std::vector<double> tau;   // the L segment times, s
  std::vector<cfloat> a;     // a_l(t_m) at [l * samples + m]
  double rms_error = 0;      // RMS of exp(-i2pi f t) - sum_l a_l(t) exp(-i2pi f tau_l) over the
                             // field map's histogram and the sample times (unit-modulus target)
  std::size_t samples() const { return tau.empty() ? 0 : a.size() / tau.size(); }
};

// L segments evenly spaced over [min t, max t] and least-squares interpolators
// for the field map's histogram (Fessler et al. 2005, eq. 11).
TimeSegments time_segments(const FieldData& f, int segments);

// The rule for the default L: the smallest L whose interpolators' RMS error
// (TimeSegments::rms_error) is at most kSegmentTolerance, at most kMaxSegments.
constexpr double kSegmentTolerance = 2e-3;
constexpr int kMaxSegments = 32;
int choose_segments(const FieldData& f);

// The exact model's normal operator A^H W A + lambda R^H R (W = |Phi|^2, or 1).
class FieldExactNormal : public NormalOperator {
 public:
  FieldExactNormal(Plan& plan, const FieldData& f, double lambda);
  void apply(const BackendVector& x, BackendVector& y) override;

 private:
  Plan& plan_;
  const FieldData& f_;
  std::vector<float> w_;
  double lambda_;
  VecPtr t_, grad_;
};

// A^H conj(Phi) d, exactly.
std::vector<cfloat> field_exact_adjoint(Plan& plan, const FieldData& f, const std::vector<cfloat>& data);

// The time-segmented normal operator; its L(L+1)/2 kernels are made once, at
// construction (each off-diagonal pair from two real-weighted Q's).
class SegmentedNormal : public NormalOperator {
 public:
  SegmentedNormal(Plan& plan, const FieldData& f, const TimeSegments& seg, double lambda);
  void apply(const BackendVector& x, BackendVector& y) override;
  int q_computed() const { return q_computed_; }

 private:
  Plan& plan_;
  std::size_t segments_;
  double lambda_;
  std::vector<VecPtr> e_;                            // e_l on the grid, where the backend computes
  std::vector<std::unique_ptr<NormalOperator>> t_;   // T_{ll'} at [l * L + l']
  std::vector<VecPtr> z_;                            // e_l' . x
  VecPtr tmp_, acc_, grad_;
  int q_computed_ = 0;
};

// sum_l conj(e_l) . FhD(conj(a_l) . d): the segmented model's A^H d.
std::vector<cfloat> segmented_adjoint(Plan& plan, const FieldData& f, const TimeSegments& seg,
                                      const std::vector<cfloat>& data);
// sum_l a_l . F(e_l . x): its forward model (for tests).
std::vector<cfloat> segmented_forward(Plan& plan, const FieldData& f, const TimeSegments& seg,
                                      const std::vector<cfloat>& image);

// e_l = exp(-i 2 pi f_n tau) per voxel.
std::vector<cfloat> field_phase(const std::vector<float>& hz, double tau);

// InputError unless the map numbers the voxels, the times the samples, and
// the vector given (`what`) has `want` values: every backend's field entry
// points check this (the values themselves: check_field, once per solve).
void check_field_sizes(std::size_t samples, const FieldData& f, const ImageGrid& grid, std::size_t given,
                       std::size_t want, const char* what);

// The exact model on the host (Backend::field_forward / field_adjoint's
// defaults): samples grouped by time, each group a separable direct sum.
std::vector<cfloat> field_forward_host(const Trajectory& k, const FieldData& f, const std::vector<cfloat>& image,
                                       const ImageGrid& grid);
std::vector<cfloat> field_adjoint_host(const Trajectory& k, const FieldData& f, const std::vector<cfloat>& data,
                                       const ImageGrid& grid);

}  // namespace fhd
