// The kernel ladder benchmark (cuda/gather/bench.hpp).
#include <cstdint>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "cuda/gather/bench.hpp"
#include "cuda/device/blocks.hpp"
#include "cuda/device/check.hpp"
#include "cuda/gather/fhd_launchers.cuh"
#include "recon/gather/direct_sum.hpp"
#include "recon/eval/metrics.hpp"

namespace fhd::gpu {

DeviceInfo device_info(const char* who) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) throw DeviceError(std::string(who) + ": no usable GPU: " + cudaGetErrorString(e));
  if (count == 0) throw DeviceError(std::string(who) + ": no usable GPU: no CUDA device found");
  int dev = 0, khz = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  DeviceInfo d;
  d.name = p.name;
  d.sms = sm_count();
  d.clock_hz = khz * 1e3;
  d.sfu_ceiling = d.sms * 16.0 * d.clock_hz / 2.0;
  d.fp32_ceiling = d.sms * 128.0 * d.clock_hz / 8.0;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  return d;
}

BenchInputs::BenchInputs(std::size_t m, int sets, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> band(-0.5f * n, 0.5f * n);
  std::normal_distribution<float> gauss;
  std::vector<float> kx(m), ky(m), kz(m), w(2 * m);
  for (int s = 0; s < sets; ++s) {
    for (std::size_t i = 0; i < m; ++i) kx[i] = band(rng), ky[i] = band(rng), kz[i] = band(rng);
    for (auto& v : w) v = gauss(rng);
    auto up = [&](const float* h, std::size_t bytes) {
      void* d = nullptr;
      CUDA_CHECK(cudaMalloc(&d, std::max<std::size_t>(bytes, 4)));
      CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
      return d;
    };
    kx_.push_back(static_cast<float*>(up(kx.data(), m * 4)));
    ky_.push_back(static_cast<float*>(up(ky.data(), m * 4)));
    kz_.push_back(static_cast<float*>(up(kz.data(), m * 4)));
    w_.push_back(static_cast<float2*>(up(w.data(), m * 8)));
    if (s == 0) hkx = kx, hky = ky, hkz = kz, hw = w;
  }
}

BenchInputs::~BenchInputs() {
  for (std::size_t i = 0; i < kx_.size(); ++i) cudaFree(kx_[i]), cudaFree(ky_[i]), cudaFree(kz_[i]), cudaFree(w_[i]);
}

SampleSet BenchInputs::set(int i, std::size_t m) const {
  return {kx_[i], ky_[i], kz_[i], w_[i], m};
}

Timing time_variant(const KernelVariant& v, const BenchInputs& in, std::size_t m, const OutGrid& g,
                    float2* out, TrigMode trig, const LaunchConfig& cfg, int reps) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> ms;
  try {
    v.launch(in.set(0, m), g, out, trig, cfg, nullptr);  // warm-up: module load, handles, pools
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int r = 0; r < reps; ++r) {
      CUDA_CHECK(cudaEventRecord(a, nullptr));
      v.launch(in.set((r + 1) % in.sets(), m), g, out, trig, cfg, nullptr);
      CUDA_CHECK(cudaEventRecord(b, nullptr));
      CUDA_CHECK(cudaEventSynchronize(b));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
      ms.push_back(t);
    }
  } catch (...) {
    cudaEventDestroy(a), cudaEventDestroy(b);
    throw;
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

void last_launch_resources(const DeviceInfo& dev, int* registers, double* occupancy) {
  const LaunchRecord r = last_launch();
  *registers = 0, *occupancy = 0;
  if (!r.fn) return;
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, r.fn));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, r.fn, r.threads, r.shmem));
  *registers = attr.numRegs;
  *occupancy = double(blocks) * r.threads / dev.max_threads_per_sm;
}

double subset_relerr(const BenchInputs& in, std::size_t m, const OutGrid& g, const float2* out_dev,
                     int count, std::uint64_t seed) {
  if (g.lx != g.nx || g.ly != g.ny || g.lz != g.nz)
    throw std::invalid_argument("subset_relerr: checks FhD grids (one point per voxel) only");
  const std::size_t P = g.points();
  std::vector<cfloat> out(P);
  CUDA_CHECK(cudaMemcpy(out.data(), out_dev, P * sizeof(float2), cudaMemcpyDeviceToHost));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, P - 1);
  std::vector<std::size_t> pts(std::min<std::size_t>(count, P));
  for (auto& p : pts) p = pick(rng);
  // The float64 reference of recon/ on the first m samples of set 0.
  Trajectory t;
  t.kx.assign(in.hkx.begin(), in.hkx.begin() + m);
  t.ky.assign(in.hky.begin(), in.hky.begin() + m);
  t.kz.assign(in.hkz.begin(), in.hkz.begin() + m);
  std::vector<cfloat> mu(m);
  for (std::size_t j = 0; j < m; ++j) mu[j] = {in.hw[2 * j], in.hw[2 * j + 1]};
  return relative_error_at(out, pts, fhd_reference(t, mu, ImageGrid{g.nx, g.ny, g.nz}, pts));
}

namespace {

BenchRow bench_one(const KernelVariant& v, const BenchOptions& opt, const DeviceInfo& dev,
                   const BenchInputs& in, const OutGrid& g, float2* out) {
  BenchRow row;
  row.name = v.name, row.step = v.step, row.direct = v.direct;
  row.cfg = opt.config_for ? opt.config_for(v.name) : LaunchConfig{};
  const double P = double(g.points());
  row.samples = opt.samples;
  // The first rungs (1-4) are orders of magnitude slower: fewer samples.
  if (opt.slow_pair_budget > 0 && v.step <= 4 && P * opt.samples > opt.slow_pair_budget) {
    const double budget = v.step == 1 ? opt.slow_pair_budget / 32 : opt.slow_pair_budget;
    row.samples = std::max<std::size_t>(256, std::size_t(budget / P));
  }
  try {
    const Timing t = time_variant(v, in, row.samples, g, out, opt.trig, row.cfg, opt.reps);
    row.ms = t.median, row.ms_min = t.min, row.ms_max = t.max;
    row.pairs_per_s = P * row.samples / (t.median * 1e-3);
    row.pct_sfu = 100 * row.pairs_per_s / dev.sfu_ceiling;
    row.pct_fp32 = 100 * row.pairs_per_s / dev.fp32_ceiling;
    last_launch_resources(dev, &row.registers, &row.occupancy);
    // The check: input set 0 on a poisoned output.
    CUDA_CHECK(cudaMemset(out, 0xff, g.points() * sizeof(float2)));
    v.launch(in.set(0, row.samples), g, out, opt.trig, row.cfg, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    row.relerr = subset_relerr(in, row.samples, g, out, opt.check_voxels, opt.seed + 17);
  } catch (const std::exception& e) {
    cudaGetLastError();
    row.error = e.what();
  }
  return row;
}

}  // namespace

BenchResult run_bench(const BenchOptions& opt, const std::function<void(const BenchRow&)>& progress) {
  BenchResult res;
  res.device = device_info("bench");
  res.options = opt;
  if (opt.matrix < 1 || opt.samples < 1 || opt.reps < 1)
    throw InputError("bench", "size", std::to_string(opt.matrix), "matrix, samples and reps must be >= 1");
  std::vector<const KernelVariant*> chosen;
  for (const auto& v : kernel_table())
    if (opt.kernels.empty() || std::find(opt.kernels.begin(), opt.kernels.end(), v.name) != opt.kernels.end())
      chosen.push_back(&v);
  for (const auto& k : opt.kernels) find_kernel(k);  // unknown names: InputError
  const OutGrid g{opt.matrix, opt.matrix, opt.matrix, opt.matrix, opt.matrix, opt.matrix};
  res.points = g.points();
  BenchInputs in(opt.samples, std::max(1, opt.input_sets), opt.matrix, opt.seed);
  float2* out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, g.points() * sizeof(float2)));
  try {
    for (const auto* v : chosen) {
      res.rows.push_back(bench_one(*v, opt, res.device, in, g, out));
      if (progress) progress(res.rows.back());
    }
  } catch (...) {
    cudaFree(out);
    throw;
  }
  CUDA_CHECK(cudaFree(out));
  return res;
}

}  // namespace fhd::gpu
