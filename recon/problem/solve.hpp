#pragma once
// The solver chosen from the problem (docs/architecture.md, like SigPy's
// LinearLeastSquares): l2 is quadratic, so CG on A^H A + lambda D^H D,
// preconditioned by the plan's circulant where that models A^H A; a sparse
// prior (tv, ...: recon/solvers/regularizer.hpp) is not, so ADMM over its
// (operator, prox), started from a few CG steps on the unregularized problem
// whose image sets lambda's scale. The
// solver runs as the iterative method's stage; lambda's choice ("lambda
// (auto)") is a stage before it.
#include <cstddef>

#include "recon/problem/problem.hpp"

namespace fhd {

// CG steps before ADMM: their image is ADMM's start and scale.
constexpr int kAdmmStartIters = 10;

// Runs the solver and adds the iterative method to res, with lambda, the CG
// record and, when the reference is known, PSNR per iteration; its stages are
// timed by `clock` (the caller sets the method's time once the clock resolves).
void solve(Plan& plan, Problem& p, const ReconOptions& opt, ReconResult& res, StageClock& clock);

}  // namespace fhd
