#pragma once
// Partitions across devices equal one device (issue 26): the NUFFT's type 1
// by sample chunks, the exact gather's slabs at 4 partitions and the size
// rule that keeps small problems on one device, and SENSE split by coils
// (2 and 4 partitions give one device's image after the same CG iterations).
// Written over a list of devices, so the CPU tests (CPU devices made several
// times) and the GPU tests (GPU 0 listed twice, or 0,1,0,1) share them.
#include <cmath>
#include <vector>

#include "catch.hpp"
#include "conformance.hpp"
#include "recon/eval/stages.hpp"
#include "recon/plan/partition.hpp"
#include "recon/problem/problem.hpp"
#include "recon/problem/solve.hpp"
#include "test_util.hpp"

namespace fhd::multi {

inline std::vector<Device*> others_of(const std::vector<Device*>& devs) {
  return std::vector<Device*>(devs.begin() + 1, devs.end());
}

inline PlanOptions plan_options(FhdMethod method, bool always) {
  PlanOptions po;
  po.fhd.method = method;
  if (always) po.split = SplitRule::always();
  return po;
}

// The NUFFT's F by sample chunks across devs equals one device's F (values
// and adjoint identity); the default rule keeps a small problem whole.
inline void nufft_chunks(const std::vector<Device*>& devs) {
  const ImageGrid g{12, 10, 8};
  const Trajectory t = test::random_trajectory(3 * g.voxels() + 1, g, 301);  // chunks of unequal length
  auto one = Plan::make(*devs[0], t, g, plan_options(FhdMethod::Nufft, false));
  auto many = Plan::make(*devs[0], t, g, plan_options(FhdMethod::Nufft, true), others_of(devs));
  REQUIRE(many->fourier_chunks() != nullptr);
  CHECK(Plan::make(*devs[0], t, g, plan_options(FhdMethod::Nufft, false), others_of(devs))->fourier_chunks() == nullptr);
  const std::vector<cfloat> y = test::random_complex(t.size(), 302), x = test::random_complex(g.voxels(), 303);
  CHECK(test::rel_l2(many->fhd(y), one->fhd(y)) < 1e-5);  // float32 rounding: the chunks' sum in another order
  CHECK(test::rel_l2(many->forward_model(x), one->forward_model(x)) < 1e-5);
  conformance::check_adjoint(*many->fourier(), 5e-5, 304);
}

// The exact gather's FhD and Q by slabs (Q's first slab smaller by its faces)
// equal one device's; the default rule gives a small problem one device.
inline void exact_slabs(const std::vector<Device*>& devs) {
  const ImageGrid g{6, 8, 9};  // Q's half box: 10 slices, the faces about 1 of them
  const Trajectory t = test::random_trajectory(2 * g.voxels(), g, 311);
  const std::vector<cfloat> y = test::random_complex(t.size(), 312);
  auto one = Plan::make(*devs[0], t, g, plan_options(FhdMethod::Exact, false));
  auto many = Plan::make(*devs[0], t, g, plan_options(FhdMethod::Exact, true), others_of(devs));
  CHECK(test::rel_l2(many->fhd(y), one->fhd(y)) < 2e-5);
  CHECK(test::rel_l2(many->q_host(), one->q_host()) < 2e-5);
  conformance::check_adjoint(*many->fourier(), 2e-5, 313);
  auto small = Plan::make(*devs[0], t, g, plan_options(FhdMethod::Exact, false), others_of(devs));
  CHECK(partitioned_adjoint(*small) == nullptr);
  CHECK(partitioned_q(*small, {}) == nullptr);
  CHECK(test::rel_l2(small->fhd(y), one->fhd(y)) < 1e-6);  // the same kernel on one device
}

// Smooth maps, one centre per coil, with phases.
inline CoilData smooth_maps(const ImageGrid& g, int coils) {
  CoilData maps(std::size_t(coils), std::vector<cfloat>(g.voxels()));
  for (int c = 0; c < coils; ++c) {
    const double cx = 0.5 + 0.4 * std::cos(c), cy = 0.5 + 0.4 * std::sin(c), cz = 0.3 + 0.05 * c;
    for (std::size_t n = 0; n < g.voxels(); ++n) {
      const double u = (double(n % g.nx) + 0.5) / g.nx, v = (double(n / g.nx % g.ny) + 0.5) / g.ny,
                   w = (double(n / (g.nx * g.ny)) + 0.5) / g.nz;
      const double r2 = (u - cx) * (u - cx) + (v - cy) * (v - cy) + (w - cz) * (w - cz);
      maps[std::size_t(c)][n] = std::polar(float(std::exp(-r2)), float(0.5 * c));
    }
  }
  return maps;
}

struct SenseRun {
  std::vector<cfloat> image;
  int iters = 0;
  std::string model;
};

// SENSE with CG through the problem builder and the solver on a plan of devs.
inline SenseRun sense(const std::vector<Device*>& devs, FhdMethod method) {
  const ImageGrid g{16, 16, 8};
  const std::size_t coils = 5;  // shares of 3+2, or 2+1+1+1
  const Trajectory t = test::random_trajectory(g.voxels() / 2, g, 321);
  const std::vector<cfloat> x0 = test::random_complex(g.voxels(), 322);
  const CoilData maps = smooth_maps(g, int(coils));
  std::vector<Scan> scans(coils);
  std::vector<const Scan*> ptrs;
  auto truth = Plan::make(*devs[0], t, g, plan_options(method, false));
  for (std::size_t c = 0; c < coils; ++c) {
    std::vector<cfloat> img(g.voxels());
    for (std::size_t n = 0; n < img.size(); ++n) img[n] = maps[c][n] * x0[n];
    scans[c].grid = g;
    scans[c].traj = t;
    scans[c].data = truth->forward_model(img);
    ptrs.push_back(&scans[c]);
  }
  ReconOptions opt;
  opt.fhd.method = method;
  opt.iters = 12;
  opt.tol = 0;  // a fixed number of iterations
  opt.lambda = 0.01;  // the normal plus lambda's Laplacian
  opt.gridding = false;
  opt.maps = "given";
  opt.maps_crop = 0;
  opt.given_maps = std::make_shared<const CoilData>(maps);
  auto plan = Plan::make(*devs[0], t, g, plan_options(method, true), others_of(devs));
  ReconResult res;
  res.grid = g;
  StageClock clock(plan->device());
  Problem p = build_problem(*plan, ptrs, true, opt, res, clock);
  solve(*plan, p, opt, res, clock);
  clock.resolve();
  return {res.methods.back().image, res.methods.back().iters, p.model->name()};
}

// SENSE split by coils over devs equals one device's image, and its normal is
// the parts' own (the operator names it).
inline void sense_across(const std::vector<Device*>& devs, FhdMethod method) {
  const SenseRun one = sense({devs[0]}, method), many = sense(devs, method);
  CHECK(many.model.rfind("stack across devices", 0) == 0);  // split by coils
  // The NUFFT's E^H y by sample chunks (recon/coils/sense.hpp), the exact gather's by coils.
  CHECK((many.model.find("E^H by sample chunks") != std::string::npos) == (method == FhdMethod::Nufft));
  CHECK(one.model != many.model);
  CHECK(many.iters == one.iters);
  CHECK(test::rel_l2(many.image, one.image) < 1e-4);
}

}  // namespace fhd::multi
