// Round trip of the HDF5 scan file, checked against h5dump, and every bad input.
#include <hdf5.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>

#include "catch.hpp"
#include "io/scan_file.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

// Opens a written scan file read-write and lets the test damage it.
void edit(const std::string& path, const std::function<void(hid_t)>& change) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(f >= 0);
  change(f);
  H5Fclose(f);
}

void replace_float_dataset(hid_t f, const char* name, std::vector<hsize_t> dims, hid_t type) {
  if (H5Lexists(f, name, H5P_DEFAULT) > 0) H5Ldelete(f, name, H5P_DEFAULT);
  hsize_t n = 1;
  for (auto d : dims) n *= d;
  std::vector<double> zeros(n, 0.0);
  hid_t sp = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t ds = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data());
  H5Dclose(ds);
  H5Sclose(sp);
}

// Overwrites element `index` (flat) of a float dataset with `value`.
void poke_float(hid_t f, const char* name, hsize_t index, float value) {
  hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
  std::vector<hsize_t> dims(2);
  hid_t sp = H5Dget_space(ds);
  int rank = H5Sget_simple_extent_dims(sp, dims.data(), nullptr);
  hsize_t start[2] = {rank == 2 ? index / dims[1] : index, rank == 2 ? index % dims[1] : 0};
  hsize_t count[2] = {1, 1};
  H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hsize_t one = 1;
  hid_t mem = H5Screate_simple(1, &one, nullptr);
  H5Dwrite(ds, H5T_NATIVE_FLOAT, mem, sp, H5P_DEFAULT, &value);
  H5Sclose(mem);
  H5Sclose(sp);
  H5Dclose(ds);
}

void set_schema(hid_t f, const std::string& v) {
  H5Adelete(f, "fhdrecon_schema");
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, v.size());
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "fhdrecon_schema", t, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, t, v.c_str());
  H5Aclose(a);
  H5Sclose(sp);
  H5Tclose(t);
}

}  // namespace

TEST_CASE("scan file round trip keeps every field", "[io][scan]") {
  TempDir dir;
  Scan s = random_scan({16, 12, 8}, 500);
  s.phi.assign(500, cfloat(0.5f, -0.25f));
  s.dcf.assign(500, 2.0f);
  s.provenance = {{"phantom", "shepp-logan-3d"}, {"seed", "42"}, {"tool", "fhdrecon 0.1.0"}};
  const std::string path = dir.file("scan.h5");
  write_scan(path, s, {0.25f, 0.25f, 0.2f});
  CHECK(dir.entries() == 1);  // no temporary left
  std::array<float, 3> fov{};
  Scan r = read_scan(path, &fov);
  CHECK(r.grid == s.grid);
  CHECK(r.traj.kx == s.traj.kx);
  CHECK(r.traj.ky == s.traj.ky);
  CHECK(r.traj.kz == s.traj.kz);
  CHECK(r.data == s.data);
  CHECK(r.phi == s.phi);
  CHECK(r.dcf == s.dcf);
  CHECK(r.provenance == s.provenance);
  CHECK(fov[2] == 0.2f);

  SECTION("optional datasets stay absent") {
    Scan t = random_scan({8, 8, 1}, 10);
    write_scan(path, t);
    Scan u = read_scan(path);
    CHECK(u.phi.empty());
    CHECK(u.dcf.empty());
    CHECK(u.provenance.empty());
  }
}

TEST_CASE("scan file layout as h5dump sees it", "[io][scan]") {
  if (!on_path("h5dump")) FHD_SKIP("h5dump is not on PATH");
  TempDir dir;
  const std::string path = dir.file("scan.h5");
  Scan s = random_scan({8, 8, 1}, 37);
  s.provenance["phantom"] = "shepp-logan-2d";
  write_scan(path, s);
  std::string out;
  REQUIRE(run("h5dump -H " + path, &out) == 0);
  INFO(out);
  CHECK(contains(out, "DATASET \"trajectory\""));
  CHECK(contains(out, "H5T_IEEE_F32LE"));
  CHECK(contains(out, "( 37, 3 )"));
  CHECK(contains(out, "H5T_COMPOUND"));
  CHECK(contains(out, "\"r\""));
  CHECK(contains(out, "\"i\""));
  CHECK(contains(out, "( 37 )"));
  CHECK(contains(out, "ATTRIBUTE \"matrix\""));
  CHECK(contains(out, "GROUP \"provenance\""));
  REQUIRE(run("h5dump -a /fhdrecon_schema " + path, &out) == 0);
  CHECK(contains(out, "\"1.0\""));
  REQUIRE(run("h5dump -a /matrix " + path, &out) == 0);
  CHECK(contains(out, "8, 8, 1"));
}

TEST_CASE("scan file: each bad input is one line naming file, field, value", "[io][scan]") {
  TempDir dir;
  const std::string path = dir.file("bad.h5");
  write_scan(path, random_scan({16, 16, 16}, 64));
  auto err = [&] { return error_of([&] { read_scan(path); }); };

  SECTION("missing file") {
    std::string e = error_of([&] { read_scan(dir.file("nope.h5")); });
    CHECK(contains(e, dir.file("nope.h5")));
    CHECK(contains(e, "does not exist"));
  }
  SECTION("not HDF5") {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("hello", f);
    std::fclose(f);
    CHECK(contains(err(), "not an HDF5 file"));
  }
  SECTION("truncated file") {
    auto size = std::filesystem::file_size(path);
    std::filesystem::resize_file(path, size / 2);
    std::string e = err();
    CHECK(contains(e, path));
    CHECK(e.find('\n') == std::string::npos);
    CHECK(e.substr(0, 6) != "other:");
  }
  SECTION("missing dataset") {
    edit(path, [](hid_t f) { H5Ldelete(f, "kspace", H5P_DEFAULT); });
    std::string e = err();
    CHECK(contains(e, path));
    CHECK(contains(e, "/kspace = (missing)"));
  }
  SECTION("wrong shape") {
    edit(path, [](hid_t f) { replace_float_dataset(f, "trajectory", {64, 2}, H5T_IEEE_F32LE); });
    CHECK(contains(err(), "/trajectory shape = [64,2]"));
  }
  SECTION("inconsistent M") {
    edit(path, [](hid_t f) { replace_float_dataset(f, "dcf", {63}, H5T_IEEE_F32LE); });
    CHECK(contains(err(), "/dcf shape = [63]: expected [64]"));
  }
  SECTION("wrong dtype") {
    edit(path, [](hid_t f) { replace_float_dataset(f, "trajectory", {64, 3}, H5T_STD_I32LE); });
    CHECK(contains(err(), "/trajectory dtype = integer"));
  }
  SECTION("complex stored as plain float") {
    edit(path, [](hid_t f) { replace_float_dataset(f, "kspace", {64, 2}, H5T_IEEE_F32LE); });
    CHECK(contains(err(), "/kspace dtype = float32"));
  }
  SECTION("NaN sample") {
    edit(path, [](hid_t f) { poke_float(f, "trajectory", 3 * 5 + 1, std::numeric_limits<float>::quiet_NaN()); });
    CHECK(contains(err(), "/trajectory[5].ky = nan"));
  }
  SECTION("Inf sample") {
    edit(path, [](hid_t f) { poke_float(f, "trajectory", 3 * 9 + 2, std::numeric_limits<float>::infinity()); });
    CHECK(contains(err(), "/trajectory[9].kz = inf"));
  }
  SECTION("k outside the band") {
    edit(path, [](hid_t f) { poke_float(f, "trajectory", 3 * 7, 8.5f); });
    std::string e = err();
    CHECK(contains(e, path));
    CHECK(contains(e, "/trajectory[7].kx = 8.5"));
    CHECK(contains(e, "N/2 = 8"));
  }
  SECTION("k on the band edge is accepted") {
    edit(path, [](hid_t f) { poke_float(f, "trajectory", 3 * 7, -8.0f); });
    CHECK(err() == "no error");
  }
  SECTION("unknown major schema version") {
    edit(path, [](hid_t f) { set_schema(f, "2.0"); });
    std::string e = err();
    CHECK(contains(e, path));
    CHECK(contains(e, "fhdrecon_schema = \"2.0\""));
    CHECK(contains(e, "unknown major"));
  }
  SECTION("newer minor version is read") {
    edit(path, [](hid_t f) { set_schema(f, "1.7"); });
    CHECK(err() == "no error");
  }
  SECTION("bad matrix") {
    edit(path, [](hid_t f) {
      int m[3] = {16, 0, 16};
      hid_t a = H5Aopen(f, "matrix", H5P_DEFAULT);
      H5Awrite(a, H5T_NATIVE_INT, m);
      H5Aclose(a);
    });
    CHECK(contains(err(), "attribute matrix[1] = 0"));
  }
}

TEST_CASE("scan writer refuses a bad scan and leaves the old file alone", "[io][scan]") {
  TempDir dir;
  const std::string path = dir.file("scan.h5");
  write_scan(path, random_scan({8, 8, 1}, 20));
  auto before = std::filesystem::file_size(path);
  Scan bad = random_scan({8, 8, 1}, 30);
  bad.data[29] = {std::nanf(""), 0};
  CHECK(contains(error_of([&] { write_scan(path, bad); }), "kspace[29]"));
  CHECK(std::filesystem::file_size(path) == before);
  CHECK(dir.entries() == 1);
}

TEST_CASE("scan file geometry: fov in mm becomes Scan::geometry, (1, 1, 1) means none", "[io][scan][geometry]") {
  TempDir dir;
  const Scan s = random_scan({16, 12, 1}, 40);
  write_scan(dir.file("plain.h5"), s);  // the default fov (1, 1, 1): unitless
  CHECK(!read_scan(dir.file("plain.h5")).geometry);
  write_scan(dir.file("mm.h5"), s, {220, 180, 5});
  const Scan r = read_scan(dir.file("mm.h5"));
  REQUIRE(r.geometry);
  CHECK(r.geometry->fov_mm == FovMm{220, 180, 5});
  CHECK(r.geometry->position == Vec3{0, 0, 0});
  CHECK(r.geometry->read_dir == ScanGeometry{}.read_dir);  // the default axes: the format has no directions
  // A scan with a geometry writes its FOV (the fov argument is then unused).
  Scan g = s;
  g.geometry = ScanGeometry{};
  g.geometry->fov_mm = {300, 240, 7};
  g.geometry->read_dir = {0, 1, 0};
  write_scan(dir.file("geo.h5"), g);
  std::array<float, 3> fov{};
  const Scan back = read_scan(dir.file("geo.h5"), &fov);
  CHECK(fov == std::array<float, 3>{300, 240, 7});
  CHECK(back.geometry->fov_mm == FovMm{300, 240, 7});
  CHECK(back.geometry->read_dir == ScanGeometry{}.read_dir);  // not stored: kept only in ISMRMRD
}
