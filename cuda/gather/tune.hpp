#pragma once
// Launch-parameter tuning of the cmpFhD kernels (`fhdrecon tune`) and the
// profile it leaves behind. Everything above the FHD_HAVE_CUDA line is plain
// C++ (header-only, no CUDA headers), so the CPU-only build compiles and tests
// the search-space enumeration and the profile's read/write/version rules
// (tests/app/test_tune.cpp). The search itself and tuned_config() need CUDA.
//
// Profile: <cache dir>/tune-<gpu name>.json
//   {"gpu": "...", "version": "<kKernelVersion>",
//    "entries": {"coarsened/sfu": {"threads":256,"unroll":2,"coarsen":8,"tile":1024,
//                                   "pairs_per_s":..., "default_pairs_per_s":..., ...}}}
// An entry counts only when the file's gpu and version match and its values
// lie in the search space; anything else (missing file, bad JSON, old
// version) means "no profile": the kernels' defaults.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <spdlog/spdlog.h>
#include <string>
#include <vector>
#include "core/launch_config.hpp"
#include "recon/plan/qcache.hpp"

namespace fhd::tune {

// Bump when a kernel's code changes enough that old timings mean nothing.
inline constexpr const char* kKernelVersion = "fhd-kernels-1";

// Values tried per tunable. The tile and coarsen lists depend on the kernel:
// constant memory holds at most 3200 samples; separable's "tile" is the GEMM
// chunk K and its "coarsen" picks the GEMM (1 = Cgemm, 3 = Cgemm3m).
inline std::vector<int> candidate_values(const std::string& tunable, const std::string& kernel) {
  const bool separable = kernel.rfind("separable", 0) == 0;
  if (tunable == "threads") return {64, 128, 256, 512, 1024};
  if (tunable == "unroll") return {1, 2, 4, 8};
  if (tunable == "coarsen") return separable ? std::vector<int>{1, 3} : std::vector<int>{1, 2, 4, 8, 16};
  if (tunable == "tile") {
    if (kernel == "constant-tiles") return {800, 1600, 3200};
    if (separable) return {256, 512, 1024, 2048, 4096, 8192};
    return {256, 512, 1024, 2048, 4096};
  }
  return {};
}

// The cartesian product over the kernel's tunables (others stay 0 = default).
inline std::vector<LaunchConfig> enumerate(const std::string& kernel, const std::vector<std::string>& tunables) {
  std::vector<LaunchConfig> out{LaunchConfig{}};
  for (const auto& t : tunables) {
    const auto values = candidate_values(t, kernel);
    if (values.empty()) continue;
    std::vector<LaunchConfig> next;
    for (const auto& p : out)
      for (int v : values) {
        LaunchConfig q = p;
        (t == "threads" ? q.threads : t == "unroll" ? q.unroll : t == "coarsen" ? q.coarsen : q.tile) = v;
        next.push_back(q);
      }
    out.swap(next);
  }
  return out;
}

// True when every non-zero field is one of the kernel's candidate values.
inline bool in_space(const std::string& kernel, const LaunchConfig& p) {
  auto ok = [&](const char* t, int v) {
    if (v == 0) return true;
    for (int c : candidate_values(t, kernel))
      if (c == v) return true;
    return false;
  };
  return ok("threads", p.threads) && ok("unroll", p.unroll) && ok("coarsen", p.coarsen) && ok("tile", p.tile);
}

// Where profiles live unless the caller names a directory: the cache root of
// recon/plan/qcache.hpp (the Q cache's rule).
inline std::string default_profile_dir() {
  const std::string root = default_cache_root();
  return root.empty() ? ".fhdrecon-cache" : root;
}

// `chosen`, or the default when it is "".
inline std::string profile_dir(const std::string& chosen) {
  return chosen.empty() ? default_profile_dir() : chosen;
}

// FHDRECON_NO_TUNE=1 (or any value but "" and "0"): ignore profiles.
inline bool profiles_disabled() {
  const char* v = std::getenv("FHDRECON_NO_TUNE");
  return v && *v && std::string(v) != "0";
}

inline std::string profile_path(const std::string& dir, const std::string& gpu) {
  std::string safe;
  for (char c : gpu) safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return dir + "/tune-" + safe + ".json";
}

inline std::string entry_key(const std::string& kernel, const std::string& trig) { return kernel + "/" + trig; }

// The whole file, or an empty object when absent or unreadable.
inline nlohmann::json load_profile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}

// A string member, or "" when absent or not a string (never throws).
inline std::string string_field(const nlohmann::json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// One warning per (file, problem) per process: a broken profile is a nuisance,
// never a failure, and never repeated for each kernel that looks it up.
inline void warn_profile(const std::string& path, const std::string& why) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (said.insert(path + "\n" + why).second)
    spdlog::warn("tuning profile {}: {}; using the kernels' defaults", path, why);
}

// The entry's LaunchConfig, or nullopt with *why set when it is malformed: a field
// that is not an integer (a string, 1e30, 2.5) or lies outside the search space.
inline std::optional<LaunchConfig> parse_entry(const nlohmann::json& e, const std::string& kernel, std::string* why) {
  if (!e.is_object()) return *why = "entry is not an object", std::nullopt;
  LaunchConfig p;
  int* field[4] = {&p.threads, &p.unroll, &p.coarsen, &p.tile};
  const char* name[4] = {"threads", "unroll", "coarsen", "tile"};
  for (int i = 0; i < 4; ++i) {
    const auto it = e.find(name[i]);
    if (it == e.end()) continue;
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > (1 << 20))
      return *why = std::string(name[i]) + " = " + it->dump() + " is not a small non-negative integer", std::nullopt;
    *field[i] = int(it->get<std::int64_t>());
  }
  if (!in_space(kernel, p)) return *why = "values outside " + kernel + "'s search space", std::nullopt;
  return p;
}

// The entry for (kernel, trig) when the file is this GPU's and version's. A
// missing file or entry, or another GPU's or version's file, is silently no
// profile; a malformed one (bad JSON, wrong types, absurd values) is no profile
// with one warning. Never throws.
inline std::optional<LaunchConfig> read_profile(const std::string& path, const std::string& gpu,
                                          const std::string& version, const std::string& kernel,
                                          const std::string& trig) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  std::string why;
  if (!j.is_object()) why = "not a JSON object";
  else if (!j.contains("gpu") || !j["gpu"].is_string() || !j.contains("version") || !j["version"].is_string())
    why = "gpu and version must be strings";
  if (!why.empty()) return warn_profile(path, why), std::nullopt;
  if (string_field(j, "gpu") != gpu || string_field(j, "version") != version) return std::nullopt;
  const auto entries = j.find("entries");
  if (entries == j.end() || !entries->is_object()) return warn_profile(path, "entries is not an object"), std::nullopt;
  const auto e = entries->find(entry_key(kernel, trig));
  if (e == entries->end()) return std::nullopt;
  const auto p = parse_entry(*e, kernel, &why);
  if (!p) warn_profile(path, entry_key(kernel, trig) + ": " + why);
  return p;
}

// Adds or replaces one entry. A file for another GPU or version is replaced
// whole. Written to a temporary name and renamed (never half a file).
inline void write_profile(const std::string& path, const std::string& gpu, const std::string& version,
                          const std::string& kernel, const std::string& trig, const LaunchConfig& p,
                          const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json j = load_profile(path);
  if (string_field(j, "gpu") != gpu || string_field(j, "version") != version || !j.contains("entries") ||
      !j["entries"].is_object())
    j = {{"gpu", gpu}, {"version", version}, {"entries", nlohmann::json::object()}};
  nlohmann::json e = extra;
  e.update({{"threads", p.threads}, {"unroll", p.unroll}, {"coarsen", p.coarsen}, {"tile", p.tile}});
  j["entries"][entry_key(kernel, trig)] = e;
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump(2) << "\n";
    if (!f.flush()) throw std::runtime_error("tune: cannot write " + tmp);
  }
  std::filesystem::rename(tmp, target);
}

}  // namespace fhd::tune

#ifdef FHD_HAVE_CUDA
#include <functional>

#include "core/gpu_reports.hpp"
#include "cuda/gather/fhd_kernels.hpp"

namespace fhd::gpu {

// The profile's config for (kernel, trig) on this GPU when present and valid,
// else LaunchConfig{} (the variant's defaults). `dir` holds the profiles (""
// = tune::default_profile_dir()). FHDRECON_NO_TUNE=1 bypasses. Each profile
// is read once per process and dir/kernel/trig.
LaunchConfig tuned_config(const std::string& kernel, TrigMode trig, const std::string& dir);

// Options and result: core/gpu_reports.hpp.
using fhd::TuneOptions;
using fhd::TuneResult;

TuneResult run_tune(const TuneOptions& opt, const std::function<void(const std::string&)>& log = {});

}  // namespace fhd::gpu
#endif
