#include "io/scan_bytes.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace fhd {
namespace {

constexpr char kMagic[8] = {'F', 'H', 'D', 'S', 'C', 'A', 'N', 'S'};
constexpr std::uint32_t kVersion = 1;
constexpr char kFieldMagic[8] = {'F', 'H', 'D', 'F', 'M', 'A', 'P', '1'};
constexpr int kMaxAxis = 65536;  // the readers' own bound on a matrix axis

// Appends values to a buffer sized once beforehand (a large scan is copied once).
struct Out {
  std::string& s;
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void array(const std::vector<T>& v) {
    put(std::uint64_t(v.size()));
    s.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void text(const std::string& t) {
    put(std::uint64_t(t.size()));
    s.append(t);
  }
};

// Bitwise, not ==: -0.0 and NaN payloads survive the trip.
bool same_trajectory(const Trajectory& a, const Trajectory& b) {
  auto same = [](const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  };
  return same(a.kx, b.kx) && same(a.ky, b.ky) && same(a.kz, b.kz);
}

std::size_t size_of(const Scan& s, bool shared_traj) {
  auto arr = [](const auto& v) { return 8 + v.size() * sizeof(v[0]); };
  std::size_t n = 3 * 4 + 1 + 1;
  if (!shared_traj) n += arr(s.traj.kx) + arr(s.traj.ky) + arr(s.traj.kz);
  n += arr(s.data) + arr(s.phi) + arr(s.dcf) + arr(s.noise) + arr(s.field.hz) + arr(s.field.times) + 8;
  for (const auto& [k, v] : s.provenance) n += 16 + k.size() + v.size();
  return n + (s.geometry ? 15 * 8 : 0);
}

void put_geometry(Out& o, const ScanGeometry& g) {
  for (const auto* v : {&g.fov_mm, &g.position, &g.read_dir, &g.phase_dir, &g.slice_dir})
    for (double x : *v) o.put(x);
}

void put_scan(Out& o, const Scan& s, bool shared_traj) {
  o.put(std::int32_t(s.grid.nx)), o.put(std::int32_t(s.grid.ny)), o.put(std::int32_t(s.grid.nz));
  o.put(std::uint8_t(shared_traj));
  if (!shared_traj) o.array(s.traj.kx), o.array(s.traj.ky), o.array(s.traj.kz);
  o.array(s.data), o.array(s.phi), o.array(s.dcf), o.array(s.noise), o.array(s.field.hz), o.array(s.field.times);
  o.put(std::uint64_t(s.provenance.size()));
  for (const auto& [k, v] : s.provenance) o.text(k), o.text(v);
  o.put(std::uint8_t(s.geometry.has_value()));
  if (s.geometry) put_geometry(o, *s.geometry);
}

// Reads values back, each count checked against what is left before allocating.
struct In {
  const char* p;
  std::size_t left;
  const std::string& where;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(where + ": the reader child's result is malformed (" + what + ")");
  }
  template <class T>
  T get(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (left < sizeof(T)) fail(std::string(what) + " cut short");
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v, left -= sizeof v;
    return v;
  }
  // A count of `unit`-byte elements that the bytes left can hold.
  std::size_t count(const char* what, std::size_t unit) {
    const std::uint64_t n = get<std::uint64_t>(what);
    if (n > left / unit) fail(std::string(what) + " claims " + std::to_string(n) + " elements, more than is left");
    return std::size_t(n);
  }
  template <class T>
  void array(std::vector<T>& v, const char* what) {
    v.resize(count(what, sizeof(T)));
    if (!v.empty()) std::memcpy(v.data(), p, v.size() * sizeof(T));
    p += v.size() * sizeof(T), left -= v.size() * sizeof(T);
  }
  std::string text(const char* what) {
    const std::size_t n = count(what, 1);
    std::string t(p, n);
    p += n, left -= n;
    return t;
  }
};

ImageGrid get_grid(In& in) {
  ImageGrid g;
  for (int* axis : {&g.nx, &g.ny, &g.nz}) {
    const std::int32_t v = in.get<std::int32_t>("grid");
    if (v < 1 || v > kMaxAxis) in.fail("grid axis " + std::to_string(v));
    *axis = v;
  }
  return g;
}

ScanGeometry get_geometry(In& in) {
  ScanGeometry g;
  for (auto* v : {&g.fov_mm, &g.position, &g.read_dir, &g.phase_dir, &g.slice_dir})
    for (double& x : *v) x = in.get<double>("geometry");
  return g;
}

Scan get_scan(In& in, const Scan* previous) {
  Scan s;
  s.grid = get_grid(in);
  if (in.get<std::uint8_t>("trajectory flag")) {
    if (!previous) in.fail("the first scan shares a trajectory");
    s.traj = previous->traj;
  } else {
    in.array(s.traj.kx, "kx"), in.array(s.traj.ky, "ky"), in.array(s.traj.kz, "kz");
  }
  in.array(s.data, "data"), in.array(s.phi, "phi"), in.array(s.dcf, "dcf"), in.array(s.noise, "noise");
  in.array(s.field.hz, "field map"), in.array(s.field.times, "sample times");
  const std::size_t entries = in.count("provenance", 16);
  for (std::size_t i = 0; i < entries; ++i) {
    std::string key = in.text("provenance key");
    s.provenance[key] = in.text("provenance value");
  }
  if (in.get<std::uint8_t>("geometry flag")) s.geometry = get_geometry(in);
  return s;
}

}  // namespace

std::string scans_to_bytes(const std::vector<Scan>& scans) {
  std::vector<bool> shared(scans.size(), false);
  std::size_t total = sizeof kMagic + 4 + 8;
  for (std::size_t i = 0; i < scans.size(); ++i) {
    shared[i] = i > 0 && same_trajectory(scans[i].traj, scans[i - 1].traj);
    total += size_of(scans[i], shared[i]);
  }
  std::string bytes;
  bytes.reserve(total);
  Out o{bytes};
  bytes.append(kMagic, sizeof kMagic);
  o.put(kVersion);
  o.put(std::uint64_t(scans.size()));
  for (std::size_t i = 0; i < scans.size(); ++i) put_scan(o, scans[i], shared[i]);
  return bytes;
}

namespace {

void skip_magic(In& in, const char (&magic)[8]) {
  if (in.left < sizeof magic || std::memcmp(in.p, magic, sizeof magic) != 0) in.fail("no magic");
  in.p += sizeof magic, in.left -= sizeof magic;
}

}  // namespace

std::string field_map_to_bytes(const FieldMapFile& map) {
  std::string bytes;
  bytes.reserve(sizeof kFieldMagic + 16 + 8 * map.dims.size() + 4 * map.hz.size());
  Out o{bytes};
  bytes.append(kFieldMagic, sizeof kFieldMagic);
  o.array(map.dims);
  o.array(map.hz);
  return bytes;
}

FieldMapFile field_map_from_bytes(const std::string& bytes, const std::string& where) {
  In in{bytes.data(), bytes.size(), where};
  skip_magic(in, kFieldMagic);
  FieldMapFile map;
  in.array(map.dims, "field map dims");
  in.array(map.hz, "field map values");
  double points = 1;
  for (std::uint64_t d : map.dims) points *= double(d);
  if (points != double(map.hz.size())) in.fail("field map values do not fill its dims");
  if (in.left != 0) in.fail(std::to_string(in.left) + " bytes after the field map");
  return map;
}

std::vector<Scan> scans_from_bytes(const std::string& bytes, const std::string& where) {
  In in{bytes.data(), bytes.size(), where};
  skip_magic(in, kMagic);
  const std::uint32_t version = in.get<std::uint32_t>("version");
  if (version != kVersion) in.fail("version " + std::to_string(version));
  // The smallest scan: grid, two flags, six empty arrays and no provenance.
  const std::size_t n = in.count("scan count", 3 * 4 + 2 + 7 * 8);
  std::vector<Scan> scans;
  scans.reserve(n);
  for (std::size_t i = 0; i < n; ++i) scans.push_back(get_scan(in, i ? &scans.back() : nullptr));
  if (in.left != 0) in.fail(std::to_string(in.left) + " bytes after the last scan");
  return scans;
}

}  // namespace fhd
