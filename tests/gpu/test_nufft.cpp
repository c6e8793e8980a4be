// The GPU NUFFT against the float64 direct sums (recon/direct_sum.*): type 1,
// type 2 and Q, 2D and 3D, several tolerances and sizes, every spreading and
// interpolation method; the adjoint identity between type 1 and type 2.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cuda/nufft/nufft.hpp"
#include "recon/nufft/nufft_kernels.hpp"
#include "recon/gather/direct_sum.hpp"
#include "core/error.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;
using gpu::NufftMethod;
using gpu::NufftOptions;

namespace {

// Single precision sets a floor near 1e-6 under the kernel's error (sigma
// 1.25 below 1e-4 runs at sigma 2: cuda/nufft/nufft.hpp).
double allowed(double tol) { return std::max(3.0 * tol, 4e-6); }

NufftOptions options(double tol, double sigma, NufftMethod m) {
  NufftOptions o;
  o.tol = tol;
  o.sigma = sigma;
  o.spread = m == NufftMethod::Auto || gpu::interpolation_only(m) ? NufftMethod::Shared : m;
  o.interp = m;
  return o;
}

struct Case {
  ImageGrid grid;
  std::size_t m;
};

}  // namespace

TEST_CASE("gpu nufft type 1 and type 2 meet the tolerance against the float64 direct sum", "[gpu][nufft]") {
  FHD_NEED_GPU();
  // {8, 6, 5}: bins and their padding wider than the fine grid (the tiles wrap
  // more than once). Fine grids of powers of two from 16 to 512 take the line
  // passes (cuda/fft/line_fft.hpp) instead of cuFFT: {64, 64, 1} and
  // {16, 16, 16} at sigma 2, {8, 6, 5} (odd mode counts on 16^3) at 1e-6.
  const Case cases[] = {{{32, 24, 1}, 3000}, {{64, 64, 1}, 20000}, {{16, 16, 16}, 4000}, {{24, 32, 20}, 6000},
                        {{8, 6, 5}, 500}};
  unsigned seed = 11;
  for (const Case& cs : cases) {
    const Trajectory t = random_trajectory(cs.m, cs.grid, seed++);
    const std::vector<cfloat> c = random_complex(cs.m, seed++);
    const std::vector<cfloat> f = random_complex(cs.grid.voxels(), seed++);
    const std::vector<cdouble> ref1 = fhd_reference(t, c, cs.grid);
    const std::vector<cdouble> ref2 = forward_reference(t, f, cs.grid);
    for (double sigma : {2.0, 1.25})
      for (double tol : {1e-2, 1e-4, 1e-6})
        for (NufftMethod m : {NufftMethod::Shared, NufftMethod::Global, NufftMethod::Rows}) {
          const NufftOptions o = options(tol, sigma, m);
          const double e1 = rel_l2(gpu::nufft_type1(t, c, cs.grid, o), ref1);
          const double e2 = rel_l2(gpu::nufft_type2(t, f, cs.grid, o), ref2);
          INFO(grid_name(cs.grid) << " M=" << cs.m << " sigma=" << sigma << " tol=" << tol
                                  << " method " << int(m) << ": type1 " << e1
                                  << ", type2 " << e2);
          std::printf("nufft %s M=%zu sigma=%.2f tol=%.0e method %d: type1 %.2e type2 %.2e\n",
                      grid_name(cs.grid).c_str(), cs.m, sigma, tol, int(m), e1, e2);
          CHECK(e1 < allowed(tol));
          CHECK(e2 < allowed(tol));
          if (tol == 1e-2) CHECK(e1 > 1e-5);  // the width really follows the tolerance
        }
  }
}

TEST_CASE("gpu nufft: small bins and subproblems give the same answer (dense and wrapped bins)", "[gpu][nufft]") {
  FHD_NEED_GPU();
  // Points piled near the centre (radial-like density) force bins of many
  // subproblems; tiles larger than parts of the grid wrap.
  const ImageGrid g{20, 20, 12};
  Trajectory t = random_trajectory(8000, g, 5);
  for (std::size_t i = 0; i < t.size(); i += 2) {
    t.kx[i] *= 0.05f;
    t.ky[i] *= 0.05f;
    t.kz[i] *= 0.05f;
  }
  const std::vector<cfloat> c = random_complex(t.size(), 6);
  const std::vector<cdouble> ref = fhd_reference(t, c, g);
  NufftOptions o = options(1e-5, 2.0, NufftMethod::Shared);
  o.bin[0] = o.bin[1] = o.bin[2] = 4;
  o.max_subproblem = 100;
  o.threads = 128;
  CHECK(rel_l2(gpu::nufft_type1(t, c, g, o), ref) < allowed(1e-5));
  const std::vector<cfloat> f = random_complex(g.voxels(), 7);
  const std::vector<cdouble> ref2 = forward_reference(t, f, g);
  CHECK(rel_l2(gpu::nufft_type2(t, f, g, o), ref2) < allowed(1e-5));
  // Interpolation by rows and from the tile on the same piled and wrapped
  // points, at every lane count (widths 2, 4, 6, 8, 11: 2, 4, 8, 8 and 16
  // lanes per point).
  for (NufftMethod m : {NufftMethod::Rows, NufftMethod::Shared})
    for (double tol : {1e-1, 1e-3, 1e-5, 1e-7, 1e-10}) {
      NufftOptions r = options(tol, 2.0, m);
      r.bin[0] = r.bin[1] = r.bin[2] = 4;
      r.max_subproblem = 100;
      r.threads = 128;
      const double e = rel_l2(gpu::nufft_type2(t, f, g, r), ref2);
      INFO((m == NufftMethod::Rows ? "rows" : "shared") << ", tol " << tol << ": " << e);
      CHECK(e < allowed(std::max(tol, 1e-6)));
    }
}

TEST_CASE("gpu nufft: type 2 is the adjoint of type 1", "[gpu][nufft]") {
  FHD_NEED_GPU();
  // The last two have power-of-two fine grids: the line passes, not cuFFT.
  for (const ImageGrid& g : {ImageGrid{48, 40, 1}, ImageGrid{20, 24, 16}, ImageGrid{32, 16, 8}, ImageGrid{64, 32, 1}}) {
    const Trajectory t = random_trajectory(5000, g, 21);
    const std::vector<cfloat> c = random_complex(t.size(), 22), f = random_complex(g.voxels(), 23);
    const NufftOptions o = options(1e-6, 2.0, NufftMethod::Shared);
    const std::vector<cfloat> a1c = gpu::nufft_type1(t, c, g, o), a2f = gpu::nufft_type2(t, f, g, o);
    // <A1 c, f> = <c, A2 f>: sum conj(A1 c) f = sum conj(c) A2 f.
    cdouble lhs = 0, rhs = 0;
    double nl = 0, nr = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
      lhs += std::conj(cdouble(a1c[i])) * cdouble(f[i]);
      nl += std::abs(cdouble(a1c[i])) * std::abs(cdouble(f[i]));
    }
    for (std::size_t i = 0; i < c.size(); ++i) {
      rhs += std::conj(cdouble(c[i])) * cdouble(a2f[i]);
      nr += std::abs(cdouble(c[i])) * std::abs(cdouble(a2f[i]));
    }
    INFO(grid_name(g) << ": " << lhs << " vs " << rhs);
    CHECK(std::abs(lhs - rhs) < 1e-5 * std::max(nl, nr));
  }
}

TEST_CASE("gpu nufft Q matches the float64 Q on the doubled grid", "[gpu][nufft]") {
  FHD_NEED_GPU();
  for (const ImageGrid& g : {ImageGrid{32, 32, 1}, ImageGrid{16, 12, 10}}) {
    const Trajectory t = random_trajectory(4000, g, 31);
    const std::vector<float> w = random_weights(t.size(), 32);
    const std::vector<cdouble> ref = q_reference(t, w, g);
    for (double tol : {1e-3, 1e-6}) {
      const double e = rel_l2(gpu::nufft_q(t, w, g, options(tol, 2.0, NufftMethod::Shared)), ref);
      INFO(grid_name(g) << " tol " << tol << ": " << e);
      CHECK(e < allowed(tol));
    }
    CHECK(rel_l2(gpu::nufft_q(t, {}, g, options(1e-5, 1.25, NufftMethod::Shared)), q_reference(t, {}, g)) <
          allowed(1e-5));
  }
}

TEST_CASE("gpu nufft rejects bad options with one clear line", "[gpu][nufft]") {
  FHD_NEED_GPU();
  const ImageGrid g{16, 16, 1};
  const Trajectory t = random_trajectory(10, g, 1);
  const std::vector<cfloat> c = random_complex(10, 2);
  NufftOptions o;
  o.tol = 0;
  auto message = [&](const NufftOptions& opt, const std::vector<cfloat>& v) -> std::string {
    try {
      gpu::nufft_type1(t, v, g, opt);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message(o, c).find("tolerance") != std::string::npos);
  o.tol = 1e-6;
  o.sigma = 1.5;
  CHECK(message(o, c).find("upsampling") != std::string::npos);
  o.sigma = 2;
  CHECK(message(o, random_complex(9, 3)).find("values") != std::string::npos);
  o.spread = NufftMethod::Rows;
  CHECK(message(o, c).find("interpolation only") != std::string::npos);
}

TEST_CASE("gpu device: fhd and q by its NUFFT kernels match float64 and the exact gather", "[gpu][nufft]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  const ImageGrid g{24, 20, 16};
  const Trajectory t = random_trajectory(6000, g, 41);
  auto pts = be->upload_points(t);
  const std::vector<cfloat> mu = random_complex(t.size(), 42);
  const std::vector<float> w = random_weights(t.size(), 43);
  const double tol = 1e-6;
  // FhD: type 1 onto the image; Q: type 1 of the weights onto the doubled grid
  // (coordinates set by the image), as the plan computes them.
  NufftKernels& nufft = be->kernels<NufftKernels>();
  VecPtr mu_dev = be->upload(mu), fn_dev = be->zeros(g.voxels());
  nufft.plan(*pts, g, g, tol)->type1(*mu_dev, *fn_dev);
  const std::vector<cfloat> w_complex(w.begin(), w.end());
  VecPtr w_dev = be->upload(w_complex), qn_dev = be->zeros(g.doubled().voxels());
  nufft.plan(*pts, g.doubled(), g, tol)->type1(*w_dev, *qn_dev);
  const std::vector<cfloat> fn = be->download(*fn_dev), qn = be->download(*qn_dev);
  CHECK(rel_l2(fn, fhd_reference(t, mu, g)) < allowed(tol));
  CHECK(rel_l2(qn, q_reference(t, w, g)) < allowed(tol));
  const FhdOptions exact;
  CHECK(rel_l2(fn, gather_fhd(*be, *pts, mu, g, exact)) < 1e-5);
  CHECK(rel_l2(qn, gather_q(*be, *pts, w, g, exact)) < 1e-5);
}
