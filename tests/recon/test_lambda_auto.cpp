// --lambda auto (recon/problem/lambda_auto.hpp): the noise estimate from readout
// oversampling against noise of known variance, and the risk-minimizing lambda
// against the oracle (the true error, computed with the known image) on a
// problem the circulant model describes exactly.
#include <algorithm>
#include <cmath>
#include <random>

#include "catch.hpp"
#include "phantom/phantom.hpp"
#include "phantom/trajectory.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/problem/lambda_auto.hpp"
#include "recon/pipeline/pipeline.hpp"
#include "recon/plan/precond.hpp"
#include "recon/plan/toeplitz.hpp"
#include "recon/problem/lambda_auto.hpp"

using namespace fhd;

namespace {

Trajectory trajectory_of(const std::string& kind, int n) {
  TrajectorySpec spec;
  spec.kind = kind;
  spec.nx = spec.ny = n;
  spec.nz = 1;
  if (kind == "random") spec.total = 4096;
  return make_trajectory(spec);
}

// Complex Gaussian noise with E|n|^2 = variance.
std::vector<cfloat> noise(std::size_t m, double variance, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0.0, std::sqrt(variance / 2));
  std::vector<cfloat> v(m);
  for (cfloat& x : v) x = cfloat(float(g(rng)), float(g(rng)));
  return v;
}

// The 2D phantom's exact data on a 32^2 trajectory of this kind.
Scan shepp2d_scan(const std::string& kind) {
  Scan scan;
  scan.grid = {32, 32, 1};
  scan.traj = trajectory_of(kind, 32);
  scan.data = synthesize(*make_phantom("shepp2d"), scan.traj, 32, 32, 1);
  return scan;
}

}  // namespace

TEST_CASE("noise variance from oversampled radial readouts", "[lambda]") {
  const int n = 64;
  const Trajectory t = trajectory_of("radial2d", n);
  std::vector<cfloat> data = synthesize(*make_phantom("shepp2d"), t, n, n, 1);
  double signal = 0;
  for (const cfloat& d : data) signal += std::norm(d);
  signal /= double(data.size());
  for (double rel : {1e-3, 1e-2, 5e-2}) {
    const double variance = rel * rel * signal;
    std::vector<cfloat> noisy = data;
    const std::vector<cfloat> e = noise(data.size(), variance, 7);
    for (std::size_t i = 0; i < noisy.size(); ++i) noisy[i] += e[i];
    const std::optional<double> est = noise_from_readouts(t, noisy);
    REQUIRE(est);
    INFO("relative noise " << rel << ": estimated " << *est << ", true " << variance);
    CHECK(*est == Approx(variance).epsilon(0.1));
  }
  // Noiseless: what is left beyond the object is the window's leakage, orders below 0.1% noise.
  const std::optional<double> clean = noise_from_readouts(t, data);
  REQUIRE(clean);
  CHECK(*clean < 1e-3 * 1e-6 * signal);
}

TEST_CASE("no readout estimate without equally spaced oversampled readouts", "[lambda]") {
  const int n = 32;
  for (const char* kind : {"spiral2d", "random"}) {
    const Trajectory t = trajectory_of(kind, n);
    CHECK_FALSE(noise_from_readouts(t, std::vector<cfloat>(t.size(), cfloat(1.f))));
  }
}

TEST_CASE("the scan's noise samples come first", "[lambda]") {
  const Trajectory t = trajectory_of("radial2d", 32);
  const std::vector<cfloat> samples = noise(20000, 4.0, 3);
  const std::optional<NoiseEstimate> e = estimate_noise(t, std::vector<cfloat>(t.size()), samples);
  REQUIRE(e);
  CHECK(e->source == "noise samples");
  CHECK(e->variance == Approx(4.0).epsilon(0.03));
}

TEST_CASE("the risk estimate's lambda is near the oracle's on a circulant problem", "[lambda]") {
  // Full Cartesian sampling with density t_k = M (periodic): the normal
  // operator is M I, exactly circulant. FhD = M x + E, Var E_k = sigma^2 M.
  const ImageGrid g{64, 64, 1};
  const std::size_t v = g.voxels();
  const double m = 4096.0;
  std::vector<float> img = voxel_image(*make_phantom("shepp2d"), g.nx, g.ny, 1);
  const std::vector<double> t(v, m), lap = laplacian_eigenvalues(g);
  std::vector<cfloat> truth(v);
  for (std::size_t i = 0; i < v; ++i) truth[i] = cfloat(img[i], 0.f);
  std::vector<cfloat> tx = truth;
  FftwPlan(g, tx.data(), false).execute();  // unnormalized DFT of the truth
  for (double sigma2 : {1e2, 1e3, 1e4}) {
    std::vector<cfloat> fhd(v);
    const std::vector<cfloat> e = noise(v, sigma2 * m, 11);  // image-space noise of FhD (white: T = M I)
    for (std::size_t i = 0; i < v; ++i) fhd[i] = cfloat(float(m) * truth[i] + e[i]);
    std::vector<cfloat> b = fhd;
    FftwPlan(g, b.data(), false).execute();
    // The true error of x_mu = IDFT(b / (m + mu r)) for each mu, and its minimizer.
    auto error = [&](double mu) {
      double s = 0;
      for (std::size_t k = 0; k < v; ++k) s += std::norm(cdouble(b[k]) / (m + mu * lap[k]) - cdouble(tx[k]));
      return s;
    };
    double oracle = kAutoLambdaFloor * m, best = error(oracle);
    for (double mu = oracle; mu < 10 * m; mu *= 1.1)
      if (error(mu) < best) best = error(mu), oracle = mu;
    const double chosen = sure_lambda(t, fhd, g, sigma2);
    INFO("sigma^2 " << sigma2 << ": oracle mu " << oracle << ", chosen " << chosen);
    CHECK(chosen > oracle / 2);
    CHECK(chosen < oracle * 2);
    CHECK(error(chosen) < 1.05 * best);  // within 5% of the oracle's squared error
  }
}

TEST_CASE("the pipeline's --lambda auto: the floor without noise, more with it, the fixed value without an estimate",
          "[lambda]") {
  auto be = make_cpu_device();
  Scan scan = shepp2d_scan("radial2d");
  ReconOptions opt;
  opt.iters = 10;
  opt.gridding = false;
  opt.lambda = 0.03;
  opt.lambda_auto = true;
  const ReconResult clean = run_reconstruction(*be, scan, opt);
  CHECK(clean.lambda_rule.rfind("auto: risk estimate", 0) == 0);
  CHECK(clean.lambda_rel == Approx(kAutoLambdaFloor).epsilon(1e-6));
  add_noise(scan.data, 0.02, 5);
  const ReconResult noisy = run_reconstruction(*be, scan, opt);
  CHECK(noisy.lambda_rule.find("readout oversampling") != std::string::npos);
  CHECK(noisy.lambda_rel > 3 * kAutoLambdaFloor);
  scan = shepp2d_scan("spiral2d");  // no readout estimate, no noise samples: the fixed lambda
  const ReconResult fallback = run_reconstruction(*be, scan, opt);
  CHECK(fallback.lambda_rule.rfind("auto: no noise estimate", 0) == 0);
  CHECK(fallback.lambda_rel == 0.03);
}

TEST_CASE("TV's noise rule: the floor without noise, linear in the noise's standard deviation above it", "[lambda]") {
  const double q0 = 1e4, scale = 2.0;
  CHECK(tv_noise_lambda(0.0, q0, scale) == kTvLambda);
  // sqrt(4e4 / 1e4) / 2 = 1: the noise's standard deviation in the image equals the image scale.
  CHECK(tv_noise_ratio(4e4, q0, scale) == Approx(1.0));
  CHECK(tv_noise_lambda(4e4, q0, scale) == Approx(std::max(kTvLambda, kTvNoiseFactor)));
  CHECK(tv_noise_lambda(16e4, q0, scale) == Approx(std::max(kTvLambda, 2 * kTvNoiseFactor)));
  // A tiny noise stays on the floor; no scale or no Q(0) gives no ratio.
  CHECK(tv_noise_lambda(1e-6, q0, scale) == kTvLambda);
  CHECK(tv_noise_ratio(4e4, 0.0, scale) == 0.0);
  CHECK(tv_noise_ratio(4e4, q0, 0.0) == 0.0);
}

TEST_CASE("the pipeline's TV lambda: the floor without noise, the noise rule with it, the default without an "
          "estimate, and a given number wins",
          "[lambda]") {
  auto be = make_cpu_device();
  Scan scan = shepp2d_scan("radial2d");
  ReconOptions opt;
  opt.reg = "tv";
  opt.iters = 2;
  opt.gridding = false;
  opt.lambda = kTvLambda;
  opt.lambda_auto = true;
  const ReconResult clean = run_reconstruction(*be, scan, opt);
  CHECK(clean.lambda_rule.rfind("auto: TV noise rule", 0) == 0);
  CHECK(clean.lambda_rel == kTvLambda);
  // 30% noise: E|n|^2 = 2 (0.3 rms|D|)^2 (add_noise's sigma is per real and imaginary part).
  double signal = 0;
  for (const cfloat& d : scan.data) signal += std::norm(cdouble(d));
  const double variance = 2 * 0.09 * signal / double(scan.data.size());
  add_noise(scan.data, 0.3, 5);
  const ReconResult noisy = run_reconstruction(*be, scan, opt);
  INFO(noisy.lambda_rule);
  CHECK(noisy.lambda_rule.find("readout oversampling") != std::string::npos);
  REQUIRE(noisy.lambda_rel > 3 * kTvLambda);
  // lambda_abs = lambda_rel Q(0) scale with Q(0) = M (Phi = 1): the scale the rule saw, and its value for the
  // true variance (the estimate is within 10% of it: sqrt, 5%).
  const double q0 = double(scan.data.size()), scale = noisy.lambda_abs / (noisy.lambda_rel * q0);
  CHECK(noisy.lambda_rel == Approx(kTvNoiseFactor * std::sqrt(variance / q0) / scale).epsilon(0.06));
  opt.lambda_auto = false;  // a given number: used as it is
  opt.lambda = 0.2;
  const ReconResult given = run_reconstruction(*be, scan, opt);
  CHECK(given.lambda_rule == "fixed");
  CHECK(given.lambda_rel == 0.2);
  opt.lambda_auto = true;
  opt.lambda = kTvLambda;
  scan = shepp2d_scan("spiral2d");  // no readout estimate, no noise samples: TV's default
  add_noise(scan.data, 0.3, 5);
  const ReconResult fallback = run_reconstruction(*be, scan, opt);
  CHECK(fallback.lambda_rule.rfind("auto: no noise estimate", 0) == 0);
  CHECK(fallback.lambda_rel == kTvLambda);
}
