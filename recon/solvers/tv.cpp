#include "recon/solvers/tv.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "recon/plan/plan.hpp"

namespace fhd {
namespace {

// Coordinate of voxel v along an axis of length len and stride s.
inline int coord(std::ptrdiff_t v, std::ptrdiff_t s, int len) { return int((v / s) % len); }

}  // namespace

GradientAxes gradient_axes_of(const ImageGrid& g) {
  GradientAxes a;
  const int n[3] = {g.nx, g.ny, g.nz};
  const long long s[3] = {1, g.nx, (long long)g.nx * g.ny};
  for (int i = 0; i < 3; ++i)
    if (n[i] > 1) {
      a.len[a.count] = n[i];
      a.stride[a.count] = s[i];
      ++a.count;
    }
  return a;
}

double tv_noise_ratio(double noise_variance, double q0, double scale) {
  if (!(q0 > 0) || !(scale > 0) || !(noise_variance >= 0)) return 0.0;
  return std::sqrt(noise_variance / q0) / scale;
}

double tv_noise_lambda(double noise_variance, double q0, double scale) {
  return std::max(kTvLambda, kTvNoiseFactor * tv_noise_ratio(noise_variance, q0, scale));
}

int gradient_axes(const ImageGrid& grid) { return gradient_axes_of(grid).count; }

void gradient_host(const cfloat* x, cfloat* g, const ImageGrid& grid) {
  const GradientAxes a = gradient_axes_of(grid);
  const std::ptrdiff_t n = std::ptrdiff_t(grid.voxels());
  for (int k = 0; k < a.count; ++k) {
    cfloat* gk = g + k * n;
#pragma omp parallel for
    for (std::ptrdiff_t v = 0; v < n; ++v)
      gk[v] = coord(v, a.stride[k], a.len[k]) < a.len[k] - 1 ? x[v + a.stride[k]] - x[v] : cfloat(0.0f);
  }
}

void gradient_adjoint_host(const cfloat* g, cfloat* x, const ImageGrid& grid) {
  const GradientAxes a = gradient_axes_of(grid);
  const std::ptrdiff_t n = std::ptrdiff_t(grid.voxels());
#pragma omp parallel for
  for (std::ptrdiff_t v = 0; v < n; ++v) {
    cfloat s = 0.0f;
    for (int k = 0; k < a.count; ++k) {
      const cfloat* gk = g + k * n;
      const int c = coord(v, a.stride[k], a.len[k]);
      if (c < a.len[k] - 1) s -= gk[v];
      if (c > 0) s += gk[v - a.stride[k]];
    }
    x[v] = s;
  }
}

void tv_shrink_host(const cfloat* g, cfloat* z, cfloat* u, const ImageGrid& grid, double t) {
  const int d = gradient_axes(grid);
  const std::ptrdiff_t n = std::ptrdiff_t(grid.voxels());
#pragma omp parallel for
  for (std::ptrdiff_t v = 0; v < n; ++v) {
    cfloat w[3];
    double norm2 = 0.0;
    for (int k = 0; k < d; ++k) {
      w[k] = g[k * n + v] + u[k * n + v];
      norm2 += std::norm(w[k]);
    }
    const double norm = std::sqrt(norm2);
    const float keep = norm > t ? float(1.0 - t / norm) : 0.0f;
    for (int k = 0; k < d; ++k) {
      z[k * n + v] = keep * w[k];
      u[k * n + v] = w[k] - z[k * n + v];
    }
  }
}

TvResult admm_tv(Plan& plan, const BackendVector& fhd, BackendVector& x, const TvOptions& opt) {
  if (!(opt.rho > 0.0)) throw std::invalid_argument("admm_tv: rho must be positive");
  NormalOperator* precond = opt.precondition ? &plan.preconditioner(opt.rho) : nullptr;
  return admm_tv(plan.backend(), plan.normal(opt.rho), precond, plan.grid(), fhd, x, opt);
}

TvResult admm_tv(Backend& be, NormalOperator& normal, NormalOperator* precond, const ImageGrid& grid,
                 const BackendVector& fhd, BackendVector& x, const TvOptions& opt) {
  if (!(opt.rho > 0.0)) throw std::invalid_argument("admm_tv: rho must be positive");
  VectorOps& v = be.vec();
  const std::size_t nv = grid.voxels(), ng = nv * std::size_t(gradient_axes(grid));
  VecPtr g = v.zeros(ng), z = v.zeros(ng), u = v.zeros(ng), rhs = v.zeros(nv), dhw = v.zeros(nv);
  be.gradient(x, *z, grid);  // z = D x0, u = 0: the start is feasible
  CgOptions cg;
  cg.iters = opt.inner;
  cg.precond = precond;
  TvResult res;
  for (int it = 1; it <= opt.outer; ++it) {
    // rhs = FhD + rho D^H (z - u); g is scratch for z - u here.
    v.copy(*z, *g);
    v.axpy(-1.0, *u, *g);
    be.gradient_adjoint(*g, *dhw, grid);
    v.copy(fhd, *rhs);
    v.axpy(opt.rho, *dhw, *rhs);
    res.cg_iters += conjugate_gradient(v, normal, *rhs, x, cg).iters;
    be.gradient(x, *g, grid);
    be.tv_shrink(*g, *z, *u, grid, opt.lambda / opt.rho);
    res.outer = it;
    if (opt.on_iter) opt.on_iter(it);
    if (opt.on_iterate) opt.on_iterate(it, x);
  }
  return res;
}

}  // namespace fhd
