// The GPU device and its operator families against the CPU device and the
// float64 direct sums. Tolerances are relative L2 errors ||gpu - ref|| / ||ref||,
// stated per check: float32 kernels land near 1e-6..1e-5 against float64; the
// bounds leave a 10x margin over what float rounding of these sizes gives.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "catch.hpp"
#include "cuda/device/gpu_device.hpp"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/device/host_copy.hpp"
#include "cuda/gather/fhd_kernels.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/coils/sense.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/gridding/gridding_cpu.hpp"
#include "recon/ops/fft.hpp"
#include "recon/plan/plan.hpp"
#include "recon/solvers/cg.hpp"
#include "test_backend_util.hpp"

using namespace fhd;
using namespace fhd::gpu_test;

namespace {

const ImageGrid kGrids[] = {{12, 10, 8}, {16, 14, 1}, {7, 5, 3}};

// A GPU device and a CPU device that share one trajectory.
struct Pair {
  std::unique_ptr<Device> gpu = make_gpu_device();
  std::unique_ptr<Device> cpu = make_cpu_device();
  std::unique_ptr<Points> gpu_pts, cpu_pts;
  void set(const Trajectory& t) {
    gpu_pts = gpu->upload_points(t);
    cpu_pts = cpu->upload_points(t);
  }
};

// The centred DFT in place on `dev` (FftKernels), from and to the host.
std::vector<cfloat> centered_on(Device& dev, const std::vector<cfloat>& in, const ImageGrid& dims, bool inverse) {
  VecPtr v = dev.upload(in);
  dev.kernels<FftKernels>().centered(*v, dims, inverse);
  return dev.download(*v);
}

}  // namespace

TEST_CASE("gpu_usable names the device or says why none is usable", "[gpu][backend]") {
  std::string why;
  const bool ok = gpu_usable(&why);
  INFO(why);
  CHECK(!why.empty());
  if (!ok) {
    bool threw = false;
    try {
      make_gpu_device();
    } catch (const DeviceError&) {
      threw = true;
    }
    CHECK(threw);
    FHD_SKIP("no GPU: " + why);
  }
  CHECK(why.find("(device 0, sm_") != std::string::npos);
  CHECK(why.find(" GiB free)") != std::string::npos);
  auto be = make_gpu_device();
  CHECK(be->is_gpu());
  CHECK(be->kind() == DeviceKind::Gpu);
  CHECK(be->name().rfind("gpu 0: ", 0) == 0);
  CHECK(gpu_usable(nullptr));  // a null `why` is allowed
}

TEST_CASE("gpu_present answers as gpu_usable does, without a context", "[gpu][backend]") {
  std::string usable_why, present_why;
  const bool usable = gpu_usable(&usable_why);
  CHECK(gpu_present(&present_why) == usable);
  CHECK(!present_why.empty());
  if (usable) {  // the same device's name, and its compute capability
    CHECK(usable_why.rfind(present_why.substr(0, present_why.find(" (sm_")), 0) == 0);
    CHECK(present_why.find(" (sm_") != std::string::npos);
  }
  CHECK(gpu_present(nullptr) == usable);
}

TEST_CASE("gpu mu equals conj(phi) * D", "[gpu][backend]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  const std::size_t m = 100003;  // not a multiple of any block size
  const ImageGrid g{4, 4, 1};
  const Trajectory t = random_trajectory(m, g, 3);
  const auto d = random_complex(m, 1), phi = random_complex(m, 2);
  PlanOptions po;
  po.phi = phi;
  const auto mu = be->download(*Plan::make(*be, t, g, po)->mu(d));
  std::vector<cdouble> ref(m);
  for (std::size_t i = 0; i < m; ++i) ref[i] = std::conj(cdouble(phi[i])) * cdouble(d[i]);
  CHECK(rel_l2(mu, ref) < 1e-6);
  CHECK(be->download(*Plan::make(*be, t, g, {})->mu(d)) == d);  // Phi = 1: Mu is D itself
}

TEST_CASE("gpu fhd and q match the float64 sums and the CPU device", "[gpu][backend]") {
  FHD_NEED_GPU();
  Pair p;
  for (const ImageGrid& g : kGrids) {
    const Trajectory t = random_trajectory(3 * g.voxels() + 17, g, 3);
    p.set(t);
    const auto mu = random_complex(t.size(), 4);
    const auto w = random_weights(t.size(), 5);
    const auto fhd_ref = fhd_reference(t, mu, g);
    const auto q_ref = q_reference(t, w, g);
    const auto q1_ref = q_reference(t, {}, g);
    for (TrigMode trig : {TrigMode::Double, TrigMode::Single, TrigMode::Sfu}) {
      INFO(grid_name(g) << " trig " << to_string(trig) << " kernel " << gpu::default_kernel(trig));
      FhdOptions opt;
      opt.trig = trig;
      // sfu: hardware sine/cosine after range reduction, about 1e-5 expected.
      const double tol = trig == TrigMode::Sfu ? 1e-4 : 1e-5;
      const auto fhd_gpu = gather_fhd(*p.gpu, *p.gpu_pts, mu, g, opt);
      const auto q_gpu = gather_q(*p.gpu, *p.gpu_pts, w, g, opt);
      CHECK(rel_l2(fhd_gpu, fhd_ref) < tol);
      CHECK(rel_l2(q_gpu, q_ref) < tol);
      CHECK(rel_l2(gather_q(*p.gpu, *p.gpu_pts, {}, g, opt), q1_ref) < tol);
      CHECK(rel_l2(fhd_gpu, gather_fhd(*p.cpu, *p.cpu_pts, mu, g, opt)) < 2 * tol);
      CHECK(rel_l2(q_gpu, gather_q(*p.cpu, *p.cpu_pts, w, g, opt)) < 2 * tol);
    }
  }
}

TEST_CASE("gpu fhd runs every kernel of the table to the same result", "[gpu][backend]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  const ImageGrid g{9, 8, 6};
  const Trajectory t = random_trajectory(5000, g, 6);
  auto pts = be->upload_points(t);
  const auto mu = random_complex(t.size(), 7);
  const auto ref = fhd_reference(t, mu, g);
  for (const auto& v : gpu::kernel_table()) {
    FhdOptions opt;
    opt.trig = TrigMode::Single;
    opt.kernel = v.name;
    INFO("kernel " << v.name);
    // The TF32 separable variant rounds its operands to 10 mantissa bits.
    CHECK(rel_l2(gather_fhd(*be, *pts, mu, g, opt), ref) < (v.name.find("tf32") != std::string::npos ? 2e-3 : 1e-4));
  }
}

TEST_CASE("gpu Toeplitz normal operator equals the CPU one", "[gpu][backend]") {
  FHD_NEED_GPU();
  Pair p;
  for (const ImageGrid& g : kGrids) {
    const Trajectory t = random_trajectory(4 * g.voxels(), g, 8);
    const auto q64 = q_reference(t, random_weights(t.size(), 9), g);
    const std::vector<cfloat> q(q64.begin(), q64.end());
    const auto x = random_complex(g.voxels(), 10);
    for (double lambda : {0.0, 0.1 * double(t.size())}) {
      INFO(grid_name(g) << " lambda " << lambda);
      // T + lambda D^H D: the Toeplitz operator and the Laplacian's one pass.
      OpPtr og = normal_of(*p.gpu, q, g, lambda), oc = normal_of(*p.cpu, q, g, lambda);
      const auto y = og->apply(x);
      // cuFFT and FFTW in float: both near 1e-6 of the exact result.
      CHECK(rel_l2(y, oc->apply(x)) < 1e-5);
      // The operator keeps no state between applies: another input first, then x again.
      og->apply(random_complex(g.voxels(), 11));
      CHECK(rel_l2(og->apply(x), y) < 1e-6);
    }
  }
}

TEST_CASE("staging copies: in parallel pieces, byte for byte; uploads through them round-trip", "[gpu][backend]") {
  std::vector<unsigned char> src(std::size_t(3) << 20 | 7);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  for (std::size_t bytes : {std::size_t(0), std::size_t(1), (std::size_t(256) << 10) - 1, src.size()})
    for (int threads : {1, 2, 3, 8}) {
      INFO(bytes << " bytes, " << threads << " threads");
      std::vector<unsigned char> dst(src.size(), 0);
      gpu::copy_in_parallel(dst.data(), src.data(), bytes, threads);
      CHECK(std::equal(dst.begin(), dst.begin() + std::ptrdiff_t(bytes), src.begin()));
      CHECK(std::all_of(dst.begin() + std::ptrdiff_t(bytes), dst.end(), [](unsigned char c) { return c == 0; }));
    }
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  const std::vector<cfloat> big = random_complex((std::size_t(5) << 20) / sizeof(cfloat) + 3, 77);  // > 2 chunks
  CHECK(be->download(*be->upload(big)) == big);
}

TEST_CASE("gpu vector operations match double arithmetic", "[gpu][backend]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  const std::size_t n = 300007;
  const auto x = random_complex(n, 11), y = random_complex(n, 12);
  const cdouble a(0.75, -1.25);
  auto gx = be->upload(x), gy = be->upload(y);
  CHECK(be->download(*gx) == x);
  cdouble ref_dot = 0;
  for (std::size_t i = 0; i < n; ++i) ref_dot += std::conj(cdouble(x[i])) * cdouble(y[i]);
  const cdouble d = be->dot(*gx, *gy);
  CHECK(std::abs(d - ref_dot) < 1e-9 * std::sqrt(double(n)) * std::abs(ref_dot) + 1e-9);
  CHECK(be->dot(*gx, *gy) == d);  // fixed reduction order: same bits every time
  // dot2: the same two sums in one pass, same reduction shape, so the same bits.
  const auto [d_xy, d_yx] = be->dot2(*gx, *gy, *gy, *gx);
  CHECK(d_xy == d);
  CHECK(d_yx == be->dot(*gy, *gx));
  CHECK(std::abs(d_yx - std::conj(ref_dot)) < 1e-9 * std::sqrt(double(n)) * std::abs(ref_dot) + 1e-9);
  be->axpy(a, *gx, *gy);
  std::vector<cdouble> ref(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = a * cdouble(x[i]) + cdouble(y[i]);
  CHECK(rel_l2(be->download(*gy), ref) < 1e-7);
  be->xpay(*gx, a, *gy);  // y = x + a (a x + y)
  for (std::size_t i = 0; i < n; ++i) ref[i] = cdouble(x[i]) + a * cdouble(cfloat(ref[i]));
  CHECK(rel_l2(be->download(*gy), ref) < 1e-7);
  auto z = be->zeros(n);
  CHECK(be->dot(*z, *z) == cdouble(0.0));
  be->copy(*gx, *z);
  CHECK(be->download(*z) == x);
  auto cpu = make_cpu_device();
  auto foreign = cpu->upload(x);
  bool threw = false;
  try {
    be->dot(*foreign, *gx);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

TEST_CASE("gpu CG gives the CPU device's solution", "[gpu][backend]") {
  FHD_NEED_GPU();
  Pair p;
  for (const ImageGrid& g : {ImageGrid{10, 9, 8}, ImageGrid{20, 18, 1}}) {
    const Trajectory t = random_trajectory(4 * g.voxels(), g, 13);
    p.set(t);
    const auto mu = random_complex(t.size(), 14);
    const FhdOptions opt;
    const auto rhs = gather_fhd(*p.cpu, *p.cpu_pts, mu, g, opt);  // one right-hand side and Q for both:
    const auto q = gather_q(*p.cpu, *p.cpu_pts, {}, g, opt);      // this test is about CG and the operator
    const double lambda = 0.05 * double(t.size());
    CgOptions cg;
    cg.iters = 12;
    std::vector<std::vector<cfloat>> x;
    std::vector<CgResult> res;
    for (Device* be : {p.gpu.get(), p.cpu.get()}) {
      OpPtr op = normal_of(*be, q, g, lambda);
      auto b = be->upload(rhs);
      auto xv = be->zeros(g.voxels());
      res.push_back(conjugate_gradient(*op, *b, *xv, cg));
      x.push_back(be->download(*xv));
    }
    INFO(grid_name(g) << ": residual gpu " << res[0].residuals.back() << " cpu " << res[1].residuals.back());
    CHECK(res[0].iters == res[1].iters);
    // 12 iterations of float CG from float operators: the iterates drift apart
    // by rounding only, well under 1e-4.
    CHECK(rel_l2(x[0], x[1]) < 1e-4);
    CHECK(res[0].residuals.back() < 0.5 * res[0].residuals.front());
  }
}

TEST_CASE("gpu centered DFT equals the CPU one", "[gpu][backend]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  for (const ImageGrid& g : {ImageGrid{16, 12, 1}, ImageGrid{9, 8, 7}, ImageGrid{32, 32, 32}}) {
    for (bool inverse : {true, false}) {
      INFO(grid_name(g) << (inverse ? " inverse" : " forward"));
      const auto in = random_complex(g.voxels(), 15);
      const auto a = centered_on(*be, in, g, inverse);
      auto b = in;
      centered_dft_host(b, g, inverse);
      CHECK(rel_l2(a, b) < 1e-5);
      if (g.voxels() < 1000) {  // and the definition itself, in double, on the small ones
        std::vector<cdouble> ref(g.voxels());
        const double pi = 3.14159265358979323846, sign = inverse ? 1.0 : -1.0;
        for (int jz = 0; jz < g.nz; ++jz)
          for (int jy = 0; jy < g.ny; ++jy)
            for (int jx = 0; jx < g.nx; ++jx) {
              cdouble s = 0;
              for (int kz = 0; kz < g.nz; ++kz)
                for (int ky = 0; ky < g.ny; ++ky)
                  for (int kx = 0; kx < g.nx; ++kx) {
                    const double ph = 2 * pi *
                                      (double(kx - g.nx / 2) * (jx - g.nx / 2) / g.nx +
                                       double(ky - g.ny / 2) * (jy - g.ny / 2) / g.ny +
                                       double(kz - g.nz / 2) * (jz - g.nz / 2) / g.nz);
                    s += cdouble(in[kx + g.nx * (ky + std::size_t(g.ny) * kz)]) * std::polar(1.0, sign * ph);
                  }
              ref[jx + g.nx * (jy + std::size_t(g.ny) * jz)] = s;
            }
        CHECK(rel_l2(a, ref) < 1e-5);
      }
    }
  }
}

TEST_CASE("gpu grid_scatter equals cpu_grid_scatter, every method", "[gpu][backend]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  auto cpu = make_cpu_device();
  cudaStream_t s = nullptr;  // the legacy default stream, for the direct calls below
  for (const ImageGrid& image : {ImageGrid{24, 20, 16}, ImageGrid{40, 36, 1}}) {
    Trajectory t = random_trajectory(20000, image, 16);
    // A cluster at the centre (more samples in one tile than one block takes)
    // and samples on the band's edge (periodic wrap).
    for (std::size_t i = 0; i < 3000; ++i) {
      t.kx[i] *= 0.02f;
      t.ky[i] *= 0.02f;
      t.kz[i] *= 0.02f;
    }
    t.kx[3000] = -0.5f * image.nx;
    t.ky[3001] = -0.5f * image.ny;
    auto pts = be->upload_points(t);
    auto cpu_pts = cpu->upload_points(t);
    const auto v = random_complex(t.size(), 17);
    gpu::DeviceTrajectory dt;
    dt.m = t.size();
    dt.kx.allocate(dt.m, "test");
    dt.ky.allocate(dt.m, "test");
    dt.kz.allocate(dt.m, "test");
    gpu::upload(t.kx.data(), dt.m, dt.kx.get(), s);
    gpu::upload(t.ky.data(), dt.m, dt.ky.get(), s);
    gpu::upload(t.kz.data(), dt.m, dt.kz.get(), s);
    for (auto type : {GridKernel::Type::KaiserBessel, GridKernel::Type::Trilinear}) {
      GridKernel k;
      k.type = type;
      const ImageGrid over = oversampled_grid(image, k.oversampling);
      INFO(grid_name(image) << (type == GridKernel::Type::Trilinear ? " trilinear" : " kaiser-bessel"));
      const auto ref = cpu_grid_scatter(t, v, image, over, k);
      // Same taps and weights; only the order of the float sums differs. The
      // cluster puts about 3000 samples into a few cells: float sums of n terms
      // in another order differ by about eps sqrt(n) = 3e-6 relative there
      // (1e-6 failed once in seven runs: the atomics' order varies per run);
      // a wrong tap or weight shows as 1e-3 or more.
      constexpr double kOrder = 5e-6;
      // The device's own points and stream, as its gridding uses them.
      CHECK(rel_l2(gpu::grid_scatter(gpu::on_device(*pts), v, image, over, k, gpu::ScatterMethod::Auto,
                                     gpu::stream_of(*be)),
                   ref) < kOrder);
      for (auto method : {gpu::ScatterMethod::Atomic, gpu::ScatterMethod::Privatized, gpu::ScatterMethod::Hybrid}) {
        INFO("method " << int(method));
        CHECK(rel_l2(gpu::grid_scatter(dt, v, image, over, k, method, s), ref) < kOrder);
      }
      // Scatter, inverse DFT and window (GriddingKernels) against the CPU's: the
      // scatter's order differences spread evenly over the image, the window
      // keeps at least its share of the signal; cuFFT and FFTW add ~1e-6.
      CHECK(rel_l2(be->kernels<GriddingKernels>().grid_to_image(*pts, v, image, over, k),
                   cpu->kernels<GriddingKernels>().grid_to_image(*cpu_pts, v, image, over, k)) < 2e-5);
    }
  }
}

TEST_CASE("gpu out-of-memory requests raise DeviceError and leave the device usable", "[gpu][backend]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  std::string msg;
  try {
    be->zeros(std::size_t(1) << 40);  // 8 TiB of complex floats
  } catch (const DeviceError& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK(msg.find("out of GPU memory: need 8192.00 GiB for a vector of") == 0);
  CHECK(msg.find(" GiB free") != std::string::npos);
  // The toeplitz operator of a 2048^3 image needs two 4096^3 buffers (1 TiB):
  // refused by the estimate, before any allocation. (Q's size is checked
  // first, so this uses the direct request below instead of a 512 GiB Q.)
  msg.clear();
  try {
    gpu::require_free(2.0 * 4096.0 * 4096.0 * 4096.0 * 8.0, "the Toeplitz normal operator on 4096x4096x4096");
  } catch (const DeviceError& e) {
    msg = e.what();
  }
  CHECK(msg.find("out of GPU memory: need 1024.00 GiB for the Toeplitz normal operator") == 0);
  auto v = be->upload(random_complex(1000, 18));
  CHECK(std::real(be->dot(*v, *v)) > 0.0);
}

TEST_CASE("gpu device refuses misuse with clear errors", "[gpu][backend]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  const ImageGrid g{4, 4, 1};
  bool threw = false;
  try {  // points another device uploaded
    auto host_pts = make_cpu_device()->upload_points(random_trajectory(10, g, 20));
    gather_fhd(*be, *host_pts, random_complex(10, 19), g, FhdOptions{});
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
  auto pts = be->upload_points(random_trajectory(10, g, 20));
  threw = false;
  try {
    gather_fhd(*be, *pts, random_complex(11, 19), g, FhdOptions{});
  } catch (const InputError& e) {
    threw = std::string(e.what()).find("mu size") != std::string::npos;
  }
  CHECK(threw);
  threw = false;
  try {
    make_gpu_device(4096);
  } catch (const DeviceError& e) {
    threw = std::string(e.what()).find("no CUDA device 4096") != std::string::npos;
  }
  CHECK(threw);
}

TEST_CASE("gpu calibration images equal the float64 direct sum, 3D and 2D", "[gpu][backend][coils]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  for (const ImageGrid low : {ImageGrid{21, 18, 16}, ImageGrid{24, 23, 1}}) {  // odd and even, 3D and 2D
    INFO(grid_name(low));
    CalibrationSamples s;
    s.low = low;
    const std::size_t m = 3000;
    s.traj = random_trajectory(m, low, 7);
    s.coils = 3;
    s.weighted = random_complex(3 * m, 60);
    const CoilData images = calibration_images(*be, s);
    REQUIRE(images.size() == 3);
    for (int c = 0; c < 3; ++c) {
      const std::vector<cfloat> mu(s.weighted.begin() + std::ptrdiff_t(c * m),
                                   s.weighted.begin() + std::ptrdiff_t((c + 1) * m));
      const std::vector<cdouble> ref = fhd_reference(s.traj, mu, low);
      std::vector<cfloat> want(ref.size());
      for (std::size_t v = 0; v < ref.size(); ++v) want[v] = cfloat(ref[v] / double(low.voxels()));
      CHECK(rel_l2(images[c], want) < 1e-4);  // the NUFFT's tolerance is 1e-5
    }
  }
}

TEST_CASE("gpu lowres coil maps equal the host's maps_lowres", "[gpu][backend][coils]") {
  FHD_NEED_GPU();
  auto be = make_gpu_device();
  auto cpu = make_cpu_device();
  // Odd and even sizes (the centring phase and the FFT positions per axis), 3D
  // and 2D: by cuFFT, and by line FFTs where every axis is a power of two.
  for (const auto& [cal_size, grid] : {std::pair{ImageGrid{10, 9, 8}, ImageGrid{32, 27, 20}},
                                       std::pair{ImageGrid{12, 12, 1}, ImageGrid{40, 36, 1}},
                                       std::pair{ImageGrid{9, 10, 7}, ImageGrid{32, 64, 16}},
                                       std::pair{ImageGrid{11, 16, 1}, ImageGrid{64, 16, 1}}}) {
    INFO(grid_name(grid));
    Calibration cal;
    cal.size = cal_size;
    for (int c = 0; c < 4; ++c) cal.kspace.push_back(random_complex(cal_size.voxels(), 40 + c));
    for (double crop : {0.0, 0.1}) {
      INFO("crop " << crop);
      const CoilData host = maps_lowres(cal, grid, crop);
      const auto dev = be->kernels<MapsKernels>().lowres(cal, grid, crop);
      REQUIRE(dev.size() == host.size());
      // Where both keep a voxel the maps agree to float rounding; the crop may
      // decide a voxel at its threshold either way (float sums in another order).
      std::size_t flipped = 0;
      for (std::size_t c = 0; c < host.size(); ++c) {
        std::vector<cfloat> d = be->download(*dev[c]), h = host[c];
        for (std::size_t v = 0; v < d.size(); ++v)
          if ((d[v] == cfloat(0)) != (h[v] == cfloat(0))) {
            ++flipped;
            d[v] = h[v] = 0;
          }
        CHECK(rel_l2(d, h) < 1e-5);
      }
      CHECK(flipped <= 4 * host.size());
      if (crop == 0.0) CHECK(flipped == 0);
    }
    // The CPU device's maps (the host's, uploaded) are the host's exactly.
    const auto uploaded = cpu->kernels<MapsKernels>().lowres(cal, grid, 0.1);
    CHECK(cpu->download(*uploaded[0]) == maps_lowres(cal, grid, 0.1)[0]);
    // All-zero calibration data: maps of zeros on both, not 0/0 = NaN.
    for (auto& k : cal.kspace) std::fill(k.begin(), k.end(), cfloat(0));
    for (const auto& m : be->kernels<MapsKernels>().lowres(cal, grid, 0.0))
      CHECK(be->download(*m) == std::vector<cfloat>(grid.voxels()));
    for (const auto& m : maps_lowres(cal, grid, 0.0)) CHECK(m == std::vector<cfloat>(grid.voxels()));
  }
}
