// The exact off-resonance gathers (cuda/field/field_gather.hpp) against float64
// direct sums, their adjoint identity, and their length checks.
#include <random>

#include "catch.hpp"
#include "core/error.hpp"
#include "cuda/field/field_gather.hpp"
#include "recon/field/field.hpp"
#include "recon/plan/plan.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

namespace {

constexpr double kTwoPi = 6.283185307179586;

struct FieldCase {
  ImageGrid grid;
  Trajectory traj;
  std::vector<float> times, fmap;
};

// Readout times up to 20 ms and fields up to +-150 Hz: up to 3 turns of
// off-resonance phase, the range docs/field-maps.md targets.
FieldCase make_case(const ImageGrid& g, std::size_t m, unsigned seed) {
  FieldCase c{g, random_trajectory(m, g, seed), std::vector<float>(m), std::vector<float>(g.voxels())};
  std::mt19937 rng(seed + 100);
  std::uniform_real_distribution<float> t(0.f, 0.02f), f(-150.f, 150.f);
  for (float& v : c.times) v = t(rng);
  for (float& v : c.fmap) v = f(rng);
  return c;
}

// The phase in turns of sample m at voxel n, in double.
double turns(const FieldCase& c, std::size_t m, std::size_t n) {
  const ImageGrid& g = c.grid;
  const int ix = int(n % g.nx), iy = int((n / g.nx) % g.ny), iz = int(n / (std::size_t(g.nx) * g.ny));
  return double(c.traj.kx[m]) * axis_coord(ix, g.nx, g.nx) + double(c.traj.ky[m]) * axis_coord(iy, g.ny, g.ny) +
         double(c.traj.kz[m]) * axis_coord(iz, g.nz, g.nz) + double(c.fmap[n]) * double(c.times[m]);
}

std::vector<cfloat> adjoint_f64(const FieldCase& c, const std::vector<cfloat>& d) {
  std::vector<cfloat> out(c.grid.voxels());
  for (std::size_t n = 0; n < out.size(); ++n) {
    cdouble acc = 0.0;
    for (std::size_t m = 0; m < d.size(); ++m) acc += cdouble(d[m]) * std::polar(1.0, kTwoPi * turns(c, m, n));
    out[n] = cfloat(acc);
  }
  return out;
}

std::vector<cfloat> forward_f64(const FieldCase& c, const std::vector<cfloat>& x) {
  std::vector<cfloat> out(c.traj.size());
  for (std::size_t m = 0; m < out.size(); ++m) {
    cdouble acc = 0.0;
    for (std::size_t n = 0; n < x.size(); ++n) acc += cdouble(x[n]) * std::polar(1.0, -kTwoPi * turns(c, m, n));
    out[m] = cfloat(acc);
  }
  return out;
}

cdouble dot(const std::vector<cfloat>& a, const std::vector<cfloat>& b) {
  cdouble s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::conj(cdouble(a[i])) * cdouble(b[i]);
  return s;
}

}  // namespace

TEST_CASE("gpu field gathers equal float64 direct sums and are adjoint", "[gpu][field]") {
  FHD_NEED_GPU();
  // More samples than one shared-memory tile (1024), and a 2D and a 3D grid.
  for (const ImageGrid& g : {ImageGrid{20, 16, 1}, ImageGrid{10, 9, 8}}) {
    INFO(grid_name(g));
    const FieldCase c = make_case(g, 2500, 7);
    const std::vector<cfloat> d = random_complex(c.traj.size(), 1), x = random_complex(g.voxels(), 2);
    const std::vector<cfloat> ad = gpu::field_adjoint(c.traj, c.times, d, g, c.fmap);
    const std::vector<cfloat> fx = gpu::field_forward(c.traj, c.times, x, g, c.fmap);
    CHECK(rel_l2(ad, adjoint_f64(c, d)) < 1e-5);
    CHECK(rel_l2(fx, forward_f64(c, x)) < 1e-5);
    // <F x, d> = <x, F^H d>
    const cdouble lhs = dot(fx, d), rhs = dot(x, ad);
    CHECK(std::abs(lhs - rhs) < 1e-5 * std::abs(lhs));
  }
}

TEST_CASE("gpu field gathers: the field's phase matters, zero field is the plain gather", "[gpu][field]") {
  FHD_NEED_GPU();
  const ImageGrid g{16, 16, 1};
  FieldCase c = make_case(g, 800, 3);
  const std::vector<cfloat> d = random_complex(c.traj.size(), 4);
  const std::vector<cfloat> with = gpu::field_adjoint(c.traj, c.times, d, g, c.fmap);
  std::fill(c.fmap.begin(), c.fmap.end(), 0.f);
  const std::vector<cfloat> without = gpu::field_adjoint(c.traj, c.times, d, g, c.fmap);
  CHECK(rel_l2(without, adjoint_f64(c, d)) < 1e-5);
  CHECK(rel_l2(with, without) > 0.1);  // up to 3 turns of phase: far from the plain gather
}

TEST_CASE("gpu field gathers refuse mismatched lengths", "[gpu][field]") {
  FHD_NEED_GPU();
  const ImageGrid g{8, 8, 1};
  const FieldCase c = make_case(g, 50, 5);
  const std::vector<cfloat> d = random_complex(50, 1), x = random_complex(g.voxels(), 2);
  CHECK_THROWS_AS(gpu::field_adjoint(c.traj, std::vector<float>(49), d, g, c.fmap), InputError);
  CHECK_THROWS_AS(gpu::field_adjoint(c.traj, c.times, d, g, std::vector<float>(10)), InputError);
  CHECK_THROWS_AS(gpu::field_adjoint(c.traj, c.times, random_complex(51, 1), g, c.fmap), InputError);
  CHECK_THROWS_AS(gpu::field_forward(c.traj, c.times, random_complex(63, 1), g, c.fmap), InputError);
}

TEST_CASE("gpu field model equals the CPU device's, one model per field map", "[gpu][field]") {
  FHD_NEED_GPU();
  auto gpu = make_gpu_device();
  auto cpu = make_cpu_device();
  const ImageGrid g{12, 10, 6};
  FieldCase c = make_case(g, 1500, 11);
  const FieldData f{c.fmap, c.times};
  const std::vector<cfloat> x = random_complex(g.voxels(), 1), d = random_complex(c.traj.size(), 2);
  const auto pg = gpu->upload_points(c.traj), pc = cpu->upload_points(c.traj);
  // The device's FieldKernels model, from and to host vectors.
  auto forward = [&](Device& dev, const Points& k, const FieldData& fd) {
    VecPtr xv = dev.upload(x), dv = dev.zeros(k.size());
    dev.kernels<FieldKernels>().model(k, fd, g)->forward(*xv, *dv);
    return dev.download(*dv);
  };
  auto adjoint = [&](Device& dev, const Points& k, const FieldData& fd) {
    VecPtr dv = dev.upload(d), xv = dev.zeros(g.voxels());
    dev.kernels<FieldKernels>().model(k, fd, g)->adjoint(*dv, *xv);
    return dev.download(*xv);
  };
  CHECK(rel_l2(forward(*gpu, *pg, f), forward(*cpu, *pc, f)) < 1e-5);
  CHECK(rel_l2(adjoint(*gpu, *pg, f), adjoint(*cpu, *pc, f)) < 1e-5);
  // Two maps through the same plan, applied in turn: each operator keeps its
  // own model, so neither may see the other's map.
  FieldData other = f;
  for (float& v : other.hz) v = -v;
  auto gpu_plan = Plan::make(*gpu, c.traj, g, {}), cpu_plan = Plan::make(*cpu, c.traj, g, {});
  const OpPtr a = field_exact_op(gpu_plan, f), b = field_exact_op(gpu_plan, other);
  const std::vector<cfloat> ax = a->apply(x), bx = b->apply(x);
  CHECK(rel_l2(bx, field_exact_op(cpu_plan, other)->apply(x)) < 1e-5);
  CHECK(rel_l2(a->apply(x), ax) < 1e-6);
  CHECK(rel_l2(ax, field_exact_op(cpu_plan, f)->apply(x)) < 1e-5);
  CHECK_THROWS_AS(gpu->kernels<FieldKernels>().model(*pg, FieldData{std::vector<float>(5), c.times}, g), InputError);
}
