// Hostile files (issue 13): sizes a file claims but does not hold, sizes that
// overflow, headers that disagree with the data. Each is refused with one line
// naming the file, the field and the value, before anything large is allocated.
#include <hdf5.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "bench_util.hpp"
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
namespace fs = std::filesystem;

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
// A new scan file with its root attributes (schema, matrix, fov = 1): the
// caller adds the datasets and closes it.
hid_t scan_file_with_header(const std::string& path, const char* schema, const int (&matrix)[3]) {
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, H5T_VARIABLE);
  hid_t scalar = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "fhdrecon_schema", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, str, &schema);
  H5Aclose(a);
  H5Sclose(scalar);
  H5Tclose(str);
  const float fov[3] = {1, 1, 1};
  attr(f, "matrix", H5T_NATIVE_INT, matrix);
  attr(f, "fov", H5T_NATIVE_FLOAT, fov);
  return f;
}

// h5py's complex64: compound {r, i} of float32.
hid_t complex_type() {
  hid_t cplx = H5Tcreate(H5T_COMPOUND, 8);
  H5Tinsert(cplx, "r", 0, H5T_NATIVE_FLOAT);
  H5Tinsert(cplx, "i", 4, H5T_NATIVE_FLOAT);
  return cplx;
}

void write_claiming_huge(const std::string& path, bool chunked) {
  hid_t f = scan_file_with_header(path, "1.0", {64, 64, 64});
  hid_t cplx = complex_type();
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
  for (hid_t id : {tsp, ksp}) H5Sclose(id);
  H5Tclose(cplx);
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

namespace {

// A valid 64-sample trajectory and a chunked /kspace [1024, 64] of which only
// `written` chunks (of 16 coils each) are stored: a file of a few KB that
// claims 1,024 coils. `deflate`: chunks compressed (all written, zeros).
void write_claiming_coils(const std::string& path, int written, bool deflate = false) {
  constexpr hsize_t kM = 64, kCoils = 1024, kPerChunk = 16;
  hid_t f = scan_file_with_header(path, "1.1", {16, 16, 1});
  std::vector<float> k(3 * kM, 0.0f);
  for (hsize_t i = 0; i < kM; ++i) k[3 * i] = float(i % 8) - 4, k[3 * i + 1] = float(i / 8) - 4;
  const hsize_t tdims[2] = {kM, 3};
  hid_t tsp = H5Screate_simple(2, tdims, nullptr);
  hid_t t = H5Dcreate2(f, "trajectory", H5T_IEEE_F32LE, tsp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(t, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, k.data());
  hid_t cplx = complex_type();
  const hsize_t kdims[2] = {kCoils, kM}, chunk[2] = {kPerChunk, kM};
  hid_t ksp = H5Screate_simple(2, kdims, nullptr), pl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(pl, 2, chunk);
  if (deflate) H5Pset_deflate(pl, 9);
  hid_t d = H5Dcreate2(f, "kspace", cplx, ksp, H5P_DEFAULT, pl, H5P_DEFAULT);
  std::vector<float> zeros(2 * kPerChunk * kM, 0.0f);
  for (int c = 0; c < written; ++c) {
    const hsize_t start[2] = {hsize_t(c) * kPerChunk, 0};
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(2, chunk, nullptr);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, chunk, nullptr);
    H5Dwrite(d, cplx, ms, fs, H5P_DEFAULT, zeros.data());
    H5Sclose(fs), H5Sclose(ms);
  }
  H5Dclose(d), H5Dclose(t);
  H5Pclose(pl);
  for (hid_t id : {tsp, ksp}) H5Sclose(id);
  H5Tclose(cplx);
  H5Fclose(f);
}

}  // namespace

TEST_CASE("hostile scan file: a few KB claiming 1,024 coils in a sparse chunked /kspace", "[io][hostile]") {
  TempDir dir;
  const std::string path = dir.file("coils.h5");
  write_claiming_coils(path, 1);
  REQUIRE(std::filesystem::file_size(path) < 24000);
  CHECK(contains(error_of([&] { read_scan_coils(path); }),
                 path + ": /kspace shape = [1024,64]: claims 524288 bytes but the file stores only 1 of its 64 "
                        "chunks (a sparse dataset"));
  // Every chunk stored, compressed: the data is there, the file is read.
  write_claiming_coils(path, 64, true);
  REQUIRE(std::filesystem::file_size(path) < 60000);
  std::vector<Scan> coils;
  CHECK(error_of([&] { coils = read_scan_coils(path); }) == "no error");
  CHECK(coils.size() == 1024);
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
  SECTION("a header that is a device, a FIFO or 2 GB is refused before it is read") {
    // Before: /dev/zero grew one endless line to 9.9 GB, a FIFO blocked for ever.
    fs::remove(t + ".hdr");
    fs::create_symlink("/dev/zero", t + ".hdr");
    CHECK(error_of([&] { read_bart_scan(t, k, g); }) == t + ".hdr: is not a regular file");
    fs::remove(t + ".hdr");
    REQUIRE(::mkfifo((t + ".hdr").c_str(), 0600) == 0);
    CHECK(error_of([&] { read_bart_scan(t, k, g); }) == t + ".hdr: is not a regular file");
    fs::remove(t + ".hdr");
    std::ofstream(t + ".hdr") << "# Dimensions\n3 32 1 1\n";
    fs::resize_file(t + ".hdr", std::uintmax_t(2) << 30);  // sparse: the dims line, then zeros
    CHECK(contains(error_of([&] { read_bart_scan(t, k, g); }),
                   t + ".hdr: size = 2147483648 bytes: a BART header is text of at most 65536 bytes"));
    fs::remove(t + ".hdr");
    fs::create_symlink("/dev/zero", k + ".cfl.dev");
    fs::remove(k + ".cfl");
    fs::rename(k + ".cfl.dev", k + ".cfl");  // the k-space's data a device: no size of 2^64 - 1 bytes
    CHECK(error_of([&] { read_cfl_dims(k); }) == k + ".cfl: is not a regular file");
  }
  SECTION("a dimension beyond a long is named as written") {
    std::ofstream(t + ".hdr") << "# Dimensions\n3 99999999999999999999999 1 1\n";
    CHECK(error_of([&] { read_bart_scan(t, k, g); }) ==
          t + ".hdr: # Dimensions[1] = 99999999999999999999999: must be an integer >= 1");
  }
  SECTION("the size check sees grid, samples and coils before the k-space is read") {
    std::size_t seen = 0, coils = 0;
    read_bart_scan(t, k, g, [&](const ImageGrid&, std::size_t m, std::size_t c) { seen = m, coils = c; });
    CHECK(seen == 32);
    CHECK(coils == 1);
  }
}

namespace {

// Overwrites the first stored copy of float `from` in `path` with `to`: a value
// our writers refuse, put where a hostile file would hold it.
void patch_float(const std::string& path, float from, float to) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::size_t at = bytes.find(std::string(reinterpret_cast<const char*>(&from), sizeof from));
  REQUIRE(at != std::string::npos);
  f.seekp(std::streamoff(at));
  f.write(reinterpret_cast<const char*>(&to), sizeof to);
}

}  // namespace

TEST_CASE("samples beyond the magnitude bound are refused by every reader, naming file, field and value",
          "[io][hostile]") {
  // 3e38 is finite, but sums over the samples overflow float32: the run gave
  // an empty image with exit 0.
  TempDir dir;
  Scan s = random_scan({16, 16, 1}, 64);
  s.data[5] = {0.71875f, 0.25f};  // a value no other sample has, to find in the file
  const std::string why = "exceeds 1e+12, the most a sample may have";
  SECTION("HDF5 scan") {
    const std::string f = dir.file("top.h5");
    write_scan(f, s);
    patch_float(f, 0.71875f, 3e38f);
    const std::string e = error_of([&] { read_scan(f); });
    CHECK(contains(e, f + ": /kspace[5] = (3.00000001e+38, 0.25): magnitude 3.00000001e+38 " + why));
  }
  SECTION("BART") {
    write_bart_scan(dir.file("t"), dir.file("k"), {s});
    {
      std::fstream f(dir.file("k.cfl"), std::ios::in | std::ios::out | std::ios::binary);
      const float top[2] = {-3e38f, 0.0f};
      f.write(reinterpret_cast<const char*>(top), sizeof top);  // sample 0 of coil 0
    }
    const std::string e = error_of([&] { read_bart_scan(dir.file("t"), dir.file("k"), s.grid); });
    CHECK(contains(e, dir.file("k.cfl") + ": sample[0] = (-3.00000001e+38, 0): magnitude 3.00000001e+38 " + why));
  }
  SECTION("just below the bound is read") {
    s.data[5] = {1e12f * 0.999f, 0};
    const std::string f = dir.file("edge.h5");
    write_scan(f, s);
    CHECK(read_scan(f).data[5] == s.data[5]);
  }
  SECTION("writers refuse it too") {
    s.data[5] = {0, 2e12f};
    const std::string e = error_of([&] { write_scan(dir.file("w.h5"), s); });
    INFO(e);
    CHECK(contains(e, "w.h5: kspace[5] = (0, 1.99999999e+12): magnitude"));
  }
#if defined(FHD_HAVE_ISMRMRD)
  SECTION("ISMRMRD") {
    const std::string f = dir.file("top.mrd");
    write_ismrmrd(f, {s}, 16);
    patch_float(f, 0.71875f, 3e38f);
    const std::string e = error_of([&] { read_ismrmrd(f); });
    CHECK(contains(e, f + ": /dataset/data sample"));
    CHECK(contains(e, "magnitude 3.00000001e+38 " + why));
  }
#endif
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

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <set>

#include <sys/wait.h>

#include "io/reader_child.hpp"

namespace {
// Readers for the child (io/reader_child.hpp); this executable serves them
// (tests/catch_main.cpp). Each marks that it ran in a file beside the input.
void mark(const std::string& path) { std::ofstream(path + ".ran") << ::getpid(); }
// 5 MiB of a pattern: more than a pipe holds, so the parent must read while the child writes.
std::string pattern() {
  std::string b(std::size_t(5) << 20, '\0');
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = char((i * 131) >> 7);
  return b;
}
const bool kReaders[] = {
    add_child_reader("test-ok", [](const std::string& p, const std::string&) { mark(p); return "read " + p; }),
    add_child_reader("test-large", [](const std::string&, const std::string&) { return pattern(); }),
    add_child_reader("test-empty", [](const std::string&, const std::string&) { return std::string(); }),
    add_child_reader("test-arg",  // its argument back, and two lines logged on the way
                     [](const std::string& p, const std::string& arg) {
                       mark(p);
                       spdlog::warn("{}: a warning\x1b[2J", p);
                       spdlog::debug("below the child's level");
                       spdlog::info("argument [{}]", arg);
                       return "arg " + arg;
                     }),
    add_child_reader("test-crash", [](const std::string& p, const std::string&) -> std::string {
      mark(p);
      std::signal(SIGSEGV, SIG_DFL);  // a plain crash, not the sanitizer's report of one
      std::raise(SIGSEGV);
      return "";
    }),
    add_child_reader("test-input-error",
                     [](const std::string& p, const std::string&) -> std::string {
                       spdlog::warn("logged before the error");
                       throw InputError(p, "/kspace", "x", "bad");
                     }),
    add_child_reader("test-sleep",
                     [](const std::string& p, const std::string&) -> std::string { mark(p); for (;;) pause(); }),
    add_child_reader("test-spin", [](const std::string& p, const std::string&) -> std::string {
      mark(p);
      for (volatile unsigned long i = 0;; i = i + 1) {
      }
    }),
    add_child_reader("test-alloc", [](const std::string&, const std::string&) {
      std::vector<char> v(std::size_t(64) << 30);
      return std::string(v.data(), 1);
    }),
    add_child_reader("test-fd", [](const std::string& p, const std::string&) {  // is the descriptor named in p.fd open here?
      std::ifstream in(p + ".fd");
      int fd = -1;
      in >> fd;
      std::ofstream(p + ".ran") << (::fcntl(fd, F_GETFD) == -1 ? "closed" : "open");
      return std::string();
    }),
};

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct ReadTimeout {
  explicit ReadTimeout(const char* s) { ::setenv("FHDRECON_READ_TIMEOUT", s, 1); }
  ~ReadTimeout() { ::unsetenv("FHDRECON_READ_TIMEOUT"); }
};

using fhd::bench::seconds_since;

}  // namespace

TEST_CASE("read_in_child hands over what the child read", "[io][hostile]") {
  TempDir dir;
  const std::string f = dir.file("any.h5");
  std::ofstream(f) << "0123456789";
  std::optional<std::string> got;
  CHECK(error_of([&] { got = read_in_child(f, "test-ok"); }) == "no error");
  CHECK(got == "read " + f);
  const std::string child = slurp(f + ".ran");
  CHECK(!child.empty());
  CHECK(child != std::to_string(::getpid()));  // it ran in another process
  CHECK(read_in_child(f, "test-large") == pattern());
  CHECK(read_in_child(f, "test-empty") == std::string());
}

// The argument and the log, through a fresh child and through a spare (whose
// request carries them): run once before keep_spare_reader and once after.
void check_argument_and_log(const std::string& f) {
  for (const std::string arg : {"normalized", "", "two words"}) {
    INFO("[" << arg << "]");
    LogCapture log;
    CHECK(read_in_child(f, "test-arg", arg) == "arg " + arg);
    const std::vector<std::string> lines = log.lines();
    REQUIRE(lines.size() == 2);  // the debug line is below the child's level
    CHECK(contains(lines[0], "[warning] " + f + ": a warning\\x1b[2J"));  // made printable in the child
    CHECK(contains(lines[1], "[info] argument [" + arg + "]"));
  }
  LogCapture log;  // an error stays one line: what was logged before it is not relayed
  CHECK(error_of([&] { read_in_child(f, "test-input-error"); }) == f + ": /kspace = x: bad");
  CHECK(log.lines().empty());
}

TEST_CASE("read_in_child passes the reader its argument and logs what the child logged", "[io][hostile]") {
  TempDir dir;
  const std::string f = dir.file("any.h5");
  std::ofstream(f) << "0123456789";
  check_argument_and_log(f);  // by a fresh child while no spare is kept (the spare's case is below)
}

TEST_CASE("read_in_child turns crashes, hangs and memory blow-ups into one InputError", "[io][hostile]") {
  TempDir dir;
  const std::string f = dir.file("any.h5");
  std::ofstream(f) << "0123456789";
  CHECK(contains(error_of([&] { read_in_child(f, "test-crash"); }),
                 f + ": libhdf5 crashed reading it (corrupt HDF5 structure; signal 11)"));
  CHECK(error_of([&] { read_in_child(f, "test-input-error"); }) == f + ": /kspace = x: bad");
  CHECK(contains(error_of([&] { read_in_child(f, "no-such-reader"); }), "no reader named no-such-reader"));
#if !defined(__SANITIZE_ADDRESS__)
  // 64 GB for a 10-byte file: the child's address-space cap refuses it.
  CHECK(contains(error_of([&] { read_in_child(f, "test-alloc"); }), "unreadable (corrupt?)"));
#endif
}

TEST_CASE("read_in_child: a sleeping or spinning child is ended at its time, never later", "[io][hostile]") {
  TempDir dir;
  const std::string f = dir.file("any.h5");
  std::ofstream(f) << "0123456789";
  ReadTimeout limit("2.5");  // time enough for a sanitized child to start on a loaded machine
  for (const char* reader : {"test-sleep", "test-spin"}) {
    INFO(reader);
    std::filesystem::remove(f + ".ran");
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(contains(error_of([&] { read_in_child(f, reader); }), "libhdf5 did not finish reading it in 2.5 s"));
    const double took = seconds_since(t0);
    CHECK(took >= 2.5);
    CHECK(took < 6);
    // The child is gone: its pid no longer names a process.
    const std::string pid = slurp(f + ".ran");
    REQUIRE(!pid.empty());
    CHECK(::kill(std::stoi(pid), 0) != 0);
  }
}

TEST_CASE("read_in_child: the default time is 6 s plus 1 s per 64 MiB", "[io][hostile]") {
  ::unsetenv("FHDRECON_READ_TIMEOUT");
  CHECK(reader_child_seconds(12e3) == Approx(6.0 + 12e3 / (64 << 20)));
  CHECK(reader_child_seconds(double(1u << 30)) == Approx(22.0));
  ReadTimeout limit("2.5");
  CHECK(reader_child_seconds(1e12) == 2.5);
}

TEST_CASE("read_in_child: the child inherits no descriptor but its pipe (no lock outlives us)", "[io][hostile]") {
  TempDir dir;
  const std::string f = dir.file("any.h5");
  std::ofstream(f) << "0123456789";
  // A descriptor without O_CLOEXEC, as a library might leave one (the output
  // directory's flock is one with it): the child must not hold it.
  const int opened = ::open(f.c_str(), O_RDONLY);
  const int fd = ::fcntl(opened, F_DUPFD, 20);  // above the child's result descriptor, 3
  ::close(opened);
  REQUIRE(fd >= 20);
  std::ofstream(f + ".fd") << fd;
  CHECK(error_of([&] { read_in_child(f, "test-fd"); }) == "no error");
  ::close(fd);
  CHECK(slurp(f + ".ran") == "closed");
}

TEST_CASE("read_in_child with a spare child: a child per read, a dead spare replaced, the same errors",
          "[io][hostile]") {
  TempDir dir;
  const std::string f = dir.file("any.h5");
  std::ofstream(f) << "0123456789";
  keep_spare_reader();  // for the rest of this process: the later cases read through spares too
  REQUIRE(spare_reader_pid() > 0);
  std::set<std::string> children;
  for (int i = 0; i < 3; ++i) {
    const int waiting = spare_reader_pid();
    CHECK(read_in_child(f, "test-ok") == "read " + f);
    CHECK(slurp(f + ".ran") == std::to_string(waiting));  // the spare read it
    CHECK(spare_reader_pid() != waiting);                  // and the next one waits
    children.insert(slurp(f + ".ran"));
  }
  CHECK(children.size() == 3);  // each read in a child that read nothing before
  CHECK(!children.count(std::to_string(::getpid())));
  // A spare that died while it waited: the next read starts a fresh child.
  const int spare = spare_reader_pid();
  REQUIRE(spare > 0);
  ::kill(spare, SIGKILL);
  siginfo_t info{};
  for (int i = 0; i < 500 && info.si_pid != spare; ++i) {
    ::waitid(P_PID, id_t(spare), &info, WEXITED | WNOHANG | WNOWAIT);
    if (info.si_pid != spare) ::usleep(2000);
  }
  REQUIRE(info.si_pid == spare);
  CHECK(read_in_child(f, "test-ok") == "read " + f);
  CHECK(slurp(f + ".ran") != std::to_string(spare));
  // What a spare reports is what a fresh child reports.
  CHECK(read_in_child(f, "test-large") == pattern());
  CHECK(contains(error_of([&] { read_in_child(f, "test-crash"); }),
                 f + ": libhdf5 crashed reading it (corrupt HDF5 structure; signal 11)"));
  CHECK(error_of([&] { read_in_child(f, "test-input-error"); }) == f + ": /kspace = x: bad");
  check_argument_and_log(f);
  CHECK(spare_reader_pid() > 0);
}
