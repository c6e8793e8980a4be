#include "recon/solvers/cg.hpp"

#include <cmath>

namespace fhd {
namespace {

// The iterate of the smallest residual so far. While the newest iterate is it,
// nothing is copied; when the residual first turns up after a minimum, the
// previous iterate (x - alpha p: p is still the step just taken) is saved.
class BestIterate {
 public:
  BestIterate(Device& vec, double start) : vec_(vec), min_(start) {}
  // After iteration `iter` moved x by alpha p to residual `res`.
  void update(int iter, double res, const DeviceVector& x, double alpha, const DeviceVector& p) {
    if (res < min_) {
      min_ = res;
      iter_ = iter;
      in_x_ = true;
    } else if (in_x_) {
      if (!saved_) saved_ = vec_.zeros(x.size());
      vec_.copy(x, *saved_);
      vec_.axpy(-alpha, p, *saved_);
      in_x_ = false;
    }
  }
  // Puts the best iterate back into x when the last residual is far above it;
  // returns the iteration x then holds.
  int restore_if_diverged(double last, int iters, DeviceVector& x) {
    if (in_x_ || !(last > kDivergedFactor * min_) || !saved_) return iters;
    vec_.copy(*saved_, x);
    return iter_;
  }

 private:
  Device& vec_;
  double min_;
  int iter_ = 0;
  bool in_x_ = true;
  VecPtr saved_;
};

}  // namespace

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
  BestIterate best(vec, result.residuals.back());
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
    best.update(result.iters, result.residuals.back(), x, alpha, *p);
    if (opt.on_iter) opt.on_iter(result.iters, result.residuals.back());
    if (opt.on_iterate) opt.on_iterate(result.iters, x);
    result.converged = result.residuals.back() <= opt.tol;
    vec.xpay(zr, rz_next / rz, *p);
    rz = rz_next;
  }
  result.returned = best.restore_if_diverged(result.residuals.back(), result.iters, x);
  return result;
}

}  // namespace fhd
