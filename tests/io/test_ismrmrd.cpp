// ISMRMRD: round trip (2D, 3D, multi-coil), the layout as h5dump sees it, bad inputs.
#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/dataset.h>
#include <ismrmrd/xml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "catch.hpp"
#include "io/ismrmrd_io.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

// A minimal header with the given matrix, written with ISMRMRD's own API.
std::string header(int nx, int ny, int nz, const std::string& units = "") {
  ISMRMRD::IsmrmrdHeader h;
  h.experimentalConditions.H1resonanceFrequency_Hz = 63870000;
  ISMRMRD::Encoding e;
  e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(nx, ny, nz);
  e.encodedSpace.fieldOfView_mm = {200, 200, 200};
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

// Writes a file by hand: `acqs` acquisitions of `n` samples, traj value k at every sample.
void hand_written(const std::string& path, int tdims, int acqs, int n, float k, const std::string& units = "",
                  int channels_of_last = 1) {
  ISMRMRD::Dataset d(path.c_str(), "dataset", true);
  d.writeHeader(header(16, 16, 1, units));
  for (int a = 0; a < acqs; ++a) {
    ISMRMRD::Acquisition acq(n, a + 1 == acqs ? channels_of_last : 1, tdims);
    for (int s = 0; s < n; ++s)
      for (int dim = 0; dim < tdims; ++dim) acq.traj(dim, s) = k;
    d.appendAcquisition(acq);
  }
}

}  // namespace

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
  // Without the header's word, the caller's choice applies.
  hand_written(dir.file("plain.h5"), 2, 3, 5, 0.25f);
  CHECK(read_ismrmrd(dir.file("plain.h5"))[0].traj.kx[0] == 0.25f);
  CHECK(read_ismrmrd(dir.file("plain.h5"), true)[0].traj.kx[0] == 4.0f);
}

TEST_CASE("ismrmrd bad inputs name file, field and value", "[io][ismrmrd]") {
  TempDir dir;
  const std::string path = dir.file("bad.h5");
  auto err = [&] { return error_of([&] { read_ismrmrd(path); }); };
  SECTION("missing file") { CHECK(contains(err(), path + ": file = " + path + ": does not exist")); }
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
