#include "recon/cg.hpp"

#include <cmath>

namespace fhd {

CgResult conjugate_gradient(Backend& backend, NormalOperator& op, const BackendVector& rhs, BackendVector& x,
                            const CgOptions& opt) {
  CgResult result;
  const double rhs_norm = std::sqrt(backend.dot(rhs, rhs).real());
  if (rhs_norm == 0.0) {  // the solution is 0 whatever the start
    backend.axpy(-1.0, x, x);
    result.residuals.push_back(0.0);
    result.converged = true;
    return result;
  }
  VecPtr r = backend.zeros(x.size()), p = backend.zeros(x.size()), ap = backend.zeros(x.size());
  backend.copy(rhs, *r);
  if (backend.dot(x, x).real() != 0.0) {  // r = rhs - A x only for a non-zero start
    op.apply(x, *ap);
    backend.axpy(-1.0, *ap, *r);
  }
  backend.copy(*r, *p);
  double rr = backend.dot(*r, *r).real();
  result.residuals.push_back(std::sqrt(rr) / rhs_norm);
  result.converged = result.residuals.back() <= opt.tol;
  while (!result.converged && result.iters < opt.iters) {
    op.apply(*p, *ap);
    const double pap = backend.dot(*p, *ap).real();  // real: the operator is Hermitian
    if (!(pap > 0.0)) break;                          // breakdown (p in the null space) or NaN
    const double alpha = rr / pap;
    backend.axpy(alpha, *p, x);
    backend.axpy(-alpha, *ap, *r);
    const double rr_next = backend.dot(*r, *r).real();
    ++result.iters;
    result.residuals.push_back(std::sqrt(rr_next) / rhs_norm);
    if (opt.on_iter) opt.on_iter(result.iters, result.residuals.back());
    if (opt.on_iterate) opt.on_iterate(result.iters, x);
    result.converged = result.residuals.back() <= opt.tol;
    backend.xpay(*r, rr_next / rr, *p);
    rr = rr_next;
  }
  return result;
}

}  // namespace fhd
