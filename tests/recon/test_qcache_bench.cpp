// How long a cached Q takes to load (issue 26: a warm worker's cached scan).
// Hidden (runs only when named):
//   FHD_BENCH_N=128 FHD_BENCH_RUNS=5 build/tests_recon "[.qcache-bench]"
// Stores Q of an N^3 image (on the doubled grid: 256^3 complex64 = 134 MB at
// 128) once, reads it once so the page cache holds it, then alternates load_q
// with a plain read() of the same file into a reused buffer (the floor: what
// the kernel's copy out of the page cache costs) and into a new one (plus the
// page faults of memory never touched) and prints the median and range of
// each. A clock never fails it: the machine is shared and noisy.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "catch.hpp"
#include "recon/plan/qcache.hpp"

using namespace fhd;
namespace fs = std::filesystem;

namespace {

using fhd::bench::env_or;
using fhd::bench::seconds_since;

// The whole file (at most `size` bytes) into `buf` with read().
std::size_t plain_read(const std::string& path, char* buf, std::size_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  std::size_t got = 0;
  for (ssize_t n; (n = ::read(fd, buf + got, size - got)) > 0;) got += std::size_t(n);
  ::close(fd);
  return got;
}

void print_times(const char* what, std::vector<double> t, double bytes) {
  std::sort(t.begin(), t.end());
  const double median = t[t.size() / 2];
  std::printf("  %-34s median %7.1f ms  (%.1f-%.1f ms)  %5.2f GB/s\n", what, 1e3 * median, 1e3 * t.front(),
              1e3 * t.back(), bytes / median / 1e9);
}

}  // namespace

TEST_CASE("Q cache: load_q of a file in the page cache against a plain read", "[.qcache-bench]") {
  const int n = int(env_or("FHD_BENCH_N", 128));
  const int runs = int(std::max(1L, env_or("FHD_BENCH_RUNS", 5)));
  const ImageGrid g{n, n, n};
  const fs::path dir = fs::temp_directory_path() / ("fhd-qcache-bench-" + std::to_string(std::random_device{}()));
  Trajectory t;
  t.resize(1000);
  for (std::size_t i = 0; i < t.size(); ++i) t.kx[i] = 0.01f * float(i);
  const std::string key = q_key(t, {}, g, TrigMode::Single);
  {
    auto q = std::make_shared<QValues>(g.doubled().voxels());
    for (std::size_t i = 0; i < q->size(); ++i) (*q)[i] = cfloat(float(i % 1013), -float(i % 17));
    REQUIRE(store_q(dir.string(), key, q));
  }
  const std::string path = (dir / (key + ".q")).string();
  const double bytes = double(fs::file_size(path));
  std::vector<char> buf(std::size_t(bytes) + 1);
  REQUIRE(plain_read(path, buf.data(), buf.size()) == std::size_t(bytes));  // into the page cache
  REQUIRE(load_q(dir.string(), key));
  std::vector<double> load, floor, fresh;
  for (int r = 0; r < runs; ++r) {  // alternated, so load drift hits all alike
    auto t0 = std::chrono::steady_clock::now();
    auto q = load_q(dir.string(), key);  // freed after the clock stops, as a plan keeps it
    load.push_back(seconds_since(t0));
    CHECK(q != nullptr);
    t0 = std::chrono::steady_clock::now();
    plain_read(path, buf.data(), buf.size());
    floor.push_back(seconds_since(t0));
    // read() into memory never touched: the page faults a new buffer costs.
    std::unique_ptr<char[]> untouched(new char[buf.size()]);
    t0 = std::chrono::steady_clock::now();
    const std::size_t got = plain_read(path, untouched.get(), buf.size());
    fresh.push_back(seconds_since(t0));
    CHECK(got == std::size_t(bytes));
  }
  std::printf("Q cache file of %d^3 (%.0f MB), %d runs:\n", n, bytes / 1e6, runs);
  print_times("load_q", load, bytes);
  print_times("read() into a reused buffer", floor, bytes);
  print_times("read() into a new buffer", fresh, bytes);
  fs::remove_all(dir);
}

// Every scan computes its trajectory's key (q_key hashes every k value and weight).
TEST_CASE("Q cache: q_key of a trajectory", "[.qcache-bench]") {
  const std::size_t m = std::size_t(env_or("FHD_BENCH_M", 1 << 20));
  const int runs = int(std::max(1L, env_or("FHD_BENCH_RUNS", 5)));
  Trajectory t;
  t.resize(m);
  for (std::size_t i = 0; i < m; ++i) t.kx[i] = 1e-3f * float(i), t.ky[i] = -t.kx[i], t.kz[i] = 0.5f;
  const std::vector<float> w(m, 0.75f);
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string key = q_key(t, w, ImageGrid{128, 128, 128}, TrigMode::Single);
    times.push_back(seconds_since(t0));
    CHECK(!key.empty());
  }
  std::printf("q_key of %zu samples with weights (%.0f MB):\n", m, double(16 * m) / 1e6);
  print_times("q_key", times, double(16 * m));
}
