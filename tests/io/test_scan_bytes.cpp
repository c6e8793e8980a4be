// The reader child's hand-over format (io/scan_bytes.hpp): every field of every
// scan comes back bit for bit, and a malformed buffer is refused before anything
// is allocated for what it claims.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "catch.hpp"
#include "io/scan_bytes.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool same_geometry(const std::optional<ScanGeometry>& a, const std::optional<ScanGeometry>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->fov_mm == b->fov_mm && a->position == b->position && a->read_dir == b->read_dir &&
         a->phase_dir == b->phase_dir && a->slice_dir == b->slice_dir;
}

bool same_scan(const Scan& a, const Scan& b) {
  return a.grid == b.grid && same_bits(a.traj.kx, b.traj.kx) && same_bits(a.traj.ky, b.traj.ky) &&
         same_bits(a.traj.kz, b.traj.kz) && same_bits(a.data, b.data) && same_bits(a.phi, b.phi) &&
         same_bits(a.dcf, b.dcf) && same_bits(a.noise, b.noise) && same_bits(a.field.hz, b.field.hz) &&
         same_bits(a.field.times, b.field.times) && a.provenance == b.provenance && same_geometry(a.geometry, b.geometry);
}

// Three coils: the first two share a trajectory, the third has its own, with
// -0.0 and a NaN (kept bitwise); every optional field is filled on some coil.
std::vector<Scan> three_coils() {
  Scan a = random_scan({16, 12, 8}, 40, 3);
  a.phi.assign(40, cfloat(0.5f, -0.25f));
  a.dcf.assign(40, 0.125f);
  a.noise = {cfloat(1, 2), cfloat(3, 4)};
  a.field.hz.assign(a.grid.voxels(), -3.5f);
  a.field.times.assign(40, 1e-5f);
  a.provenance = {{"trajectory", "radial3d"}, {"coil", "0"}, {"", "empty key"}, {"bytes", std::string("a\0b", 3)}};
  ScanGeometry g;
  g.fov_mm = {220, 200, 3};
  g.position = {1.5, -2.25, 40};
  g.read_dir = {0, 1, 0};
  a.geometry = g;
  Scan b = a;
  for (auto& x : b.data) x *= 2.0f;
  b.provenance["coil"] = "1";
  b.geometry.reset();
  Scan c = random_scan({16, 12, 8}, 40, 9);
  c.traj.kx[0] = -0.0f;
  c.traj.ky[1] = std::nanf("");
  return {a, b, c};
}

}  // namespace

TEST_CASE("scan bytes: every field of every coil survives the round trip", "[io][scan-bytes]") {
  const std::vector<Scan> in = three_coils();
  const std::string bytes = scans_to_bytes(in);
  const std::vector<Scan> out = scans_from_bytes(bytes, "f.h5");
  REQUIRE(out.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    INFO("coil " << i);
    CHECK(same_scan(in[i], out[i]));
  }
  CHECK(std::signbit(out[2].traj.kx[0]));
  // Coil 1 shares coil 0's trajectory, which is sent once: after coil 2 it is sent again.
  const std::size_t traj = 3 * (8 + 40 * sizeof(float));
  CHECK(scans_to_bytes({in[0], in[2], in[1]}).size() == bytes.size() + traj);
  CHECK(scans_from_bytes(scans_to_bytes({}), "f.h5").empty());
}

TEST_CASE("scan bytes: a malformed buffer is refused, naming what is wrong", "[io][scan-bytes]") {
  const std::string good = scans_to_bytes(three_coils());
  auto error = [](const std::string& b) { return error_of([&] { scans_from_bytes(b, "f.h5"); }); };
  CHECK(contains(error("XHDSCANS"), "f.h5: the reader child's result is malformed (no magic)"));
  std::string v = good;
  v[8] = 7;
  CHECK(contains(error(v), "(version 7)"));
  // Every cut is refused: nothing reads past the end.
  for (std::size_t n : {std::size_t(12), std::size_t(20), good.size() / 2, good.size() - 1})
    CHECK(contains(error(good.substr(0, n)), "malformed"));
  CHECK(contains(error(good + "x"), "1 bytes after the last scan"));
  // A count of 2^60 scans, or a kx of 2^60 floats, is refused before any allocation.
  std::string huge = good;
  const std::uint64_t big = std::uint64_t(1) << 60;
  std::memcpy(&huge[12], &big, 8);
  CHECK(contains(error(huge), "scan count claims 1152921504606846976 elements, more than is left"));
  huge = good;
  std::memcpy(&huge[20 + 12 + 1], &big, 8);  // the first scan's kx count
  CHECK(contains(error(huge), "kx claims"));
  std::string grid = good;
  const std::int32_t zero = 0;
  std::memcpy(&grid[20], &zero, 4);
  CHECK(contains(error(grid), "grid axis 0"));
}

TEST_CASE("field map bytes: the dataset survives the round trip; malformed bytes are refused", "[io][scan-bytes]") {
  FieldMapFile map{{4, 3, 2}, {}};
  for (int i = 0; i < 24; ++i) map.hz.push_back(float(i) * 1.5f - 7.f);
  const std::string good = field_map_to_bytes(map);
  const FieldMapFile back = field_map_from_bytes(good, "m.h5");
  CHECK(back.dims == map.dims);
  CHECK(back.hz == map.hz);
  CHECK(field_map_for_grid("m.h5", back, ImageGrid{4, 3, 2}) == map.hz);
  CHECK_THROWS_WITH(field_map_for_grid("m.h5", back, ImageGrid{4, 4, 2}), Catch::Contains("/field_map shape"));
  auto error = [](const std::string& b) { return error_of([&] { field_map_from_bytes(b, "m.h5"); }); };
  CHECK(contains(error(good.substr(0, 8) + "x"), "malformed"));
  CHECK(contains(error("FHDSCANS" + good.substr(8)), "(no magic)"));
  for (std::size_t n : {std::size_t(7), std::size_t(20), good.size() - 1}) CHECK(contains(error(good.substr(0, n)), "malformed"));
  CHECK(contains(error(good + "x"), "1 bytes after the field map"));
  FieldMapFile wrong = map;
  wrong.dims = {5, 5};
  CHECK(contains(error(field_map_to_bytes(wrong)), "do not fill its dims"));
}
