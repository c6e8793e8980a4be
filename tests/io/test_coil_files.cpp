// Multi-coil scans with noise-calibration samples: round trips through the
// fhdrecon HDF5 file (schema 1.1) and ISMRMRD (noise acquisitions flagged
// ISMRMRD_ACQ_IS_NOISE_MEASUREMENT), and the readers' checks.
#include <algorithm>
#include <hdf5.h>

#include "catch.hpp"
#include "io/scan_file.hpp"
#include "io_test_util.hpp"
#include "test_util.hpp"
#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/dataset.h>

#include "io/ismrmrd_io.hpp"
#endif

using namespace fhd;
using namespace fhd::test;

namespace {

// `nc` coils on one random trajectory, each with its own data and `mn` noise samples.
std::vector<Scan> coil_scans(ImageGrid g, std::size_t m, int nc, std::size_t mn) {
  std::vector<Scan> coils(nc, random_scan(g, m, 3));
  for (int c = 0; c < nc; ++c) {
    coils[c].data = random_complex(m, 100 + c);
    coils[c].noise = random_complex(mn, 200 + c);
    coils[c].provenance = {{"phantom", "shepp2d"}};
  }
  return coils;
}

void check_same(const std::vector<Scan>& r, const std::vector<Scan>& w) {
  REQUIRE(r.size() == w.size());
  for (std::size_t c = 0; c < w.size(); ++c) {
    INFO("coil " << c);
    CHECK(r[c].grid == w[0].grid);
    CHECK(r[c].traj.kx == w[0].traj.kx);
    CHECK(r[c].traj.kz == w[0].traj.kz);
    CHECK(r[c].data == w[c].data);
    CHECK(r[c].noise == w[c].noise);
    CHECK(r[c].provenance.at("phantom") == "shepp2d");
  }
}

}  // namespace

TEST_CASE("scan file round trip with coils and noise samples", "[io][scan][coils]") {
  TempDir dir;
  const std::string path = dir.file("coils.h5");
  for (ImageGrid g : {ImageGrid{16, 12, 1}, ImageGrid{8, 8, 6}}) {
    const auto coils = coil_scans(g, 90, 3, 40);
    write_scan_coils(path, coils);
    check_same(read_scan_coils(path), coils);
    CHECK(contains(error_of([&] { read_scan(path); }), "multi-coil"));
  }
  SECTION("one coil with noise reads back with read_scan too") {
    const auto one = coil_scans({16, 16, 1}, 30, 1, 7);
    write_scan_coils(path, one);
    CHECK(read_scan(path).noise == one[0].noise);
  }
  SECTION("coils without noise") {
    auto coils = coil_scans({16, 16, 1}, 30, 2, 0);
    write_scan_coils(path, coils);
    check_same(read_scan_coils(path), coils);
  }
  SECTION("writer refuses unequal noise counts and leaves nothing") {
    auto coils = coil_scans({16, 16, 1}, 30, 2, 10);
    coils[1].noise.pop_back();
    const std::string other = dir.file("other.h5");
    CHECK(contains(error_of([&] { write_scan_coils(other, coils); }), "coil 1 noise length = 9"));
    CHECK(!std::filesystem::exists(other));
  }
}

TEST_CASE("scan file: bad coil and noise datasets are named", "[io][scan][coils]") {
  TempDir dir;
  const std::string path = dir.file("coils.h5");
  auto coils = coil_scans({16, 16, 1}, 30, 2, 10);
  write_scan_coils(path, coils);
  // Replace /noise with one of 3 coils: it must match /kspace's 2.
  {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, "noise", H5P_DEFAULT);
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(cfloat));
    H5Tinsert(t, "r", 0, H5T_NATIVE_FLOAT);
    H5Tinsert(t, "i", sizeof(float), H5T_NATIVE_FLOAT);
    hsize_t dims[2] = {3, 10};
    hid_t sp = H5Screate_simple(2, dims, nullptr);
    hid_t d = H5Dcreate2(f, "noise", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    std::vector<cfloat> v(30, cfloat(1, 0));
    v[17] = cfloat(NAN, 0);
    H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(f);
  }
  std::string e = error_of([&] { read_scan_coils(path); });
  CHECK(contains(e, path));
  CHECK(contains(e, "/noise shape = [3,10]"));
  CHECK(contains(e, "C = 2"));
}

#if defined(FHD_HAVE_ISMRMRD)
TEST_CASE("ismrmrd round trip with noise acquisitions", "[io][ismrmrd][coils]") {
  TempDir dir;
  const std::string path = dir.file("coils.mrd");
  const auto coils = coil_scans({16, 16, 1}, 96, 4, 50);
  write_ismrmrd(path, coils, 24);
  check_same(read_ismrmrd(path), coils);
  // As a scanner writes them: noise first (50 samples in acquisitions of <= 24), flagged.
  ISMRMRD::Dataset d(path.c_str(), "dataset", false);
  REQUIRE(d.getNumberOfAcquisitions() == 3 + 4);
  ISMRMRD::Acquisition acq;
  int noise = 0;
  for (std::uint32_t i = 0; i < d.getNumberOfAcquisitions(); ++i) {
    d.readAcquisition(i, acq);
    const bool is_noise = acq.isFlagSet(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
    CHECK(is_noise == (i < 3));
    if (is_noise) {
      noise += acq.number_of_samples();
      CHECK(acq.active_channels() == 4);
    }
  }
  CHECK(noise == 50);
}

TEST_CASE("ismrmrd: noise channels must match the data's", "[io][ismrmrd][coils]") {
  TempDir dir;
  const std::string path = dir.file("bad.mrd");
  write_ismrmrd(path, coil_scans({16, 16, 1}, 24, 2, 0), 24);
  {
    ISMRMRD::Dataset d(path.c_str(), "dataset", false);
    ISMRMRD::Acquisition acq(8, 3, 0);
    // Samples zeroed: libismrmrd leaves them uninitialised, and a NaN would be reported first.
    std::fill_n(acq.getDataPtr(), acq.getNumberOfDataElements(), std::complex<float>(0));
    acq.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
    d.appendAcquisition(acq);
  }
  std::string e = error_of([&] { read_ismrmrd(path); });
  CHECK(contains(e, path));
  CHECK(contains(e, "noise active_channels = 3"));
  CHECK(contains(e, "2 channels"));
}
#endif
