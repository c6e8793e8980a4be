#pragma once
// Total variation (isotropic, first differences) by ADMM with the Toeplitz
// normal operator as the inner solve (docs/accuracy.md, "Total variation"):
//   min_x 1/2 ||F x - d||^2 + lambda sum_voxels |(D x)_voxel|_2
// with D the forward differences along every axis of length > 1 (0 at the far
// end, so D^H D is the R^H R of the l2 penalty). Scaled ADMM, z = D x:
//   x <- (FhF + rho D^H D)^-1 (FhD + rho D^H (z - u))   (preconditioned CG, warm start)
//   z <- shrink(D x + u, lambda / rho),  u <- u + D x - z
// The host functions below are the reference the backends' kernels follow.
#include <functional>
#include <vector>

#include "recon/device/device.hpp"
#include "recon/solvers/cg.hpp"
#include "recon/plan/plan.hpp"

namespace fhd {

// Axes of length > 1: the number of difference images in D x.
int gradient_axes(const ImageGrid& grid);

// Length and stride of each axis of length > 1, in x, y, z order (plain data:
// the GPU kernels take it by value).
struct GradientAxes {
  int count = 0;
  int len[3] = {1, 1, 1};
  long long stride[3] = {1, 1, 1};
};
GradientAxes gradient_axes_of(const ImageGrid& g);

// g (gradient_axes * voxels, one image per axis in x, y, z order) = D x.
void gradient_host(const cfloat* x, cfloat* g, const ImageGrid& grid);
// x = D^H g.
void gradient_adjoint_host(const cfloat* g, cfloat* x, const ImageGrid& grid);
// Per voxel, v = g + u over the axes; z = v * max(0, 1 - t / |v|); u = v - z.
void tv_shrink_host(const cfloat* g, cfloat* z, cfloat* u, const ImageGrid& grid, double t);

// TV's default lambda, relative to Q(0) times the image scale (the 99th
// percentile of |x| of the start): right for noiseless data, and the floor of
// the noise rule below.
constexpr double kTvLambda = 0.03;
// The noise rule (docs/accuracy.md, "TV's lambda from the noise"): TV's weight
// grows with the noise's standard deviation in the least-squares image,
// sqrt(sigma^2 / Q(0)) (FhF ~ Q(0) I), relative to the image scale.
constexpr double kTvNoiseFactor = 0.6;
// sqrt(noise_variance / q0) / scale: the noise-to-signal ratio the rule uses.
double tv_noise_ratio(double noise_variance, double q0, double scale);
// max(kTvLambda, kTvNoiseFactor * tv_noise_ratio(...)).
double tv_noise_lambda(double noise_variance, double q0, double scale);

struct TvOptions {
  double lambda = 0.0;  // absolute TV weight
  double rho = 0.0;     // absolute ADMM penalty (> 0)
  int outer = 30;       // ADMM iterations
  int inner = 5;        // CG iterations per x-update
  bool precondition = true;
  std::function<void(int iter, const BackendVector& x)> on_iterate;  // after each ADMM iteration
  std::function<void(int iter)> on_iter;                              // progress
};

struct TvResult {
  int outer = 0;        // ADMM iterations done
  int cg_iters = 0;     // CG iterations in all
};

// x holds the start (e.g. the l2 solution, or zeros) and the result. The
// solver runs against its operators: `normal` = FhF + rho D^H D, `precond`
// its preconditioner or nullptr (opt.precondition is not read here).
TvResult admm_tv(Backend& be, NormalOperator& normal, NormalOperator* precond, const ImageGrid& grid,
                 const BackendVector& fhd, BackendVector& x, const TvOptions& opt);
// The same with the plan's operators for rho (made once, kept by the plan).
TvResult admm_tv(Plan& plan, const BackendVector& fhd, BackendVector& x, const TvOptions& opt);

}  // namespace fhd
