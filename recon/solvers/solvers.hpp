#pragma once
// Solvers written once over operators and the device's vector operations
// (SigPy's alg, BART's italgos), for
//   min_x 1/2 ||A x - y||^2 + sum_i lambda_i f_i(G_i x)
// given the normal operator N = A^H A (the Toeplitz one where it exists) and
// rhs = A^H y: only N and rhs reach the solvers, so a fast normal is used
// wherever the model has one. CG (recon/solvers/cg.hpp) solves the
// all-quadratic case.
#include <functional>
#include <vector>

#include "recon/ops/linop.hpp"
#include "recon/solvers/cg.hpp"
#include "recon/solvers/prox.hpp"

namespace fhd {

// lambda f(G x).
struct Term {
  OpPtr g;
  ProxPtr prox;
  double lambda = 0;
};

struct IterationHooks {
  std::function<void(int iter)> on_iter;                             // progress
  std::function<void(int iter, const DeviceVector& x)> on_iterate;  // after each iteration
};

// ADMM (scaled form, z_i = G_i x), x warm-started from x's content:
//   x <- (N + rho sum G_i^H G_i)^-1 (rhs + rho sum G_i^H (z_i - u_i))   by `inner` CG steps
//   z_i <- prox_{lambda_i / rho}(G_i x + u_i),  u_i <- u_i + G_i x - z_i
// The x-step's operator is sum({N, scale(rho, G_i->normal())...}): the
// Laplacian for TV's D, the identity for an orthonormal wavelet.
struct AdmmOptions {
  double rho = 0;       // > 0, absolute
  int outer = 30;
  int inner = 5;
  LinOp* precond = nullptr;  // for the x-step, or nullptr
  IterationHooks hooks;
};
struct AdmmResult {
  int outer = 0;
  int cg_iters = 0;
};
AdmmResult admm(const OpPtr& normal, const DeviceVector& rhs, const std::vector<Term>& terms, DeviceVector& x,
                const AdmmOptions& opt);

// FISTA (Beck and Teboulle 2009) for one term with G = I: the gradient step
// x - (N x - rhs) / L, then the prox of (lambda / L) f; L from `power_iters`
// power iterations on N (times 1.01), or given.
struct FistaOptions {
  int iters = 50;
  double lipschitz = 0;  // 0: estimated
  int power_iters = 30;
  IterationHooks hooks;
};
int fista(const OpPtr& normal, const DeviceVector& rhs, Prox& prox, double lambda, DeviceVector& x,
          const FistaOptions& opt);

// The primal-dual method of Chambolle and Pock (2011) for
//   min_x sum_i lambda_i f_i(G_i x)
// (the data term is one of the terms: G = A, f = 1/2 ||. - y||^2, lambda 1),
// dual steps by Moreau's identity; sigma tau ||K||^2 < 1 with K = [G_i].
struct PdhgOptions {
  int iters = 100;
  double norm2 = 0;  // ||K||^2; 0: estimated by power iterations
  int power_iters = 30;
  IterationHooks hooks;
};
int pdhg(const std::vector<Term>& terms, DeviceVector& x, const PdhgOptions& opt);

// The largest eigenvalue of a Hermitian positive semidefinite operator, by
// `iters` power iterations from a fixed start.
double max_eigenvalue(LinOp& op, int iters);

}  // namespace fhd
