// Hostile files (issue 13): sizes a file claims but does not hold, sizes that
// overflow, headers that disagree with the data. Each is refused with one line
// naming the file, the field and the value, before anything large is allocated.
#include <hdf5.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "catch.hpp"
#include "io/cfl.hpp"
#include "io/scan_file.hpp"
#include "io/scan_checks.hpp"
#include "io_test_util.hpp"
#if defined(FHD_HAVE_ISMRMRD)
#include "io/ismrmrd_io.hpp"
#endif

using namespace fhd;
using namespace fhd::test;

namespace {

constexpr hsize_t kHuge = hsize_t(1) << 40;

void attr(hid_t f, const char* name, hid_t type, const void* v) {
  const hsize_t three = 3;
  hid_t sp = H5Screate_simple(1, &three, nullptr);
  hid_t a = H5Acreate2(f, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, type, v);
  H5Aclose(a);
  H5Sclose(sp);
}

// An fhdrecon scan file whose /trajectory and /kspace claim 2^40 samples and
// store none (HDF5 allocates contiguous storage only when written); `chunked`
// makes them chunked, which HDF5 may legitimately store sparsely.
void write_claiming_huge(const std::string& path, bool chunked) {
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, H5T_VARIABLE);
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "fhdrecon_schema", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
  const char* v = "1.0";
  H5Awrite(a, str, &v);
  H5Aclose(a);
  const int matrix[3] = {64, 64, 64};
  const float fov[3] = {1, 1, 1};
  attr(f, "matrix", H5T_NATIVE_INT, matrix);
  attr(f, "fov", H5T_NATIVE_FLOAT, fov);
  hid_t cplx = H5Tcreate(H5T_COMPOUND, 8);
  H5Tinsert(cplx, "r", 0, H5T_NATIVE_FLOAT);
  H5Tinsert(cplx, "i", 4, H5T_NATIVE_FLOAT);
  const hsize_t tdims[2] = {kHuge, 3}, kdims[1] = {kHuge}, tchunk[2] = {1024, 3}, kchunk[1] = {1024};
  hid_t tsp = H5Screate_simple(2, tdims, nullptr), ksp = H5Screate_simple(1, kdims, nullptr);
  hid_t tpl = H5Pcreate(H5P_DATASET_CREATE), kpl = H5Pcreate(H5P_DATASET_CREATE);
  if (chunked) {
    H5Pset_chunk(tpl, 2, tchunk);
    H5Pset_chunk(kpl, 1, kchunk);
  }
  H5Dclose(H5Dcreate2(f, "trajectory", H5T_IEEE_F32LE, tsp, H5P_DEFAULT, tpl, H5P_DEFAULT));
  H5Dclose(H5Dcreate2(f, "kspace", cplx, ksp, H5P_DEFAULT, kpl, H5P_DEFAULT));
  for (hid_t id : {tpl, kpl}) H5Pclose(id);
  for (hid_t id : {tsp, ksp, scalar}) H5Sclose(id);
  for (hid_t id : {str, cplx}) H5Tclose(id);
  H5Fclose(f);
}

}  // namespace

TEST_CASE("hostile scan file: a 12 KB file claiming 2^40 samples", "[io][hostile]") {
  TempDir dir;
  const std::string path = dir.file("bomb.h5");
  SECTION("contiguous: the stored bytes give it away") {
    write_claiming_huge(path, false);
    REQUIRE(std::filesystem::file_size(path) < 20000);
    const std::string e = error_of([&] { read_scan(path); });
    CHECK(contains(e, path + ": /trajectory shape = [1099511627776,3]: claims 13194139533312 bytes but the file "
                             "stores 0"));
  }
  SECTION("chunked: more than memory holds") {
    write_claiming_huge(path, true);
    const std::string e = error_of([&] { read_scan(path); });
    CHECK(contains(e, path + ": /trajectory shape = [1099511627776,3]: needs about"));
    CHECK(contains(e, "GiB available"));
  }
}

TEST_CASE("hostile scan file: the size check runs before the samples are read", "[io][hostile]") {
  TempDir dir;
  const std::string path = dir.file("big.h5");
  Scan s = random_scan({8192, 8192, 1}, 16);
  write_scan(path, s);
  ImageGrid seen;
  std::size_t samples = 0;
  const std::string e = error_of([&] {
    read_scan(path, nullptr, [&](const ImageGrid& g, std::size_t m, std::size_t) {
      seen = g, samples = m;
      throw InputError(path, "test", "size", "refused");
    });
  });
  CHECK(e == path + ": test = size: refused");
  CHECK(seen.nx == 8192);
  CHECK(samples == 16);
}

TEST_CASE("available memory honours FHDRECON_MEMORY_LIMIT", "[io][hostile]") {
  ::setenv("FHDRECON_MEMORY_LIMIT", "3M", 1);
  CHECK(available_host_bytes() == std::size_t(3) << 20);
  CHECK(contains(error_of([] { check_allocation(4 << 20, "f.h5", "/kspace shape", "[9]"); }),
                 "f.h5: /kspace shape = [9]: needs about 0.00391 GiB of memory, 0.00293 GiB available"));
  CHECK(error_of([] { check_allocation(2 << 20, "f.h5", "x", "y"); }) == "no error");
  ::setenv("FHDRECON_MEMORY_LIMIT", "junk", 1);  // ignored: MemAvailable alone
  CHECK(available_host_bytes() > (std::size_t(3) << 20));
  ::unsetenv("FHDRECON_MEMORY_LIMIT");
}

TEST_CASE("hostile BART files: dimension products that overflow or that the .cfl does not hold", "[io][hostile]") {
  TempDir dir;
  const std::string t = dir.file("t"), k = dir.file("k");
  const ImageGrid g{16, 16, 1};
  write_bart_scan(t, k, {random_scan(g, 32)}, 8);
  SECTION("product overflows 64 bits (wrapped to 0, it matched an empty .cfl)") {
    std::ofstream(t + ".hdr") << "# Dimensions\n3 4294967296 4294967296 4294967296\n";
    std::ofstream(t + ".cfl", std::ios::trunc).close();
    CHECK(error_of([&] { read_bart_scan(t, k, g); }) ==
          t + ".hdr: # Dimensions = [3 4294967296 4294967296 4294967296]: the product of the dimensions overflows");
  }
  SECTION("k-space header claims more than its .cfl holds, checked before reading") {
    std::ofstream(k + ".hdr") << "# Dimensions\n1 8 4 100000000\n";
    CHECK(contains(error_of([&] { read_bart_scan(t, k, g); }), k + ".cfl: size = 256 bytes: expected"));
  }
  SECTION("the size check sees grid, samples and coils before the k-space is read") {
    std::size_t seen = 0, coils = 0;
    read_bart_scan(t, k, g, [&](const ImageGrid&, std::size_t m, std::size_t c) { seen = m, coils = c; });
    CHECK(seen == 32);
    CHECK(coils == 1);
  }
}

TEST_CASE("trajectory checks name the first bad sample in file order", "[io][hostile]") {
  Scan s = random_scan({16, 16, 1}, 20);
  s.traj.ky[3] = 1e10f;  // ky of sample 3 ...
  s.traj.kx[9] = 9.0f;   // ... comes before kx of sample 9
  CHECK(contains(error_of([&] { validate_scan(s, "f.h5"); }), "f.h5: trajectory[3].ky = 1e+10"));
}

#if defined(FHD_HAVE_ISMRMRD)
namespace {

// Overwrites one head field of acquisition `i` in place (HDF5 partial compound write).
void patch_head(const std::string& path, hsize_t i, const char* field, std::uint16_t value) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, "dataset/data", H5P_DEFAULT);
  hid_t head = H5Tcreate(H5T_COMPOUND, 2);
  H5Tinsert(head, field, 0, H5T_NATIVE_UINT16);
  hid_t rec = H5Tcreate(H5T_COMPOUND, 2);
  H5Tinsert(rec, "head", 0, head);
  hid_t fs = H5Dget_space(d);
  const hsize_t one = 1;
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, &i, nullptr, &one, nullptr);
  hid_t ms = H5Screate_simple(1, &one, nullptr);
  REQUIRE(H5Dwrite(d, rec, ms, fs, H5P_DEFAULT, &value) >= 0);
  H5Sclose(ms), H5Sclose(fs), H5Tclose(rec), H5Tclose(head), H5Dclose(d), H5Fclose(f);
}

}  // namespace

TEST_CASE("hostile ISMRMRD: headers that claim more than the file stores", "[io][hostile][ismrmrd]") {
  TempDir dir;
  const std::string path = dir.file("raw.mrd");
  write_ismrmrd(path, {random_scan({16, 16, 1}, 64)}, 16);
  REQUIRE(read_ismrmrd(path).size() == 1);
  SECTION("2 channels claimed, 1 stored (a heap overflow in libismrmrd)") {
    patch_head(path, 2, "active_channels", 2);
    CHECK(error_of([&] { read_ismrmrd(path); }) ==
          path + ": /dataset/data[2].active_channels = 2: number_of_samples 16 x active_channels needs 32 complex "
                 "values, the file stores 16 (corrupt header)");
  }
  SECTION("more samples claimed than stored") {
    patch_head(path, 1, "number_of_samples", 60000);
    CHECK(contains(error_of([&] { read_ismrmrd(path); }), path + ": /dataset/data[1].trajectory_dimensions = 2"));
  }
  SECTION("trajectory dimensions claimed 3, 2 stored") {
    patch_head(path, 0, "trajectory_dimensions", 3);
    CHECK(contains(error_of([&] { read_ismrmrd(path); }),
                   "/dataset/data[0].trajectory_dimensions = 3: number_of_samples 16 x trajectory_dimensions needs 48"));
  }
  SECTION("the size check sees the totals before the samples are read") {
    std::size_t m = 0, c = 0;
    read_ismrmrd(path, false, [&](const ImageGrid&, std::size_t samples, std::size_t coils) { m = samples, c = coils; });
    CHECK(m == 64);
    CHECK(c == 1);
  }
}
#endif

#include <csignal>

#include "io/h5util.hpp"

TEST_CASE("read_in_child_first turns crashes, hangs and memory blow-ups into one InputError", "[io][hostile]") {
  TempDir dir;
  const std::string f = dir.file("any.h5");
  std::ofstream(f) << "0123456789";
  int calls = 0;
  CHECK(error_of([&] { h5::read_in_child_first(f, [&] { ++calls; }); }) == "no error");
  CHECK(calls == 0);  // the child's count; the parent reads for real afterwards
  CHECK(contains(error_of([&] { h5::read_in_child_first(f, [] {
                   std::signal(SIGSEGV, SIG_DFL);  // not the test framework's handler
                   std::raise(SIGSEGV);
                 }); }),
                 f + ": file = " + f + ": libhdf5 crashed reading it (corrupt HDF5 structure; signal"));
  CHECK(error_of([&] { h5::read_in_child_first(f, [&] { throw InputError(f, "/kspace", "x", "bad"); }); }) ==
        f + ": /kspace = x: bad");
  ::setenv("FHDRECON_READ_TIMEOUT", "1", 1);
  CHECK(contains(error_of([&] { h5::read_in_child_first(f, [] { for (;;) pause(); }); }),
                 "libhdf5 did not finish reading it in 1 s"));
  ::unsetenv("FHDRECON_READ_TIMEOUT");
#if !defined(__SANITIZE_ADDRESS__)
  // 64 GB for a 10-byte file: the child's address-space cap refuses it.
  CHECK(contains(error_of([&] { h5::read_in_child_first(f, [] { std::vector<char> v(std::size_t(64) << 30); }); }),
                 "unreadable (corrupt?)"));
#endif
}
