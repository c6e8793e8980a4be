// Field maps and sample times in the scan files (docs/formats.md): our HDF5
// round trip, a separate --field-map file, ISMRMRD's sample_time_us and TE,
// and bad values refused with the file and field named.
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "catch.hpp"
#include "io/scan_file.hpp"
#include "io_test_util.hpp"
#ifdef FHD_HAVE_ISMRMRD
#include "io/ismrmrd_io.hpp"
#endif

using namespace fhd;
using namespace fhd::test;

namespace {

// Readouts of 8 samples, 1 ms apart from TE = 2 ms; a field varying along x.
Scan scan_with_field() {
  Scan s = random_scan({8, 8, 1}, 64, 3);
  for (std::size_t n = 0; n < s.grid.voxels(); ++n) s.field.hz.push_back(float(10.0 * double(n % 8) - 35.0));
  for (std::size_t m = 0; m < s.traj.size(); ++m) s.field.times.push_back(float(0.002 + 0.001 * double(m % 8)));
  return s;
}

void write_floats(const std::string& path, const char* name, const std::vector<float>& v) {
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t n = v.size();
  hid_t sp = H5Screate_simple(1, &n, nullptr);
  hid_t ds = H5Dcreate2(f, name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Dclose(ds);
  H5Sclose(sp);
  H5Fclose(f);
}

// Overwrites dataset `name` with v (its size), or deletes it when v is empty:
// a file our writers would refuse to write.
void edit_floats(const std::string& path, const char* name, const std::vector<float>& v) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (v.empty()) {
    H5Ldelete(f, name, H5P_DEFAULT);
  } else {
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    H5Dclose(ds);
  }
  H5Fclose(f);
}

// Each writer refuses what validate_field refuses, names the field and writes no file.
void check_writer_refuses(TempDir& dir, const std::string& name,
                          const std::function<void(const std::string&, const Scan&)>& write) {
  const auto refused = [&](const Scan& s, const std::string& message) {
    const std::string path = dir.file(name);
    CHECK_THROWS_WITH(write(path, s), Catch::Contains(path) && Catch::Contains(message));
    CHECK(!std::filesystem::exists(path));
  };
  Scan s = scan_with_field();
  s.field.times.resize(1);  // the writers read 64 times from it before
  refused(s, "sample_times length = 1: must equal the number of trajectory samples 64");
  s.field = {};
  s.field.times.resize(1);  // without a field map too
  refused(s, "sample_times length = 1");
  s.field.times.assign(64, 0.f);
  s.field.times[3] = std::nanf("");
  refused(s, "sample time[3] = nan: must be seconds in [0, 10]");
  s = scan_with_field();
  s.field.hz.resize(63);
  refused(s, "field_map length = 63: must equal the grid's 64 voxels");
  s = scan_with_field();
  s.field.hz[5] = std::nanf("");
  refused(s, "field map[5]");
  s = scan_with_field();
  s.field.times.clear();
  refused(s, "sample_times = (missing): a field_map needs each sample's time");
  s = scan_with_field();
  s.field.times[7] = -1.f;
  refused(s, "sample time[7]");
  CHECK(dir.entries() == 0);
}

}  // namespace

TEST_CASE("field files: the writers refuse bad maps and times, naming the field, writing nothing", "[io][field]") {
  TempDir dir;
  check_writer_refuses(dir, "bad.h5", [](const std::string& p, const Scan& s) { write_scan(p, s); });
#ifdef FHD_HAVE_ISMRMRD
  check_writer_refuses(dir, "bad.mrd", [](const std::string& p, const Scan& s) { write_ismrmrd(p, {s}, 8); });
#endif
}

TEST_CASE("field files: our HDF5 keeps the field map and sample times", "[io][field]") {
  TempDir dir;
  const Scan s = scan_with_field();
  write_scan(dir.file("f.h5"), s);
  const Scan r = read_scan(dir.file("f.h5"));
  CHECK(r.field.hz == s.field.hz);
  CHECK(r.field.times == s.field.times);
  CHECK(read_field_map(dir.file("f.h5"), s.grid) == s.field.hz);
  // Without them the file reads as before: no field.
  Scan plain = s;
  plain.field = {};
  write_scan(dir.file("p.h5"), plain);
  CHECK(read_scan(dir.file("p.h5")).field.empty());
}

TEST_CASE("field files: bad maps and times are refused with the file and field named", "[io][field]") {
  TempDir dir;
  const Scan s = scan_with_field();
  write_scan(dir.file("nan.h5"), s);
  std::vector<float> hz = s.field.hz;
  hz[5] = std::nanf("");
  edit_floats(dir.file("nan.h5"), "field_map", hz);
  CHECK_THROWS_WITH(read_scan(dir.file("nan.h5")), Catch::Contains("nan.h5") && Catch::Contains("field map[5]"));
  write_scan(dir.file("notimes.h5"), s);
  edit_floats(dir.file("notimes.h5"), "sample_times", {});
  CHECK_THROWS_WITH(read_scan(dir.file("notimes.h5")),
                    Catch::Contains("/sample_times = (missing): a /field_map needs each sample's time"));
  write_floats(dir.file("short.h5"), "field_map", std::vector<float>(63, 1.f));
  CHECK_THROWS_WITH(read_field_map(dir.file("short.h5"), {8, 8, 1}), Catch::Contains("/field_map shape"));
  write_floats(dir.file("huge.h5"), "field_map", std::vector<float>(64, 3e6f));
  CHECK_THROWS_WITH(read_field_map(dir.file("huge.h5"), {8, 8, 1}), Catch::Contains("/field_map[0]"));
  write_floats(dir.file("other.h5"), "something", std::vector<float>(64, 1.f));
  CHECK_THROWS_WITH(read_field_map(dir.file("other.h5"), {8, 8, 1}), Catch::Contains("/field_map"));
}

#ifdef FHD_HAVE_ISMRMRD
TEST_CASE("field files: ISMRMRD carries the sample times as TE and sample_time_us", "[io][field][ismrmrd]") {
  TempDir dir;
  const Scan s = scan_with_field();
  write_ismrmrd(dir.file("f.mrd"), {s}, 8);
  const std::vector<Scan> r = read_ismrmrd(dir.file("f.mrd"));
  REQUIRE(r.size() == 1);
  REQUIRE(r[0].field.times.size() == s.field.times.size());
  for (std::size_t m = 0; m < s.field.times.size(); ++m) CHECK(std::fabs(r[0].field.times[m] - s.field.times[m]) < 1e-7);
  CHECK(r[0].field.hz.empty());  // ISMRMRD has no place for the map
  Scan odd = s;
  odd.field.times[9] += 0.0005f;  // not TE + index * dwell
  CHECK_THROWS_WITH(write_ismrmrd(dir.file("odd.mrd"), {odd}, 8), Catch::Contains("sample time[9]"));
}
#endif
