// `fhdrecon tune`: exhaustive search over a kernel's launch parameters
// (cuda/gather/tune.hpp). Two stages keep it within minutes at 128^3 x 1M: every
// configuration is timed once on a screening sample count (the rate per pair
// does not depend on M once a launch fills the GPU), then the fastest few and
// the heuristic default are re-timed at full size and the best of those wins.
#include "cuda/gather/tune.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <mutex>

#include "cuda/gather/bench.hpp"
#include "cuda/device/check.hpp"

namespace fhd::gpu {
namespace {

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// Times one configuration; false when it cannot run (resources, launch error).
bool try_time(const KernelVariant& v, const BenchInputs& in, std::size_t m, const OutGrid& g, float2* out,
              TrigMode trig, const LaunchConfig& c, int reps, double* ms) {
  try {
    *ms = time_variant(v, in, m, g, out, trig, c, reps).median;
    return true;
  } catch (const std::exception&) {
    cudaGetLastError();  // clear a launch error so the next config starts clean
    return false;
  }
}

}  // namespace

LaunchConfig tuned_config(const std::string& kernel, TrigMode trig, const std::string& dir) {
  if (tune::profiles_disabled()) return {};
  static std::mutex mu;
  static std::map<std::string, LaunchConfig> seen;
  const std::string folder = tune::profile_dir(dir);
  const std::string key = folder + "\n" + tune::entry_key(kernel, to_string(trig));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = seen.find(key); it != seen.end()) return it->second;
  LaunchConfig c{};
  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&p, dev) == cudaSuccess) {
    const auto got = tune::read_profile(tune::profile_path(folder, p.name), p.name,
                                        tune::kKernelVersion, kernel, to_string(trig));
    if (got) c = *got;
  } else {
    cudaGetLastError();
  }
  seen[key] = c;
  return c;
}

TuneResult run_tune(const TuneOptions& opt, const std::function<void(const std::string&)>& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const DeviceInfo dev = device_info("tune");
  const KernelVariant& v = find_kernel(opt.kernel);
  TuneResult r;
  r.gpu = dev.name, r.kernel = v.name;
  r.profile_path = tune::profile_path(tune::profile_dir(opt.cache_dir), dev.name);
  const std::string trig = to_string(opt.trig);
  if (!opt.ignore_profile) {
    if (auto p = tune::read_profile(r.profile_path, dev.name, tune::kKernelVersion, v.name, trig)) {
      r.from_profile = true;
      r.best = *p;
      return r;
    }
  }
  const OutGrid g{opt.matrix, opt.matrix, opt.matrix, opt.matrix, opt.matrix, opt.matrix};
  const double P = double(g.points());
  BenchInputs in(opt.samples, 2, opt.matrix, 7);
  float2* out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, g.points() * sizeof(float2)));
  struct Scored {
    LaunchConfig c;
    double ms;
  };
  std::vector<Scored> screened;
  const std::size_t ms_screen = std::min(opt.samples, opt.screen_samples);
  for (const auto& p : tune::enumerate(v.name, v.tunables)) {
    ++r.tried;
    double ms = 0;
    if (try_time(v, in, ms_screen, g, out, opt.trig, p, 1, &ms))
      screened.push_back({p, ms});
    else
      ++r.invalid;
  }
  if (log) log("screened " + std::to_string(r.tried) + " configs (" + std::to_string(r.invalid) + " invalid)");
  std::sort(screened.begin(), screened.end(), [](const Scored& a, const Scored& b) { return a.ms < b.ms; });
  if (screened.size() > std::size_t(opt.finalists)) screened.resize(opt.finalists);
  // Full size: the finalists and the heuristic default, same inputs and reps.
  if (!try_time(v, in, opt.samples, g, out, opt.trig, LaunchConfig{}, opt.reps, &r.heuristic_ms)) {
    cudaFree(out);
    throw DeviceError("tune: the default configuration of " + v.name + " does not run");
  }
  r.best = LaunchConfig{}, r.best_ms = r.heuristic_ms;
  for (const auto& s : screened) {
    double ms = 0;
    if (!try_time(v, in, opt.samples, g, out, opt.trig, s.c, opt.reps, &ms)) continue;
    r.finalists.push_back({s.c, ms});
    if (ms < r.best_ms) r.best = s.c, r.best_ms = ms;
  }
  CUDA_CHECK(cudaFree(out));
  r.heuristic_pairs_per_s = P * opt.samples / (r.heuristic_ms * 1e-3);
  r.best_pairs_per_s = P * opt.samples / (r.best_ms * 1e-3);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  tune::write_profile(r.profile_path, dev.name, tune::kKernelVersion, v.name, trig, r.best,
                      {{"pairs_per_s", r.best_pairs_per_s},
                       {"default_pairs_per_s", r.heuristic_pairs_per_s},
                       {"matrix", opt.matrix},
                       {"samples", opt.samples},
                       {"configs_tried", r.tried},
                       {"configs_invalid", r.invalid},
                       {"date", today()}});
  return r;
}

}  // namespace fhd::gpu
