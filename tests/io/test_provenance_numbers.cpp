// /provenance attributes that are not strings: a number is read as its text,
// anything else skipped with a warning; the scan is never refused.
#include <hdf5.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io/scan_file.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

// Adds attribute `name` of `file_type` with `n` values (a scalar when n == 0) to /provenance.
void add_attr(hid_t group, const char* name, hid_t file_type, hid_t mem_type, const void* value, hsize_t n = 0) {
  hid_t sp = n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  hid_t a = H5Acreate2(group, name, file_type, sp, H5P_DEFAULT, H5P_DEFAULT);
  REQUIRE(a >= 0);
  REQUIRE(H5Awrite(a, mem_type, value) >= 0);
  H5Aclose(a);
  H5Sclose(sp);
}

}  // namespace

TEST_CASE("provenance numbers are read as text, other classes skipped with a warning", "[io][scan_file][reader-sweep]") {
  TempDir dir;
  const std::string path = dir.file("prov.h5");
  Scan s = random_scan({16, 12, 1}, 40);
  s.provenance = {{"tool", "x"}};
  write_scan(path, s);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  hid_t g = H5Gopen2(f, "provenance", H5P_DEFAULT);
  REQUIRE(g >= 0);
  const std::int64_t seed = 5;  // h5py's attrs['seed'] = 5
  const std::int8_t small = -3;
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max();
  const float te = 0.1f;
  const double tr = 2.5;
  const std::int32_t dims[3] = {16, 12, 1};
  add_attr(g, "seed", H5T_STD_I64LE, H5T_NATIVE_INT64, &seed);
  add_attr(g, "small", H5T_STD_I8BE, H5T_NATIVE_INT8, &small);
  add_attr(g, "big", H5T_STD_U64LE, H5T_NATIVE_UINT64, &big);
  add_attr(g, "te", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, &te);
  add_attr(g, "tr", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, &tr);
  add_attr(g, "dims", H5T_STD_I32LE, H5T_NATIVE_INT32, dims, 3);
  H5Gclose(g);
  H5Fclose(f);

  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  const auto old = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  std::vector<Scan> r;
  const std::string error = error_of([&] { r = read_scan_coils(path); });
  spdlog::set_default_logger(old);
  REQUIRE(error == "no error");
  const auto& p = r[0].provenance;
  CHECK(p.at("tool") == "x");
  CHECK(p.at("seed") == "5");
  CHECK(p.at("small") == "-3");
  CHECK(p.at("big") == "18446744073709551615");
  CHECK(p.at("te") == "0.1");  // the float's shortest text, not 0.10000000149...
  CHECK(p.at("tr") == "2.5");
  CHECK(p.count("dims") == 0);
  const auto lines = sink->last_formatted();
  REQUIRE(lines.size() == 1);
  CHECK(contains(lines[0], path + ": /provenance attribute dims = integer array: not a string or one number; skipped"));
}
