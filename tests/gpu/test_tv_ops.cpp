// The GPU circulant preconditioner, finite differences and TV's shrinkage
// against the host references (recon/plan/precond.cpp, recon/ops/diff.cpp),
// and TV by ADMM against the CPU device.
#include <cmath>

#include "catch.hpp"
#include "cuda/plan/precond.hpp"
#include "recon/ops/diff.hpp"
#include "recon/plan/plan.hpp"
#include "recon/plan/precond.hpp"
#include "recon/solvers/prox.hpp"
#include "recon/solvers/solvers.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

namespace {

// ADMM's z and u steps for TV on the host, in double: per voxel, v = g + u over
// the `parts` difference images of n values, z = v max(0, 1 - t / |v|), u = v - z.
void shrink_reference(const std::vector<cfloat>& g, const std::vector<cfloat>& u0, std::size_t n, int parts, double t,
                      std::vector<cdouble>& z, std::vector<cdouble>& u) {
  z.assign(g.size(), 0.0);
  u.assign(g.size(), 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double norm2 = 0;
    for (int k = 0; k < parts; ++k) norm2 += std::norm(cdouble(g[k * n + i]) + cdouble(u0[k * n + i]));
    const double norm = std::sqrt(norm2), keep = norm > t ? 1.0 - t / norm : 0.0;
    for (int k = 0; k < parts; ++k) {
      const cdouble v = cdouble(g[k * n + i]) + cdouble(u0[k * n + i]);
      z[k * n + i] = keep * v;
      u[k * n + i] = v - z[k * n + i];
    }
  }
}

}  // namespace

TEST_CASE("gpu circulant, gradient, adjoint, laplacian and shrink equal the host references", "[gpu][tv]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_device();
  for (const ImageGrid& g : {ImageGrid{17, 12, 1}, ImageGrid{9, 8, 7}}) {
    INFO(grid_name(g));
    const int parts = gradient_axes(g);
    const std::size_t n = g.voxels(), ng = n * std::size_t(parts);
    const std::vector<cfloat> x = random_complex(n, 1), h = random_complex(ng, 2), u0 = random_complex(ng, 3);
    std::vector<float> eig(n);
    for (std::size_t i = 0; i < n; ++i) eig[i] = 0.5f + float(i % 7);
    std::vector<cfloat> want(n);
    HostCirculant(eig, g).apply(x.data(), want.data());
    CHECK(rel_l2(gpu::make_circulant_operator(*gpu, eig, g)->apply(x), want) < 1e-5);

    std::vector<cfloat> gw(ng), aw(n);
    gradient_host(x.data(), gw.data(), g);
    gradient_adjoint_host(h.data(), aw.data(), g);
    DiffKernels& diff = gpu->kernels<DiffKernels>();
    VecPtr xv = gpu->upload(x), gv = gpu->zeros(ng), hv = gpu->upload(h), av = gpu->zeros(n);
    diff.gradient(*xv, *gv, g);
    diff.gradient_adjoint(*hv, *av, g);
    CHECK(rel_l2(gpu->download(*gv), gw) < 1e-6);
    CHECK(rel_l2(gpu->download(*av), aw) < 1e-6);

    // y += a D^H D x in one pass (the l2 regularizer's term), onto a non-zero y.
    std::vector<cfloat> lw = random_complex(n, 4);
    VecPtr lv = gpu->upload(lw);
    laplacian_add_host(x.data(), lw.data(), 0.7, g);
    diff.laplacian_add(*xv, *lv, 0.7, g);
    CHECK(rel_l2(gpu->download(*lv), lw) < 1e-6);

    // The shrink: v = g + u, z = prox of the group l1 norm (the voxel's axes
    // together), u = v - z; here g = h.
    std::vector<cdouble> zw, uw;
    shrink_reference(h, u0, n, parts, 1.7, zw, uw);
    VecPtr vv = gpu->upload(h), zv = gpu->zeros(ng), uv = gpu->zeros(ng);
    gpu->axpy(1.0, *gpu->upload(u0), *vv);
    group_l1_prox(*gpu, n, parts)->apply(1.7, *vv, *zv);
    gpu->copy(*vv, *uv);
    gpu->axpy(-1.0, *zv, *uv);
    CHECK(rel_l2(gpu->download(*zv), zw) < 1e-6);
    CHECK(rel_l2(gpu->download(*uv), uw) < 1e-6);
  }
}

TEST_CASE("gpu TV by ADMM equals the CPU device's", "[gpu][tv]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_device();
  auto cpu = make_cpu_device();
  const ImageGrid g{24, 20, 1};
  const Trajectory t = random_trajectory(2 * g.voxels(), g, 5);
  const std::vector<cfloat> d = random_complex(t.size(), 6);
  std::vector<std::vector<cfloat>> out;
  for (Device* be : {cpu.get(), gpu.get()}) {
    auto plan = Plan::make(*be, t, g, {});
    const double q0 = plan->q0();
    VecPtr bv = be->upload(plan->fhd(d)), x = be->zeros(g.voxels());
    // min 1/2 |F x - d|^2 + lambda TV(x): the x-step T + rho D^H D, preconditioned
    // by the plan's circulant for rho, 5 CG steps per iteration.
    AdmmOptions opt;
    opt.rho = 0.1 * q0;
    opt.outer = 20;
    opt.inner = 5;
    const OpPtr m = plan->preconditioner(opt.rho);
    opt.precond = m.get();
    const Term tv{finite_differences(*be, g), group_l1_prox(*be, g.voxels(), gradient_axes(g)), 0.05 * q0};
    CHECK(admm(plan->toeplitz(), *bv, {tv}, *x, opt).outer == 20);
    out.push_back(be->download(*x));
  }
  CHECK(rel_l2(out[1], out[0]) < 1e-3);
}

TEST_CASE("gpu preconditioner made on the device equals the host one", "[gpu][precond]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_device();
  auto cpu = make_cpu_device();
  for (const ImageGrid& g : {ImageGrid{24, 20, 1}, ImageGrid{12, 10, 8}}) {
    const Trajectory t = random_trajectory(3 * g.voxels(), g, 7);
    auto pts = gpu->upload_points(t);
    const std::vector<cfloat> q = gather_q(*gpu, *pts, {}, g, {});
    const double lambda = 0.05 * double(t.size());
    const OpPtr host = cpu->kernels<ToeplitzKernels>().preconditioner(*cpu->upload(q), g, lambda);
    const OpPtr dev = gpu->kernels<ToeplitzKernels>().preconditioner(*gpu->upload(q), g, lambda);
    const std::vector<cfloat> x = random_complex(g.voxels(), 8);
    INFO(grid_name(g));
    CHECK(rel_l2(dev->apply(x), host->apply(x)) < 1e-5);
  }
}

TEST_CASE("gpu Q kept on the device gives the host Q's normal operator", "[gpu][precond]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_device();
  const ImageGrid g{12, 10, 8};
  const Trajectory t = random_trajectory(2 * g.voxels(), g, 9);
  auto pts = gpu->upload_points(t);
  // Q computed twice (the gather's fixed order: the same bits), once kept on
  // the device and once brought to the host and uploaded again.
  VecPtr qd = gpu->kernels<GatherKernels>().q(*pts, {}, g, {});
  const std::vector<cfloat> qh = gather_q(*gpu, *pts, {}, g, {});
  CHECK(rel_l2(gpu->download(*qd), qh) == 0.0);
  const OpPtr a = sum({gpu->kernels<ToeplitzKernels>().normal(*qd, g), scale(3.0, laplacian(*gpu, g))});
  const OpPtr b = normal_of(*gpu, qh, g, 3.0);
  const std::vector<cfloat> x = random_complex(g.voxels(), 10);
  CHECK(rel_l2(a->apply(x), b->apply(x)) == 0.0);
}
