// What a warm worker's Q memory costs per scan (issue 26): keep (after a disk
// read) and find (every later scan of the trajectory) of one Q of an N^3
// image (256^3 complex64 = 134 MB at 128). Hidden (runs only when named):
//   FHD_BENCH_N=128 FHD_BENCH_RUNS=5 build/tests_app "[.qmemory-bench]"
// Prints the median and range; a clock never fails it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/batch_warm.hpp"
#include "bench_util.hpp"
#include "catch.hpp"

using namespace fhd;

namespace {

using fhd::bench::env_or;
using fhd::bench::seconds_since;

void print_times(const char* what, std::vector<double> t) {
  std::sort(t.begin(), t.end());
  std::printf("  %-8s median %8.3f ms  (%.3f-%.3f ms)\n", what, 1e3 * t[t.size() / 2], 1e3 * t.front(),
              1e3 * t.back());
}

}  // namespace

TEST_CASE("Q memory: keep and find of one Q", "[.qmemory-bench]") {
  const int n = int(env_or("FHD_BENCH_N", 128));
  const int runs = int(std::max(1L, env_or("FHD_BENCH_RUNS", 5)));
  const std::size_t count = ImageGrid{n, n, n}.doubled().voxels();
  std::vector<double> keep, find;
  for (int r = 0; r < runs; ++r) {
    auto q = std::make_shared<const QValues>(count, cfloat(float(r), 1.0f));  // as load_q hands it over
    app::QMemoryCache memory(std::size_t(4) << 30);
    auto t0 = std::chrono::steady_clock::now();
    memory.keep("k", q);
    keep.push_back(seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    auto hit = memory.find("k");  // kept past the clock, as a plan keeps it
    find.push_back(seconds_since(t0));
    CHECK(hit == q);
  }
  std::printf("Q memory, one Q of %d^3 (%.0f MB), %d runs:\n", n, double(count * sizeof(cfloat)) / 1e6, runs);
  print_times("keep", keep);
  print_times("find", find);
}
