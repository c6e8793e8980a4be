#pragma once
// Conjugate gradients on A x = rhs for a Hermitian positive (semi)definite
// operator A (a normal operator plus regularizers: T + lambda D^H D, SENSE's
// sum over coils, ADMM's x-step), written once against the Device and LinOp,
// so every device and every problem shares it. Only scalars (dot products)
// cross to the host per iteration. With a preconditioner M (symmetric
// positive definite, recon/plan/precond.hpp) it is preconditioned CG: the same
// solution, reached in fewer iterations.
#include <functional>
#include <vector>

#include "recon/ops/linop.hpp"

namespace fhd {

struct CgOptions {
  int iters = 20;     // at most this many iterations
  double tol = 0.0;   // stop when ||rhs - A x|| / ||rhs|| <= tol (0: run all iterations)
  std::function<void(int iter, double relres)> on_iter;  // called after each iteration
  // Called after each iteration with the iterate (e.g. to score it against a phantom).
  std::function<void(int iter, const DeviceVector& x)> on_iterate;
  LinOp* precond = nullptr;  // applies M ~ A^-1; nullptr = plain CG
};

struct CgResult {
  int iters = 0;                  // iterations done
  std::vector<double> residuals;  // relative residual: [0] at the start, [i] after iteration i
  bool converged = false;         // reached tol (or rhs = 0)
  int returned = 0;               // the iteration whose iterate x holds: iters, or the best (below)
};

// x holds the start on entry (zeros for the usual start) and the solution on return.
// The residual is the recursively updated one (no extra operator apply).
// In float32, once the residual nears float32's floor (1e-6 to 1e-7) on a
// singular or nearly singular operator, p^H A p loses its digits and x runs
// off along the null space: the residual climbs by decades and the image with
// it (2D radial, 4 spokes, lambda 0, --tol 0: 15.05 dB at iteration 125,
// -42 dB at 264). So the iterate of the smallest residual is kept, and returned
// when the last residual ended kDivergedFactor times above it (`returned` says
// which). Keeping it costs a copy only when the residual turns up after a new
// minimum, not one per iteration.
constexpr double kDivergedFactor = 10.0;
CgResult conjugate_gradient(LinOp& op, const DeviceVector& rhs, DeviceVector& x, const CgOptions& opt);

}  // namespace fhd
