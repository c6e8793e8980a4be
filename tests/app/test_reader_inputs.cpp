// Reading scans through the CLI: a BART kz of float noise is 2D, --traj-units
// for ISMRMRD input, and what the readers log in the reader child (skipped
// acquisitions, provenance attributes) reaching the user.
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/scan_input.hpp"
#include "catch.hpp"
#include "io/cfl.hpp"
#include "io/ismrmrd_io.hpp"
#include "io/scan_file.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::test::CliRun;
using fhd::test::occurrences;
using fhd::test::one_line_error;
using fhd::test::run_cli;

namespace {

// A short CPU run of `input` writing nothing but the report.
CliRun recon(const std::string& input, const std::string& more, const fs::path& out) {
  return run_cli("--input " + input + " " + more + " --device cpu --iters 2 --no-cache --no-gridding --save none --out " +
                 out.string());
}

// A 16x16 2D scan on 32 random samples; kz set by the caller.
fhd::Scan small_2d(float kz) {
  fhd::Scan s;
  s.grid = {16, 16, 1};
  s.traj = fhd::test::random_trajectory(32, s.grid, 3);
  s.data = fhd::test::random_complex(32, 4);
  for (float& z : s.traj.kz) z = kz;
  return s;
}

#if defined(FHD_HAVE_ISMRMRD)
// The file's /dataset/xml with `from` replaced by `to` (tests/app does not link
// libismrmrd: files are written by fhd::write_ismrmrd and edited through HDF5).
void edit_xml(const std::string& path, const std::string& from, const std::string& to) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "dataset/xml", H5P_DEFAULT);
  hid_t mem = H5Tcopy(H5T_C_S1);
  H5Tset_size(mem, H5T_VARIABLE);
  char* text = nullptr;
  REQUIRE(H5Dread(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text) >= 0);
  std::string xml = text;
  H5free_memory(text);
  REQUIRE(xml.find(from) != std::string::npos);
  xml.replace(xml.find(from), from.size(), to);
  const char* out = xml.c_str();
  REQUIRE(H5Dwrite(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, &out) >= 0);
  H5Tclose(mem);
  H5Dclose(ds);
  H5Fclose(f);
}

// Sets the flags of acquisitions [0, n): a memory type of head.flags alone
// writes that member and leaves the rest of each record as it was.
void set_flags(const std::string& path, hsize_t n, std::uint64_t flags) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t ds = H5Dopen2(f, "dataset/data", H5P_DEFAULT);
  hid_t head = H5Tcreate(H5T_COMPOUND, sizeof(std::uint64_t));
  H5Tinsert(head, "flags", 0, H5T_NATIVE_UINT64);
  hid_t rec = H5Tcreate(H5T_COMPOUND, sizeof(std::uint64_t));
  H5Tinsert(rec, "head", 0, head);
  const hsize_t start = 0;
  hid_t fspace = H5Dget_space(ds), mspace = H5Screate_simple(1, &n, nullptr);
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, nullptr, &n, nullptr);
  const std::vector<std::uint64_t> values(n, flags);
  REQUIRE(H5Dwrite(ds, rec, mspace, fspace, H5P_DEFAULT, values.data()) >= 0);
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Tclose(rec);
  H5Tclose(head);
  H5Dclose(ds);
  H5Fclose(f);
}

// A 16x16 ISMRMRD file of 16 radial spokes of 16 samples, k divided by `divide`
// (16: Gadgetron's normalized units), its fhdrecon_traj_units "cycles/FOV" or
// none (`tagged`), with `navigators` spokes of junk flagged navigator first.
void write_mrd(const std::string& path, float divide, bool tagged, int navigators = 0) {
  fhd::Scan s;
  s.grid = {16, 16, 1};
  for (int a = -navigators; a < 16; ++a) {
    const double angle = M_PI * a / 16;
    for (int i = 0; i < 16; ++i) {
      s.traj.kx.push_back(float((i - 8) * std::cos(angle)) / divide);
      s.traj.ky.push_back(float((i - 8) * std::sin(angle)) / divide);
      s.traj.kz.push_back(0.0f);
      s.data.push_back(fhd::cfloat(a < 0 ? 1000.0f : 1.0f / float(1 + std::abs(i - 8)), 0.0f));
    }
  }
  fhd::write_ismrmrd(path, {s}, 16);
  if (!tagged) edit_xml(path, "fhdrecon_traj_units", "another_traj_units");
  // ISMRMRD_ACQ_IS_NAVIGATION_DATA is flag 23: bit 22.
  if (navigators > 0) set_flags(path, hsize_t(navigators), std::uint64_t(1) << 22);
}
#endif

}  // namespace

TEST_CASE("a BART kz of float noise is a 2D trajectory, not two slices", "[app][bart][reader-sweep]") {
  const fs::path d = fhd::test::fresh_temp_dir("reader", "kz");
  fs::create_directories(d);
  const std::string traj = (d / "t").string(), ksp = (d / "k").string();
  for (float kz : {1e-6f, -3e-7f, 0.5f}) {
    INFO("kz " << kz);
    fhd::write_bart_scan(traj, ksp, {small_2d(kz)}, 8);
    CHECK(fhd::app::read_scans_any(ksp + ".cfl", traj, 0)[0].grid.nz == 1);
    CHECK(fhd::app::read_scans_any(ksp + ".cfl", traj, 16)[0].grid == fhd::ImageGrid{16, 16, 1});
  }
  fhd::write_bart_scan(traj, ksp, {small_2d(0.75f)}, 8);  // beyond a one-voxel axis' band: 3D
  CHECK(fhd::app::read_scans_any(ksp + ".cfl", traj, 0)[0].grid.nz == 2);
  fs::remove_all(d);
}

#if defined(FHD_HAVE_ISMRMRD)
TEST_CASE("--traj-units: normalized ISMRMRD trajectories, refusals naming the option", "[cli][ismrmrd][reader-sweep]") {
  const fs::path d = fhd::test::fresh_temp_dir("reader", "units");
  fs::create_directories(d);
  const std::string norm = (d / "norm.h5").string(), tagged = (d / "tagged.h5").string();
  write_mrd(norm, 16, false);
  write_mrd(tagged, 1, true);
  one_line_error(recon(norm, "", d / "o1"),
                 norm + ": trajectory: max |k| = 0.5 on every axis although the matrix is 16x16: it looks normalized "
                        "to [-0.5, 0.5]; give --traj-units normalized (Python: traj_units='normalized'; or cycles "
                        "to read it as it is)");
  CHECK(!fs::exists(d / "o1"));
  for (const char* units : {"normalized", "cycles"}) {
    const CliRun r = recon(norm, std::string("--traj-units ") + units, d / units);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find(norm + " | 16x16x1 | 256 samples") != std::string::npos);
  }
  one_line_error(recon(tagged, "--traj-units normalized", d / "o2"),
                 tagged + ": --traj-units = normalized: the file says otherwise (/dataset/xml userParameterString "
                          "fhdrecon_traj_units = cycles/FOV)");
  CHECK(recon(tagged, "--traj-units cycles --quiet", d / "o3").code == 0);
  one_line_error(recon(norm, "--traj-units radians", d / "o4"), "--traj-units");
  one_line_error(run_cli("--phantom shepp2d --matrix 16 --traj-units cycles --out " + (d / "o5").string()),
                 "--traj-units: value = cycles: states an ISMRMRD --input's units; there is no --input");
  // Not for other formats, whose trajectories are in cycles/FOV by definition.
  const std::string own = (d / "own.h5").string();
  fhd::write_scan(own, small_2d(0));
  one_line_error(recon(own, "--traj-units normalized", d / "o6"),
                 own + ": --traj-units = normalized: is for ISMRMRD input");
  fhd::write_bart_scan((d / "t").string(), (d / "k").string(), {small_2d(0)}, 8);
  one_line_error(recon((d / "k.cfl").string(), "--traj-file " + (d / "t").string() + " --traj-units normalized", d / "o7"),
                 "--traj-units: with --input = " + (d / "k.cfl").string() + ": normalized is for ISMRMRD input");
  fs::remove_all(d);
}

TEST_CASE("what the reader child logs reaches the user once: skipped navigators", "[cli][ismrmrd][reader-sweep]") {
  const fs::path d = fhd::test::fresh_temp_dir("reader", "nav");
  fs::create_directories(d);
  const std::string nav = (d / "nav.h5").string();
  write_mrd(nav, 1, false, 2);
  const CliRun r = recon(nav, "", d / "o");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(occurrences(r.out, "info: " + nav + ": skipped 2 non-image acquisitions (navigator)") == 1);
  CHECK(r.out.find("256 samples") != std::string::npos);  // 16 spokes of 16, the navigators left out
  CHECK(r.out.find("fhdrecon.reader_log") == std::string::npos);
  fs::remove_all(d);
}
#endif

TEST_CASE("a provenance number is read, an array skipped with a warning the user sees", "[cli][reader-sweep]") {
  const fs::path d = fhd::test::fresh_temp_dir("reader", "prov");
  fs::create_directories(d);
  const std::string path = (d / "p.h5").string();
  fhd::Scan s = small_2d(0);
  s.provenance = {{"tool", "x"}};
  fhd::write_scan(path, s);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t g = H5Gopen2(f, "provenance", H5P_DEFAULT);
  const long long seed = 5, dims[3] = {16, 16, 1};
  const hsize_t three = 3;
  hid_t scalar = H5Screate(H5S_SCALAR), vector = H5Screate_simple(1, &three, nullptr);
  hid_t a = H5Acreate2(g, "seed", H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_LLONG, &seed);
  H5Aclose(a);
  a = H5Acreate2(g, "dims", H5T_STD_I64LE, vector, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_LLONG, dims);
  H5Aclose(a);
  H5Sclose(scalar);
  H5Sclose(vector);
  H5Gclose(g);
  H5Fclose(f);
  const CliRun r = recon(path, "--quiet", d / "o");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(occurrences(r.out, "warning: " + path + ": /provenance attribute dims = integer array: not a string or one "
                                                "number; skipped") == 1);
  CHECK(r.out.find("seed") == std::string::npos);
  fs::remove_all(d);
}
