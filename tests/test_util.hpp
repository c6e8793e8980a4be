#pragma once
// Helpers shared by every test area: random problems, error norms, running
// the built CLI. Area-specific helpers live in tests/<area>/*_util.hpp.
#include <sys/wait.h>

#include <cmath>
#include <complex>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "catch.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::test {

// The lines logged while alive (the default logger swapped for a ring buffer).
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(32)), old_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(old_); }
  std::vector<std::string> lines() { return sink_->last_formatted(); }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> old_;
};

// Uniform random k in [-N/2, N/2) on each axis (kz = 0 for a 2D grid).
inline Trajectory random_trajectory(std::size_t m, const ImageGrid& g, unsigned seed) {
  std::mt19937 rng(seed);
  auto band = [](int n) { return std::uniform_real_distribution<float>(-0.5f * n, 0.5f * n); };
  auto dx = band(g.nx), dy = band(g.ny), dz = band(g.nz);
  Trajectory t;
  t.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    t.kx[i] = dx(rng);
    t.ky[i] = dy(rng);
    t.kz[i] = g.nz > 1 ? dz(rng) : 0.0f;
  }
  return t;
}

inline std::vector<cfloat> random_complex(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<cfloat> v(n);
  for (auto& x : v) x = {d(rng), d(rng)};
  return v;
}

// A std::vector<cfloat> of any container's values (Plan::q_host()'s QValues).
template <class V>
std::vector<cfloat> to_vector(const V& v) {
  return std::vector<cfloat>(v.begin(), v.end());
}

// ||a - ref|| / ||ref|| in double; a size mismatch or a NaN fails every `<`.
template <class A, class AllocA, class B, class AllocB>
double rel_l2(const std::vector<A, AllocA>& a, const std::vector<B, AllocB>& ref) {
  if (a.size() != ref.size()) return HUGE_VAL;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(cdouble(a[i]) - cdouble(ref[i]));
    den += std::norm(cdouble(ref[i]));
  }
  return std::sqrt(num / den);
}

// One run of the built fhdrecon (FHDRECON_EXE): exit code and stdout+stderr.
struct CliRun {
  int code = -1;
  std::string out;
};

// `env`: NAME=VALUE assignments for its environment (e.g. test-only fault switches).
// How often `what` appears in `s` (overlaps counted).
inline int occurrences(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Lines of a command's output (its newlines).
inline int line_count(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

inline CliRun run_cli(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " + std::string(FHDRECON_EXE) + " " + args + " 2>&1";
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs a shell script (bash), returns its output; FHD is the executable.
// A refused run: exit 2 and one line, "fhdrecon: error: ...", holding `must_contain`.
inline void one_line_error(const CliRun& r, const std::string& must_contain) {
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(line_count(r.out) == 1);
  CHECK(r.out.back() == '\n');  // the one line, ended: nothing after it
  CHECK(r.out.rfind("fhdrecon: error: ", 0) == 0);
  CHECK(r.out.find(must_contain) != std::string::npos);
}

inline std::string shell(const std::string& script) {
  std::string out;
  FILE* p = popen(("FHD=" + std::string(FHDRECON_EXE) + " bash -c '" + script + "' 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  return out;
}

// The status `echo rc=$?` printed after a command (-1 when missing).
inline int exit_status(const std::string& out, const std::string& tag = "rc=") {
  const std::size_t at = out.rfind(tag);
  return at == std::string::npos ? -1 : std::atoi(out.c_str() + at + tag.size());
}

// An empty path in the temporary directory, named fhdrecon-<prefix>-<name>.
inline std::filesystem::path fresh_temp_dir(const std::string& prefix, const std::string& name) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / ("fhdrecon-" + prefix + "-" + name);
  std::filesystem::remove_all(d);
  return d;
}

}  // namespace fhd::test
