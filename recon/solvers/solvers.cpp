#include "recon/solvers/solvers.hpp"

#include <cmath>
#include <stdexcept>

namespace fhd {

double max_eigenvalue(LinOp& op, int iters) {
  Device& dev = op.device();
  std::vector<cfloat> start(op.in().size());
  for (std::size_t i = 0; i < start.size(); ++i) start[i] = cfloat(1.0f + 0.37f * float(i % 7), 0.21f * float(i % 5));
  VecPtr x = dev.upload(start), y = dev.zeros(start.size());
  double lambda = 0;
  for (int k = 0; k < iters; ++k) {
    const double norm = std::sqrt(dev.dot(*x, *x).real());
    if (!(norm > 0)) return 0.0;
    dev.scale(1.0 / norm, *x);
    op.apply(*x, *y);
    lambda = dev.dot(*x, *y).real();
    std::swap(x, y);
  }
  return lambda;
}

AdmmResult admm(const OpPtr& normal, const DeviceVector& rhs, const std::vector<Term>& terms, DeviceVector& x,
                const AdmmOptions& opt) {
  if (!(opt.rho > 0.0)) throw std::invalid_argument("admm: rho must be positive");
  Device& v = normal->device();
  std::vector<OpPtr> parts{normal};
  for (const Term& t : terms) parts.push_back(scale(opt.rho, t.g->normal()));
  const OpPtr x_step = sum(parts);
  std::vector<VecPtr> z, u, g;
  for (const Term& t : terms) {
    z.push_back(v.zeros(t.g->out().size()));
    u.push_back(v.zeros(t.g->out().size()));
    g.push_back(v.zeros(t.g->out().size()));
    t.g->apply(x, *z.back());  // z = G x0, u = 0: the start is feasible
  }
  VecPtr b = v.zeros(rhs.size()), ghw = v.zeros(rhs.size());
  CgOptions cg;
  cg.iters = opt.inner;
  cg.precond = opt.precond;
  AdmmResult res;
  for (int it = 1; it <= opt.outer; ++it) {
    v.copy(rhs, *b);  // b = rhs + rho sum G^H (z - u); g is scratch for z - u here
    for (std::size_t i = 0; i < terms.size(); ++i) {
      v.copy(*z[i], *g[i]);
      v.axpy(-1.0, *u[i], *g[i]);
      terms[i].g->adjoint(*g[i], *ghw);
      v.axpy(opt.rho, *ghw, *b);
    }
    res.cg_iters += conjugate_gradient(*x_step, *b, x, cg).iters;
    for (std::size_t i = 0; i < terms.size(); ++i) {
      terms[i].g->apply(x, *g[i]);
      v.axpy(1.0, *u[i], *g[i]);  // g = G x + u
      terms[i].prox->apply(terms[i].lambda / opt.rho, *g[i], *z[i]);
      v.copy(*g[i], *u[i]);
      v.axpy(-1.0, *z[i], *u[i]);  // u = G x + u - z
    }
    res.outer = it;
    if (opt.hooks.on_iter) opt.hooks.on_iter(it);
    if (opt.hooks.on_iterate) opt.hooks.on_iterate(it, x);
  }
  return res;
}

int fista(const OpPtr& normal, const DeviceVector& rhs, Prox& prox, double lambda, DeviceVector& x,
          const FistaOptions& opt) {
  Device& v = normal->device();
  const double L = opt.lipschitz > 0 ? opt.lipschitz : 1.01 * max_eigenvalue(*normal, opt.power_iters);
  if (!(L > 0)) throw std::invalid_argument("fista: the normal operator is zero");
  VecPtr z = v.clone(x), prev = v.clone(x), grad = v.zeros(x.size());
  double s = 1.0;
  for (int it = 1; it <= opt.iters; ++it) {
    normal->apply(*z, *grad);
    v.axpy(-1.0, rhs, *grad);        // grad = N z - rhs
    v.copy(*z, x);
    v.axpy(-1.0 / L, *grad, x);      // x = z - grad / L
    prox.apply(lambda / L, x, x);
    const double s_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * s * s)), w = (s - 1.0) / s_next;
    v.copy(*prev, *z);
    v.axpby(1.0 + w, x, -w, *z);     // z = x + w (x - prev)
    v.copy(x, *prev);
    s = s_next;
    if (opt.hooks.on_iter) opt.hooks.on_iter(it);
    if (opt.hooks.on_iterate) opt.hooks.on_iterate(it, x);
  }
  return opt.iters;
}

namespace {

// K^H K = sum_i G_i^H G_i.
double stacked_norm2(const std::vector<Term>& terms, int iters) {
  std::vector<OpPtr> parts;
  for (const Term& t : terms) parts.push_back(t.g->normal());
  return max_eigenvalue(*sum(parts), iters);
}

}  // namespace

int pdhg(const std::vector<Term>& terms, DeviceVector& x, const PdhgOptions& opt) {
  if (terms.empty()) throw std::invalid_argument("pdhg: no terms");
  Device& v = terms[0].g->device();
  const double k2 = opt.norm2 > 0 ? opt.norm2 : 1.01 * stacked_norm2(terms, opt.power_iters);
  if (!(k2 > 0)) throw std::invalid_argument("pdhg: the operators are zero");
  const double tau = 1.0 / std::sqrt(k2), sigma = 1.0 / std::sqrt(k2);
  std::vector<VecPtr> p, q;
  for (const Term& t : terms) {
    p.push_back(v.zeros(t.g->out().size()));
    q.push_back(v.zeros(t.g->out().size()));
  }
  VecPtr xbar = v.clone(x), prev = v.zeros(x.size()), ktp = v.zeros(x.size());
  for (int it = 1; it <= opt.iters; ++it) {
    for (std::size_t i = 0; i < terms.size(); ++i) {
      // p_i <- prox_{sigma (lambda f)^*}(p_i + sigma G_i xbar)
      //      = w - sigma prox_{(lambda / sigma) f}(w / sigma),  w = p_i + sigma G_i xbar.
      terms[i].g->apply(*xbar, *q[i]);
      v.axpby(1.0, *p[i], sigma, *q[i]);
      v.copy(*q[i], *p[i]);
      v.scale(1.0 / sigma, *q[i]);
      terms[i].prox->apply(terms[i].lambda / sigma, *q[i], *q[i]);
      v.axpy(-sigma, *q[i], *p[i]);
    }
    v.copy(x, *prev);
    for (std::size_t i = 0; i < terms.size(); ++i) {  // x <- x - tau sum G_i^H p_i
      terms[i].g->adjoint(*p[i], *ktp);
      v.axpy(-tau, *ktp, x);
    }
    v.copy(*prev, *xbar);
    v.axpby(2.0, x, -1.0, *xbar);  // xbar = 2 x - prev
    if (opt.hooks.on_iter) opt.hooks.on_iter(it);
    if (opt.hooks.on_iterate) opt.hooks.on_iterate(it, x);
  }
  return opt.iters;
}

}  // namespace fhd
