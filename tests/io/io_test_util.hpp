#pragma once
// Shared helpers for the io tests: scratch directories, random scans, shell commands.
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>

#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/xml.h>
#endif

#include "core/error.hpp"
#include "recon/problem/scan.hpp"
#include "test_util.hpp"

namespace fhd::test {

// A fresh directory under the system temp dir, removed with its contents at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int n = 0;
    path = std::filesystem::temp_directory_path() /
           ("fhd-io-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Number of entries in the directory (to check that no temporary is left behind).
  int entries() const {
    int n = 0;
    for (auto& e : std::filesystem::directory_iterator(path)) (void)e, ++n;
    return n;
  }
};

// Uniform random samples inside |k_axis| <= frac * N/2, random data.
inline Scan random_scan(ImageGrid g, std::size_t m, unsigned seed = 7, double frac = 1.0) {
  std::mt19937 rng(seed);
  auto uni = [&](double lo, double hi) { return float(std::uniform_real_distribution<double>(lo, hi)(rng)); };
  Scan s;
  s.grid = g;
  s.traj.resize(m);
  s.data.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    s.traj.kx[i] = uni(-frac * g.nx / 2.0, frac * g.nx / 2.0);
    s.traj.ky[i] = uni(-frac * g.ny / 2.0, frac * g.ny / 2.0);
    s.traj.kz[i] = g.nz > 1 ? uni(-frac * g.nz / 2.0, frac * g.nz / 2.0) : 0.0f;
    s.data[i] = {uni(-1, 1), uni(-1, 1)};
  }
  return s;
}

// Runs a shell command; returns its exit status and, if `out` is given, its stdout.
inline int run(const std::string& cmd, std::string* out = nullptr) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  std::string text;
  while (std::fgets(buf, sizeof buf, p)) text += buf;
  int rc = pclose(p);
  if (out) *out = text;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

inline bool on_path(const std::string& tool) { return run("command -v " + tool + " >/dev/null") == 0; }

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// The message of the InputError `f` throws; "no error" if it returns, "other: ..." for other exceptions.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "no error";
}

#if defined(FHD_HAVE_ISMRMRD)
// A minimal ISMRMRD header written with ISMRMRD's own API: the matrix, the FOV
// (mm) and, when `units` is not empty, the fhdrecon_traj_units parameter.
inline std::string ismrmrd_header(int nx, int ny, int nz, const std::string& units = "",
                                  std::array<float, 3> fov_mm = {200, 200, 200}) {
  ISMRMRD::IsmrmrdHeader h;
  h.experimentalConditions.H1resonanceFrequency_Hz = 63870000;
  ISMRMRD::Encoding e;
  e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(nx, ny, nz);
  e.encodedSpace.fieldOfView_mm = {fov_mm[0], fov_mm[1], fov_mm[2]};
  e.reconSpace = e.encodedSpace;
  e.trajectory = ISMRMRD::TrajectoryType::RADIAL;
  h.encoding.push_back(e);
  if (!units.empty()) {
    ISMRMRD::UserParameters u;
    u.userParameterString.push_back({"fhdrecon_traj_units", units});
    h.userParameters = u;
  }
  std::ostringstream s;
  ISMRMRD::serialize(h, s);
  return s.str();
}
#endif

}  // namespace fhd::test
