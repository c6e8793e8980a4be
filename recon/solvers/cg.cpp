#include "recon/solvers/cg.hpp"

#include <cmath>

namespace fhd {

CgResult conjugate_gradient(LinOp& op, const DeviceVector& rhs, DeviceVector& x, const CgOptions& opt) {
  Device& vec = op.device();
  CgResult result;
  const double rhs_norm = std::sqrt(vec.dot(rhs, rhs).real());
  if (rhs_norm == 0.0) {  // the solution is 0 whatever the start
    vec.axpy(-1.0, x, x);
    result.residuals.push_back(0.0);
    result.converged = true;
    return result;
  }
  VecPtr r = vec.zeros(x.size()), p = vec.zeros(x.size()), ap = vec.zeros(x.size());
  VecPtr z = opt.precond ? vec.zeros(x.size()) : nullptr;
  DeviceVector& zr = z ? *z : *r;  // the preconditioned residual (r itself without M)
  vec.copy(rhs, *r);
  if (vec.dot(x, x).real() != 0.0) {  // r = rhs - A x only for a non-zero start
    op.apply(x, *ap);
    vec.axpy(-1.0, *ap, *r);
  }
  if (z) opt.precond->apply(*r, *z);
  vec.copy(zr, *p);
  double rr = vec.dot(*r, *r).real();
  double rz = z ? vec.dot(*r, *z).real() : rr;
  result.residuals.push_back(std::sqrt(rr) / rhs_norm);
  result.converged = result.residuals.back() <= opt.tol;
  while (!result.converged && result.iters < opt.iters) {
    op.apply(*p, *ap);
    const double pap = vec.dot(*p, *ap).real();  // real: the operator is Hermitian
    if (!(pap > 0.0) || !(rz > 0.0)) break;           // breakdown (p in the null space) or NaN
    const double alpha = rz / pap;
    vec.axpy(alpha, *p, x);
    vec.axpy(-alpha, *ap, *r);
    double rz_next;
    if (z) {  // z = M r first, so r.r and r.z come back together (one wait on a GPU)
      opt.precond->apply(*r, *z);
      const auto [r_r, r_z] = vec.dot2(*r, *r, *r, *z);
      rr = r_r.real();
      rz_next = r_z.real();
    } else {
      rr = rz_next = vec.dot(*r, *r).real();
    }
    ++result.iters;
    result.residuals.push_back(std::sqrt(rr) / rhs_norm);
    if (opt.on_iter) opt.on_iter(result.iters, result.residuals.back());
    if (opt.on_iterate) opt.on_iterate(result.iters, x);
    result.converged = result.residuals.back() <= opt.tol;
    vec.xpay(zr, rz_next / rz, *p);
    rz = rz_next;
  }
  return result;
}

}  // namespace fhd
