// ISMRMRD: round trip (2D, 3D, multi-coil), the layout as h5dump sees it, bad inputs.
#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/dataset.h>
#include <ismrmrd/xml.h>
#if defined(FHD_HAVE_NIFTI)
#include <nifti1_io.h>
#endif

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catch.hpp"
#include "io/image_out.hpp"
#include "io/ismrmrd_io.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

// libismrmrd leaves a new acquisition's samples as realloc left them: zero them,
// or a stray NaN there fails the reader's finiteness check (seen once in CI).
void zero_data(ISMRMRD::Acquisition& acq) {
  std::fill_n(acq.getDataPtr(), acq.getNumberOfDataElements(), std::complex<float>(0));
}

// Writes a file by hand: `acqs` acquisitions of `n` samples, traj value k at every sample.
void hand_written(const std::string& path, int tdims, int acqs, int n, float k, const std::string& units = "",
                  int channels_of_last = 1) {
  ISMRMRD::Dataset d(path.c_str(), "dataset", true);
  d.writeHeader(ismrmrd_header(16, 16, 1, units));
  for (int a = 0; a < acqs; ++a) {
    ISMRMRD::Acquisition acq(n, a + 1 == acqs ? channels_of_last : 1, tdims);
    zero_data(acq);
    for (int s = 0; s < n; ++s)
      for (int dim = 0; dim < tdims; ++dim) acq.traj(dim, s) = k;
    d.appendAcquisition(acq);
  }
}

// A file written with libismrmrd's own API whose acquisitions carry this
// position and these directions (LPS), 3 readouts of 4 samples on a 16x16 grid.
void oriented(const std::string& path, const float (&pos)[3], const float (&read)[3], const float (&phase)[3],
              const float (&slice)[3]) {
  ISMRMRD::Dataset d(path.c_str(), "dataset", true);
  d.writeHeader(ismrmrd_header(16, 16, 1));  // FOV 200 mm: 12.5 mm voxels, a 200 mm slice
  for (int a = 0; a < 3; ++a) {
    ISMRMRD::Acquisition acq(4, 1, 2);
    zero_data(acq);
    ISMRMRD::AcquisitionHeader h = acq.getHead();
    for (int i = 0; i < 3; ++i) {
      h.position[i] = pos[i];
      h.read_dir[i] = read[i];
      h.phase_dir[i] = phase[i];
      h.slice_dir[i] = slice[i];
    }
    acq.setHead(h);
    for (int s = 0; s < 4; ++s) acq.traj(0, s) = acq.traj(1, s) = float(s - 2);
    d.appendAcquisition(acq);
  }
}

}  // namespace

TEST_CASE("ismrmrd geometry: FOV, position and directions are read; zero directions mean the default axes",
          "[io][ismrmrd][geometry]") {
  TempDir dir;
  const std::string path = dir.file("geo.h5");
  const float c = std::cos(0.5f), s = std::sin(0.5f);  // rotated 0.5 rad about the slice axis z
  SECTION("rotated in-plane, slice along +z") {
    oriented(path, {5, -6, 7}, {c, s, 0}, {-s, c, 0}, {0, 0, 1});
    const Scan r = read_ismrmrd(path)[0];
    REQUIRE(r.geometry);
    CHECK(r.geometry->fov_mm == FovMm{200, 200, 200});
    CHECK(r.geometry->position == Vec3{5, -6, 7});
    CHECK(r.geometry->read_dir == Vec3{c, s, 0});
    CHECK(r.geometry->phase_dir == Vec3{-s, c, 0});
  }
  SECTION("slice_dir left zero: read x phase") {
    oriented(path, {0, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0});
    CHECK(read_ismrmrd(path)[0].geometry->slice_dir == Vec3{1, 0, 0});
  }
  SECTION("no directions recorded: the default axes, the header's FOV") {
    oriented(path, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0});
    const Scan r = read_ismrmrd(path)[0];
    REQUIRE(r.geometry);
    CHECK(r.geometry->read_dir == ScanGeometry{}.read_dir);
    CHECK(r.geometry->slice_dir == ScanGeometry{}.slice_dir);
    CHECK(r.geometry->fov_mm[0] == 200);
  }
  SECTION("bad directions are named") {
    // A new file each time: libismrmrd appends to an existing one.
    oriented(dir.file("a.h5"), {0, 0, 0}, {2, 0, 0}, {0, 1, 0}, {0, 0, 1});
    CHECK(contains(error_of([&] { read_ismrmrd(dir.file("a.h5")); }),
                   "/dataset/data[0].read_dir = (2, 0, 0): must be a unit vector"));
    oriented(dir.file("b.h5"), {0, 0, 0}, {1, 0, 0}, {c, s, 0}, {0, 0, 1});
    CHECK(contains(error_of([&] { read_ismrmrd(dir.file("b.h5")); }), "/dataset/data[0].phase_dir"));
    oriented(dir.file("c.h5"), {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 1, 0});
    CHECK(contains(error_of([&] { read_ismrmrd(dir.file("c.h5")); }),
                   "slice_dir = (0, 1, 0): must be orthogonal to the other directions"));
    oriented(dir.file("d.h5"), {NAN, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1});
    CHECK(contains(error_of([&] { read_ismrmrd(dir.file("d.h5")); }), "/dataset/data[0].position = (nan, 0, 0)"));
  }
}

TEST_CASE("ismrmrd geometry round trip: write_ismrmrd stores it, read_ismrmrd gives it back", "[io][ismrmrd][geometry]") {
  TempDir dir;
  Scan a = random_scan({8, 8, 6}, 48, 3);
  ScanGeometry g;
  g.fov_mm = {220, 200, 90};
  g.position = {-12.5, 40, 3};
  g.read_dir = {0, 0.6, 0.8};
  g.phase_dir = {1, 0, 0};
  g.slice_dir = {0, 0.8, -0.6};
  a.geometry = g;
  write_ismrmrd(dir.file("g.mrd"), {a}, 16);
  const Scan r = read_ismrmrd(dir.file("g.mrd"))[0];
  REQUIRE(r.geometry);
  // Stored as float32: equal to float rounding.
  for (int i = 0; i < 3; ++i) {
    CHECK(r.geometry->fov_mm[i] == g.fov_mm[i]);
    CHECK(r.geometry->position[i] == g.position[i]);
    CHECK(std::fabs(r.geometry->read_dir[i] - g.read_dir[i]) < 1e-7);
    CHECK(std::fabs(r.geometry->phase_dir[i] - g.phase_dir[i]) < 1e-7);
    CHECK(std::fabs(r.geometry->slice_dir[i] - g.slice_dir[i]) < 1e-7);
  }
}

#if defined(FHD_HAVE_NIFTI)
TEST_CASE("an ISMRMRD scan rotated in-plane gives the rotated NIfTI affine", "[io][ismrmrd][geometry][nifti]") {
  TempDir dir;
  const float c = std::cos(0.5f), s = std::sin(0.5f);
  oriented(dir.file("rot.h5"), {5, -6, 7}, {c, s, 0}, {-s, c, 0}, {0, 0, 1});
  const Scan r = read_ismrmrd(dir.file("rot.h5"))[0];
  const std::string nii = dir.file("rot.nii");
  write_nifti(nii, std::vector<float>(r.grid.voxels(), 1.0f), r.grid, r.geometry);
  nifti_image* nim = nifti_image_read(nii.c_str(), 1);
  REQUIRE(nim != nullptr);
  // 12.5 mm voxels; RAS = (-x, -y, z) of LPS: i column (-c, -s, 0) * 12.5, j column (s, -c, 0) * 12.5,
  // slice 200 mm thick along +z; voxel (8, 8, 0) at RAS (-5, 6, 7).
  const double d = 12.5;
  const double col[3][3] = {{-c * d, -s * d, 0}, {s * d, -c * d, 0}, {0, 0, 200}};
  const double centre[3] = {-5, 6, 7};
  for (const mat44* m : {&nim->qto_xyz, &nim->sto_xyz})
    for (int row = 0; row < 3; ++row) {
      double t = centre[row];
      for (int k = 0; k < 3; ++k) {
        CHECK(std::fabs(m->m[row][k] - col[k][row]) < 1e-4);
        t -= (k < 2 ? 8 : 0) * col[k][row];
      }
      CHECK(std::fabs(m->m[row][3] - t) < 1e-3);
    }
  CHECK(nim->qform_code == NIFTI_XFORM_SCANNER_ANAT);
  nifti_image_free(nim);
}
#endif

TEST_CASE("ismrmrd round trip: trajectory, data, coils, provenance", "[io][ismrmrd]") {
  TempDir dir;
  for (ImageGrid g : {ImageGrid{16, 12, 1}, ImageGrid{8, 8, 6}}) {
    INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz);
    Scan a = random_scan(g, 120, 4), b = a;
    for (auto& v : b.data) v *= cfloat(0.5f, 1.0f);
    a.provenance = {{"phantom", "shepp-logan"}, {"trajectory", "radial2d"}};
    const std::string path = dir.file("raw.h5");
    write_ismrmrd(path, {a, b}, 24);
    std::vector<Scan> r = read_ismrmrd(path);
    REQUIRE(r.size() == 2);
    CHECK(r[0].grid == g);
    CHECK(r[0].traj.kx == a.traj.kx);
    CHECK(r[0].traj.ky == a.traj.ky);
    CHECK(r[0].traj.kz == a.traj.kz);
    CHECK(r[1].traj.kx == a.traj.kx);
    CHECK(r[0].data == a.data);
    CHECK(r[1].data == b.data);
    CHECK(r[1].provenance["phantom"] == "shepp-logan");
    CHECK(r[1].provenance["coil"] == "1");
    CHECK(dir.entries() == 1);
  }
}

TEST_CASE("ismrmrd layout: one readout per acquisition, as h5dump sees it", "[io][ismrmrd]") {
  if (!on_path("h5dump")) FHD_SKIP("h5dump is not on PATH");
  TempDir dir;
  const std::string path = dir.file("raw.h5");
  Scan s = random_scan({16, 16, 1}, 64);
  s.provenance["trajectory"] = "radial2d";
  write_ismrmrd(path, {s}, 16);
  std::string out;
  REQUIRE(run("h5dump -H -d /dataset/data " + path, &out) == 0);
  CHECK(contains(out, "( 4 )"));  // 64 samples / 16 per readout
  REQUIRE(run("h5dump -d /dataset/data -s 1 -c 1 " + path, &out) == 0);
  CHECK(contains(out, "16,"));  // number_of_samples of acquisition 1
  REQUIRE(run("h5dump -d /dataset/xml " + path, &out) == 0);
  CHECK(contains(out, "radial"));
  CHECK(contains(out, "fhdrecon_traj_units"));
}

TEST_CASE("ismrmrd normalized trajectories are scaled by the matrix", "[io][ismrmrd]") {
  TempDir dir;
  const std::string path = dir.file("norm.h5");
  hand_written(path, 2, 3, 5, 0.25f, "normalized");
  std::vector<Scan> r = read_ismrmrd(path);
  REQUIRE(r.size() == 1);
  CHECK(r[0].traj.kx[0] == 4.0f);  // 0.25 * 16
  CHECK(r[0].traj.kz[0] == 0.0f);
  // Without the header's word, the caller's choice applies (none: refused, it
  // looks normalized; test_ismrmrd_acquisitions.cpp).
  hand_written(dir.file("plain.h5"), 2, 3, 5, 0.25f);
  CHECK(read_ismrmrd(dir.file("plain.h5"), TrajUnits::cycles)[0].traj.kx[0] == 0.25f);
  CHECK(read_ismrmrd(dir.file("plain.h5"), true)[0].traj.kx[0] == 4.0f);
}

TEST_CASE("ismrmrd bad inputs name file, field and value", "[io][ismrmrd]") {
  TempDir dir;
  const std::string path = dir.file("bad.h5");
  auto err = [&] { return error_of([&] { read_ismrmrd(path); }); };
  SECTION("missing file") { CHECK(contains(err(), path + ": does not exist")); }
  SECTION("truncated file") {
    write_ismrmrd(path, {random_scan({16, 16, 1}, 64)}, 16);
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    std::string e = err();
    CHECK(contains(e, path));
    CHECK(e.find('\n') == std::string::npos);
    CHECK(e.substr(0, 6) != "other:");
  }
  SECTION("not ISMRMRD") {
    Scan s = random_scan({8, 8, 1}, 4);
    hand_written(path, 2, 1, 4, 0.0f);
    ISMRMRD::Dataset(dir.file("x.h5").c_str(), "other", true);
    CHECK(contains(error_of([&] { read_ismrmrd(dir.file("x.h5")); }), "/dataset"));
  }
  SECTION("Cartesian acquisition (no trajectory)") {
    hand_written(path, 0, 2, 4, 0.0f);
    CHECK(contains(err(), "/dataset/data[0].trajectory_dimensions = 0"));
  }
  SECTION("k outside the band") {
    hand_written(path, 2, 2, 4, 9.0f);
    CHECK(contains(err(), path + ": /dataset/data sample[0].kx = 9"));
  }
  SECTION("channel count changes") {
    hand_written(path, 2, 3, 4, 0.0f, "", 2);
    CHECK(contains(err(), "/dataset/data[2].active_channels = 2"));
  }
  SECTION("bad units word") {
    hand_written(path, 2, 1, 4, 0.0f, "radians");
    CHECK(contains(err(), "fhdrecon_traj_units = radians"));
  }
  SECTION("writer: readout too long for 16 bits, nothing written") {
    Scan big = random_scan({16, 16, 1}, 70000);
    CHECK(contains(error_of([&] { write_ismrmrd(path, {big}, 0); }), "readout = 70000"));
    CHECK(dir.entries() == 0);
  }
}
#endif
