#pragma once
// --lambda auto: the l2 regularization weight chosen from the data
// (docs/accuracy.md, "Lambda from the data").
//
// 1. The noise variance sigma^2 = E|n_m|^2 of one sample: from the scan's
//    noise-only samples when it has them (ISMRMRD noise acquisitions, our
//    HDF5 `noise`), else from the readouts themselves. A readout sampled at
//    spacing s < 1 cycle/FOV (radial and stack-of-stars readouts at 2x
//    oversampling: s = 0.5) sees a field of 1/s FOV; its DFT is the object's
//    projection, and beyond |x| = 0.6 FOV only noise is left. The median of
//    |DFT(window . d)|^2 there, over many readouts, estimates sigma^2 (as
//    scanners do with readout oversampling).
// 2. lambda minimizing Stein's unbiased estimate of the image's mean squared
//    error in the circulant model of the normal equations: with t_k the
//    eigenvalues of T's circulant (recon/plan/precond.hpp), r_k those of R^H R and
//    b_k the unitary DFT of FhD = t_k X_k + E_k (Var E_k = sigma^2 t_k), the
//    solution X_k = b_k / (t_k + mu r_k) has expected error
//      sum_k [mu^2 r_k^2 |X_k|^2 + sigma^2 t_k] / (t_k + mu r_k)^2,
//    and |b_k|^2 - sigma^2 t_k estimates t_k^2 |X_k|^2 without bias.
#include <optional>
#include <string>
#include <vector>

#include "core/trajectory.hpp"
#include "core/types.hpp"

namespace fhd {

struct NoiseEstimate {
  double variance = 0;  // E|n|^2 per sample, in the data's units
  std::string source;   // "noise samples" | "readout oversampling"
};

// sigma^2 from readouts of at least kMinReadout equally spaced samples at a
// spacing below kMaxReadoutSpacing; nothing when the trajectory has none.
constexpr int kMinReadout = 32;
constexpr double kMaxReadoutSpacing = 0.7;  // cycles/FOV: the field must reach past 0.6 FOV
std::optional<double> noise_from_readouts(const Trajectory& traj, const std::vector<cfloat>& data);

// The scan's noise samples first, then its readouts.
std::optional<NoiseEstimate> estimate_noise(const Trajectory& traj, const std::vector<cfloat>& data,
                                            const std::vector<cfloat>& noise);

// The smallest lambda auto chooses, relative to Q(0) = mean(t). The risk
// model leaves out what no sample sees (k-space corners, gaps between spokes):
// there lambda is all that holds CG, and lambda = 0 diverged in single
// precision (64^3 radial, noiseless: -40 dB; 128^2: 4.5 dB after 100
// iterations). 3e-3 measured best on noiseless data in 2D and 3D
// (docs/accuracy.md, "Lambda from the data").
constexpr double kAutoLambdaFloor = 3e-3;

// The absolute lambda (mu above) minimizing the risk estimate, searched over
// [kAutoLambdaFloor, 10] times the mean of t. t: T's circulant eigenvalues
// (without lambda); fhd: the right-hand side in image space.
double sure_lambda(const std::vector<double>& t, const std::vector<cfloat>& fhd, const ImageGrid& grid,
                   double noise_variance);

// TV's (every sparse prior's) default lambda, relative to Q(0) times the image
// scale (the 99th percentile of |x| of the start): right for noiseless data,
// and the floor of the noise rule below.
constexpr double kTvLambda = 0.03;
// The noise rule (docs/accuracy.md, "TV's lambda from the noise"): TV's weight
// grows with the noise's standard deviation in the least-squares image,
// sqrt(sigma^2 / Q(0)) (FhF ~ Q(0) I), relative to the image scale.
constexpr double kTvNoiseFactor = 0.6;
// sqrt(noise_variance / q0) / scale: the noise-to-signal ratio the rule uses.
double tv_noise_ratio(double noise_variance, double q0, double scale);
// max(kTvLambda, kTvNoiseFactor * tv_noise_ratio(...)).
double tv_noise_lambda(double noise_variance, double q0, double scale);

}  // namespace fhd
