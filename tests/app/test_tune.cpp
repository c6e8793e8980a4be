// The CUDA-free half of tuning (cuda/gather/tune.hpp): search-space enumeration and
// the profile's read/write/version rules. Runs in the CPU-only build.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "catch.hpp"
#include "cuda/gather/tune.hpp"

namespace {

std::string temp_dir() {
  std::mt19937_64 rng(std::random_device{}());
  auto d = std::filesystem::temp_directory_path() / ("fhd-tune-test-" + std::to_string(rng()));
  std::filesystem::create_directories(d);
  return d.string();
}

}  // namespace

TEST_CASE("tune: enumeration is the product of the kernel's tunables", "[tune]") {
  using fhd::tune::enumerate;
  const auto all = enumerate("coarsened", {"threads", "unroll", "coarsen", "tile"});
  CHECK(all.size() == std::size_t(5 * 4 * 5 * 5));
  std::set<std::tuple<int, int, int, int>> distinct;
  for (const auto& p : all) distinct.insert({p.threads, p.unroll, p.coarsen, p.tile});
  CHECK(distinct.size() == all.size());
  const auto thr = enumerate("gather", {"threads"});
  REQUIRE(thr.size() == std::size_t(5));
  CHECK(thr[0].unroll == 0);
  CHECK(thr[0].tile == 0);
  CHECK(enumerate("constant-tiles", {"threads", "tile"}).size() == std::size_t(15));
  CHECK(enumerate("separable-fp32", {"tile", "coarsen"}).size() == std::size_t(12));
  CHECK(enumerate("x", {}).size() == std::size_t(1));  // no tunables: the default only
}

TEST_CASE("tune: profile round trip, mismatches and bad files mean no profile", "[tune]") {
  using namespace fhd::tune;
  const std::string dir = temp_dir();
  const std::string path = profile_path(dir, "NVIDIA H100 80GB HBM3");
  CHECK(path.find(' ') == std::string::npos);
  CHECK_FALSE(read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu").has_value());  // absent

  const fhd::LaunchConfig p{128, 4, 8, 2048};
  write_profile(path, "gpu", kKernelVersion, "coarsened", "sfu", p, {{"pairs_per_s", 3.1e12}});
  write_profile(path, "gpu", kKernelVersion, "shared-tiles", "single", fhd::LaunchConfig{256, 2, 0, 512});
  auto got = read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu");
  REQUIRE(got.has_value());
  CHECK(*got == p);
  CHECK(read_profile(path, "gpu", kKernelVersion, "shared-tiles", "single").has_value());
  CHECK_FALSE(read_profile(path, "gpu", kKernelVersion, "coarsened", "single").has_value());
  CHECK_FALSE(read_profile(path, "other gpu", kKernelVersion, "coarsened", "sfu").has_value());
  CHECK_FALSE(read_profile(path, "gpu", "fhd-kernels-0", "coarsened", "sfu").has_value());

  // A new version replaces the file: the old entries go.
  write_profile(path, "gpu", "fhd-kernels-2", "coarsened", "sfu", p);
  CHECK_FALSE(read_profile(path, "gpu", "fhd-kernels-2", "shared-tiles", "single").has_value());
  CHECK(read_profile(path, "gpu", "fhd-kernels-2", "coarsened", "sfu").has_value());

  // Values outside the search space and broken files are ignored.
  write_profile(path, "gpu", kKernelVersion, "coarsened", "sfu", fhd::LaunchConfig{100, 3, 7, 5});
  CHECK_FALSE(read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu").has_value());
  std::ofstream(path) << "{ not json";
  CHECK_FALSE(read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu").has_value());
  std::ofstream(path) << R"({"gpu":"gpu","version":")" << kKernelVersion
                      << R"(","entries":{"coarsened/sfu":{"threads":"many"}}})";
  CHECK_FALSE(read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu").has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("tune: FHDRECON_NO_TUNE and the cache directory rule", "[tune]") {
  using namespace fhd::tune;
  ::setenv("FHDRECON_NO_TUNE", "1", 1);
  CHECK(profiles_disabled());
  ::setenv("FHDRECON_NO_TUNE", "0", 1);
  CHECK_FALSE(profiles_disabled());
  ::unsetenv("FHDRECON_NO_TUNE");
  CHECK_FALSE(profiles_disabled());
  CHECK(profile_dir("/some/dir") == "/some/dir");
  CHECK_FALSE(profile_dir("").empty());
}

TEST_CASE("tune: a malformed profile is no profile, with one warning and no exception", "[tune]") {
  using namespace fhd::tune;
  const std::string dir = temp_dir();
  const std::string path = profile_path(dir, "gpu");
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto old = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("t", sink));
  const std::string head = std::string(R"({"gpu":"gpu","version":")") + kKernelVersion + R"(",)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {head + R"("entries":{"coarsened/sfu":{"threads":1e30}}})", "threads = 1e+30"},
      {head + R"("entries":{"coarsened/sfu":{"threads":2.5}}})", "threads = 2.5"},
      {head + R"("entries":{"coarsened/sfu":{"tile":-1024}}})", "tile = -1024"},
      {head + R"("entries":{"coarsened/sfu":[256]}})", "entry is not an object"},
      {head + R"("entries":[1,2]})", "entries is not an object"},
      {R"({"gpu":7,"version":[],"entries":{}})", "gpu and version must be strings"},
      {"[1,2,3]", "not a JSON object"},
  };
  for (const auto& [text, why] : cases) {
    std::ofstream(path) << text;
    log.str("");
    std::optional<fhd::LaunchConfig> got;
    REQUIRE_NOTHROW(got = read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu"));
    CHECK_FALSE(got.has_value());
    CHECK_NOTHROW(read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu"));  // asked again: no second warning
    const std::string said = log.str();
    INFO(text << " -> " << said);
    CHECK(said.find(why) != std::string::npos);
    CHECK(std::count(said.begin(), said.end(), '\n') == 1);
    // Writing a new entry over a malformed file replaces it instead of throwing.
    REQUIRE_NOTHROW(write_profile(path, "gpu", kKernelVersion, "coarsened", "sfu", fhd::LaunchConfig{128, 0, 0, 0}));
    CHECK(read_profile(path, "gpu", kKernelVersion, "coarsened", "sfu") == fhd::LaunchConfig{128, 0, 0, 0});
  }
  spdlog::set_default_logger(old);
  std::filesystem::remove_all(dir);
}
