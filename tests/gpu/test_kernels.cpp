// [gpu] The cmpFhD kernel family against the float64 direct sums
// (recon/gather/direct_sum.hpp): every variant x every trig mode, small random 2D and
// 3D problems with odd sizes, sample counts that are not multiples of any tile
// or chunk, and Q's doubled grid. Outputs are poisoned (NaN) before each run.
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"
#include "cuda/device/check.hpp"
#include "cuda/gather/fhd_kernels.hpp"
#include "recon/gather/direct_sum.hpp"

namespace {

using fhd::cdouble;
using fhd::cfloat;
using fhd::TrigMode;
using namespace fhd::gpu;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Relative l2 bound per variant and trig mode, with the reason.
double bound(const std::string& variant, TrigMode trig) {
  // TF32 operands keep 10 mantissa bits (2^-11 relative per product): ~3e-4 on random sums.
  if (variant == "separable-tf32") return 2e-3;
  // FP32 GEMM: tables rounded to float, K-term float sums (~eps sqrt(K)).
  if (variant == "separable-fp32") return 1e-5;
  // scatter-atomic sums with float atomics in every mode: float rounding of ~M terms.
  if (variant == "scatter-atomic") return trig == TrigMode::Double ? 1e-5 : 2e-5;
  if (trig == TrigMode::Double) return 1e-6;  // double phase, trig and sums; float output rounding ~6e-8
  // Float phase (|k.x| < 30 turns here: 2 ulp ~ 4e-6 turns) and float sums; the SFU
  // adds ~4e-7 absolute per term, the coarsened recurrence a few ulp per step.
  return 2e-5;
}

struct Problem {
  fhd::Trajectory traj;
  std::vector<cfloat> mu;
  std::vector<float> w;   // real weights for Q
  fhd::ImageGrid grid;
  bool q = false;         // Q on the doubled grid instead of FhD
};

Problem random_problem(std::mt19937_64& rng, int nx, int ny, int nz, std::size_t m, bool q) {
  Problem p;
  p.grid = {nx, ny, nz};
  p.q = q;
  p.traj.resize(m);
  std::normal_distribution<float> gauss;
  auto band = [&](int n) { return std::uniform_real_distribution<float>(-0.5f * n, 0.5f * n); };
  auto bx = band(nx), by = band(ny), bz = band(nz);
  for (std::size_t i = 0; i < m; ++i) {
    p.traj.kx[i] = bx(rng);
    p.traj.ky[i] = by(rng);
    p.traj.kz[i] = nz > 1 ? bz(rng) : 0.f;
    p.mu.emplace_back(gauss(rng), gauss(rng));
    p.w.push_back(std::abs(gauss(rng)));
  }
  return p;
}

OutGrid out_grid(const Problem& p) {
  const fhd::ImageGrid o = p.q ? p.grid.doubled() : p.grid;
  return {o.nx, o.ny, o.nz, p.grid.nx, p.grid.ny, p.grid.nz};
}

std::vector<cdouble> reference(const Problem& p) {
  return p.q ? fhd::q_reference(p.traj, p.w, p.grid) : fhd::fhd_reference(p.traj, p.mu, p.grid);
}

// The problem's samples on the device; freed at scope exit.
struct DeviceProblem {
  float *kx = nullptr, *ky = nullptr, *kz = nullptr;
  float2* w = nullptr;
  float2* out = nullptr;
  std::size_t m = 0, points = 0;
  DeviceProblem(const Problem& p) : m(p.traj.size()), points(out_grid(p).points()) {
    std::vector<float2> wc(m);
    for (std::size_t i = 0; i < m; ++i)
      wc[i] = p.q ? make_float2(p.w[i], 0.f) : make_float2(p.mu[i].real(), p.mu[i].imag());
    upload(&kx, p.traj.kx.data(), m);
    upload(&ky, p.traj.ky.data(), m);
    upload(&kz, p.traj.kz.data(), m);
    upload(&w, wc.data(), m);
    CUDA_CHECK(cudaMalloc(&out, points * sizeof(float2)));
  }
  ~DeviceProblem() {
    cudaFree(kx), cudaFree(ky), cudaFree(kz), cudaFree(w), cudaFree(out);
  }
  template <class T>
  static void upload(T** d, const T* h, std::size_t n) {
    CUDA_CHECK(cudaMalloc(d, std::max<std::size_t>(n, 1) * sizeof(T)));
    if (n) CUDA_CHECK(cudaMemcpy(*d, h, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  SampleSet samples() const { return {kx, ky, kz, w, m}; }
};

// Runs one variant on a NaN-poisoned output; returns the host copy.
std::vector<cfloat> run(const KernelVariant& v, const Problem& p, DeviceProblem& d, TrigMode trig,
                        const LaunchConfig& cfg = {}) {
  CUDA_CHECK(cudaMemset(d.out, 0xff, d.points * sizeof(float2)));  // all-ones bits = NaN
  v.launch(d.samples(), out_grid(p), d.out, trig, cfg, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cfloat> h(d.points);
  CUDA_CHECK(cudaMemcpy(h.data(), d.out, d.points * sizeof(float2), cudaMemcpyDeviceToHost));
  return h;
}

// ||out - ref|| / ||ref|| (tests/test_util.hpp); NaN anywhere gives NaN.
double relerr(const std::vector<cfloat>& out, const std::vector<cdouble>& ref) { return fhd::test::rel_l2(out, ref); }

const TrigMode kModes[] = {TrigMode::Double, TrigMode::Single, TrigMode::Sfu};

}  // namespace

TEST_CASE("every kernel variant matches the float64 direct sum", "[gpu]") {
  if (!have_gpu()) FHD_SKIP("no CUDA device");
  std::random_device rd;
  const auto seed = (std::uint64_t(rd()) << 32) ^ rd();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  // Odd sizes, 2D and 3D, FhD and Q's doubled grid; 3301 samples = 3 tiles of
  // 1024 + 229 and 2 constant-memory chunks of 3200.
  std::vector<Problem> problems = {
      random_problem(rng, 7, 6, 5, 3301, false),  random_problem(rng, 33, 17, 1, 3301, false),
      random_problem(rng, 5, 4, 3, 1201, true),   random_problem(rng, 9, 8, 1, 2049, true),
  };
  for (const auto& p : problems) {
    const auto ref = reference(p);
    DeviceProblem d(p);
    for (const auto& v : kernel_table()) {
      for (TrigMode trig : kModes) {
        const double e = relerr(run(v, p, d, trig), ref);
        INFO(v.name << " trig " << fhd::to_string(trig) << " grid " << p.grid.nx << "x" << p.grid.ny << "x"
                    << p.grid.nz << (p.q ? " (Q)" : " (FhD)") << " relerr " << e);
        CHECK(std::isfinite(e));
        CHECK(e <= bound(v.name, trig));
      }
    }
  }
}

TEST_CASE("a tuned LaunchConfig computes the same result as the default one", "[gpu]") {
  if (!have_gpu()) FHD_SKIP("no CUDA device");
  std::mt19937_64 rng(std::random_device{}());
  const Problem p = random_problem(rng, 19, 13, 6, 2500, false);
  DeviceProblem d(p);
  const LaunchConfig tuned[] = {{128, 4, 4, 512}, {64, 1, 16, 96}, {512, 8, 2, 2048}, {96, 2, 1, 33}};
  for (const char* name : {"coarsened", "shared-tiles", "sfu", "constant-tiles", "registers", "separable-fp32"}) {
    const auto& v = find_kernel(name);
    const auto base = run(v, p, d, TrigMode::Sfu);
    for (const auto& cfg : tuned) {
      std::vector<cdouble> b(base.begin(), base.end());
      const double e = relerr(run(v, p, d, TrigMode::Sfu, cfg), b);
      INFO(name << " threads " << cfg.threads << " unroll " << cfg.unroll << " coarsen " << cfg.coarsen
                << " tile " << cfg.tile << " relerr vs default " << e);
      CHECK(e <= 2e-5);
    }
  }
}

TEST_CASE("no samples gives zeros, unknown names are refused, defaults exist", "[gpu]") {
  if (!have_gpu()) FHD_SKIP("no CUDA device");
  std::mt19937_64 rng(7);
  Problem p = random_problem(rng, 5, 5, 1, 0, false);
  DeviceProblem d(p);
  for (const auto& v : kernel_table()) {
    const auto out = run(v, p, d, TrigMode::Single);
    bool zeros = true;
    for (auto z : out) zeros = zeros && z == cfloat(0.f, 0.f);
    INFO(v.name);
    CHECK(zeros);
  }
  bool threw = false;
  try {
    find_kernel("no-such-kernel");
  } catch (const fhd::InputError&) {
    threw = true;
  }
  CHECK(threw);
  for (TrigMode t : kModes) CHECK(find_kernel(default_kernel(t)).name == default_kernel(t));
}
