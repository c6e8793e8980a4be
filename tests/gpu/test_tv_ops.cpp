// The GPU circulant preconditioner and TV kernels against the host references
// (recon/plan/precond.cpp, recon/solvers/tv.cpp), and TV/PCG end to end against the CPU backend.
#include "catch.hpp"
#include "recon/solvers/cg.hpp"
#include "recon/plan/precond.hpp"
#include "recon/solvers/tv.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

TEST_CASE("gpu circulant, gradient, adjoint and shrink equal the host references", "[gpu][tv]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_backend();
  for (const ImageGrid& g : {ImageGrid{17, 12, 1}, ImageGrid{9, 8, 7}}) {
    INFO(grid_name(g));
    const std::size_t n = g.voxels(), ng = n * std::size_t(gradient_axes(g));
    const std::vector<cfloat> x = random_complex(n, 1), h = random_complex(ng, 2), u0 = random_complex(ng, 3);
    std::vector<float> eig(n);
    for (std::size_t i = 0; i < n; ++i) eig[i] = 0.5f + float(i % 7);
    std::vector<cfloat> want(n);
    HostCirculant(eig, g).apply(x.data(), want.data());
    VecPtr xv = gpu->vec().upload(x), yv = gpu->vec().zeros(n);
    gpu->circulant(eig, g)->apply(*xv, *yv);
    CHECK(rel_l2(gpu->vec().download(*yv), want) < 1e-5);

    std::vector<cfloat> gw(ng), aw(n);
    gradient_host(x.data(), gw.data(), g);
    gradient_adjoint_host(h.data(), aw.data(), g);
    VecPtr gv = gpu->vec().zeros(ng), hv = gpu->vec().upload(h), av = gpu->vec().zeros(n);
    gpu->gradient(*xv, *gv, g);
    gpu->gradient_adjoint(*hv, *av, g);
    CHECK(rel_l2(gpu->vec().download(*gv), gw) < 1e-6);
    CHECK(rel_l2(gpu->vec().download(*av), aw) < 1e-6);

    std::vector<cfloat> zw(ng), uw = u0;
    tv_shrink_host(h.data(), zw.data(), uw.data(), g, 1.7);
    VecPtr zv = gpu->vec().zeros(ng), uv = gpu->vec().upload(u0);
    gpu->tv_shrink(*hv, *zv, *uv, g, 1.7);
    CHECK(rel_l2(gpu->vec().download(*zv), zw) < 1e-6);
    CHECK(rel_l2(gpu->vec().download(*uv), uw) < 1e-6);
  }
}

TEST_CASE("gpu TV by ADMM equals the CPU backend's", "[gpu][tv]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_backend();
  auto cpu = make_cpu_device();
  const ImageGrid g{24, 20, 1};
  const Trajectory t = random_trajectory(2 * g.voxels(), g, 5);
  const std::vector<cfloat> d = random_complex(t.size(), 6);
  std::vector<std::vector<cfloat>> out;
  for (Backend* be : {cpu.get(), gpu.get()}) {
    Plan plan(*be, t, g, {});
    const double q0 = plan.q0();
    VecPtr bv = be->vec().upload(plan.fhd(d)), x = be->vec().zeros(g.voxels());
    TvOptions opt;
    opt.lambda = 0.05 * q0;
    opt.rho = 0.1 * q0;
    opt.outer = 20;
    admm_tv(plan, *bv, *x, opt);
    out.push_back(be->vec().download(*x));
  }
  CHECK(rel_l2(out[1], out[0]) < 1e-3);
}

TEST_CASE("gpu preconditioner made on the device equals the host one", "[gpu][precond]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_backend();
  auto cpu = make_cpu_device();
  for (const ImageGrid& g : {ImageGrid{24, 20, 1}, ImageGrid{12, 10, 8}}) {
    const Trajectory t = random_trajectory(3 * g.voxels(), g, 7);
    auto pts = gpu->upload_points(t);
    const std::vector<cfloat> q = gpu->q(*pts, {}, g, {});
    const double lambda = 0.05 * double(t.size());
    auto host = make_preconditioner(*cpu, q, g, lambda);
    auto dev = gpu->preconditioner_resident(*gpu->vec().upload(q), g, lambda);
    const std::vector<cfloat> x = random_complex(g.voxels(), 8);
    VecPtr xc = cpu->vec().upload(x), yc = cpu->vec().zeros(x.size());
    VecPtr xg = gpu->vec().upload(x), yg = gpu->vec().zeros(x.size());
    host->apply(*xc, *yc);
    dev->apply(*xg, *yg);
    INFO(grid_name(g));
    CHECK(rel_l2(gpu->vec().download(*yg), cpu->vec().download(*yc)) < 1e-5);
  }
}

TEST_CASE("gpu Q kept on the device gives the host Q's normal operator", "[gpu][precond]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_backend();
  const ImageGrid g{12, 10, 8};
  const Trajectory t = random_trajectory(2 * g.voxels(), g, 9);
  auto pts = gpu->upload_points(t);
  VecPtr qd = gpu->q_resident(*pts, {}, g, {});
  const std::vector<cfloat> qh = gpu->q(*pts, {}, g, {});
  CHECK(rel_l2(gpu->vec().download(*qd), qh) == 0.0);
  auto a = gpu->normal_resident(*qd, g, 3.0), b = gpu->normal(qh, g, 3.0);
  VecPtr x = gpu->vec().upload(random_complex(g.voxels(), 10)), ya = gpu->vec().zeros(g.voxels()),
         yb = gpu->vec().zeros(g.voxels());
  a->apply(*x, *ya);
  b->apply(*x, *yb);
  CHECK(rel_l2(gpu->vec().download(*ya), gpu->vec().download(*yb)) == 0.0);
}
