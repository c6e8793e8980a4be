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
};

// x holds the start on entry (zeros for the usual start) and the solution on return.
// The residual is the recursively updated one (no extra operator apply).
CgResult conjugate_gradient(LinOp& op, const DeviceVector& rhs, DeviceVector& x, const CgOptions& opt);

}  // namespace fhd
