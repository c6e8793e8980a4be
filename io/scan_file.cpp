#include "io/scan_file.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <spdlog/spdlog.h>

#include "io/atomic_file.hpp"
#include "io/h5util.hpp"
#include "io/scan_checks.hpp"
#include "core/error.hpp"

namespace fhd {
namespace {
using h5::check;
using h5::check_id;
using h5::Handle;
using h5::write_attr;
using h5::write_dataset;

// ---- writing ----

void write_complex(hid_t file, const char* name, const std::vector<cfloat>& v, std::vector<hsize_t> dims) {
  Handle t = h5::complex_type();  // std::complex<float> is layout-compatible with {r, i}
  write_dataset(file, name, t.get(), t.get(), dims, v.data());
}

// One coil's vector as [M], several as [C, M] (coil slowest).
void write_coil_field(hid_t file, const char* name, const std::vector<const Scan*>& coils,
                      std::vector<cfloat> Scan::*field) {
  const std::vector<cfloat>& first = coils[0]->*field;
  if (coils.size() == 1) return write_complex(file, name, first, {hsize_t(first.size())});
  std::vector<cfloat> all;
  all.reserve(coils.size() * first.size());
  for (const Scan* c : coils) all.insert(all.end(), (c->*field).begin(), (c->*field).end());
  write_complex(file, name, all, {hsize_t(coils.size()), hsize_t(first.size())});
}

void write_contents(hid_t f, const std::vector<const Scan*>& coils, const std::array<float, 3>& fov) {
  const Scan& s = *coils[0];
  const std::size_t m = s.traj.size();
  std::vector<float> k(3 * m);
  for (std::size_t i = 0; i < m; ++i) {
    k[3 * i] = s.traj.kx[i];
    k[3 * i + 1] = s.traj.ky[i];
    k[3 * i + 2] = s.traj.kz[i];
  }
  write_dataset(f, "trajectory", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {hsize_t(m), 3}, k.data());
  write_coil_field(f, "kspace", coils, &Scan::data);
  if (!s.noise.empty()) write_coil_field(f, "noise", coils, &Scan::noise);
  if (!s.phi.empty()) write_complex(f, "phi", s.phi, {hsize_t(m)});
  if (!s.dcf.empty()) write_dataset(f, "dcf", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {hsize_t(m)}, s.dcf.data());
  if (!s.field.hz.empty())
    write_dataset(f, "field_map", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {hsize_t(s.field.hz.size())}, s.field.hz.data());
  if (!s.field.times.empty())
    write_dataset(f, "sample_times", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, {hsize_t(s.field.times.size())},
                  s.field.times.data());  // validate_field made it m
  const bool coil_schema = coils.size() > 1 || !s.noise.empty();
  h5::write_string_attr(f, "fhdrecon_schema", coil_schema ? kScanSchemaVersionCoils : kScanSchemaVersion);
  const int matrix[3] = {s.grid.nx, s.grid.ny, s.grid.nz};
  write_attr(f, "matrix", H5T_NATIVE_INT, H5T_STD_I32LE, 3, matrix);
  write_attr(f, "fov", H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, 3, fov.data());
  Handle g(check_id(H5Gcreate2(f, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "provenance"), H5Gclose);
  for (const auto& [key, value] : s.provenance) h5::write_string_attr(g.get(), key, value);
}

// The coils after the first: same sample count, finite; noise counts equal to coil 0's.
void check_coils(const std::string& path, const std::vector<const Scan*>& coils) {
  const std::size_t m = coils[0]->traj.size(), mn = coils[0]->noise.size();
  for (std::size_t c = 0; c < coils.size(); ++c) {
    const std::string coil = "coil " + std::to_string(c);
    if (coils[c]->data.size() != m)
      throw InputError(path, coil + " data length", std::to_string(coils[c]->data.size()),
                       "must equal the trajectory's " + std::to_string(m) + " samples");
    if (coils[c]->noise.size() != mn)
      throw InputError(path, coil + " noise length", std::to_string(coils[c]->noise.size()),
                       "must equal coil 0's " + std::to_string(mn) + " noise samples");
    validate_finite(coils[c]->data, path, "/kspace[" + std::to_string(c) + "]");
    validate_finite(coils[c]->noise, path, "/noise[" + std::to_string(c) + "]");
  }
}

void write_coils(const std::string& path, const std::vector<const Scan*>& coils, std::array<float, 3> fov) {
  if (coils.empty()) throw InputError(path, "coils", "0", "nothing to write");
  if (const auto& g = coils[0]->geometry)  // the file holds the FOV (mm), not the orientation
    fov = {float(g->fov_mm[0]), float(g->fov_mm[1]), float(g->fov_mm[2])};
  validate_scan(*coils[0], path);  // never write a file our own reader would refuse
  validate_field(*coils[0], path);
  check_coils(path, coils);
  for (float v : fov)
    if (!(v > 0) || !std::isfinite(v)) throw InputError(path, "fov", std::to_string(v), "must be finite and > 0");
  h5::QuietErrors quiet;
  AtomicOutput out(path);
  {
    Handle f = h5::create_file(out.tmp());
    write_contents(f.get(), coils, fov);
    check(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), "flush");
    f.close("close " + path);  // checked: a failed close means a broken file
  }
  out.commit();
}

// ---- reading ----

struct Reader {
  const std::string& file;
  hid_t f;

  Handle open(const std::string& name, bool required) const {
    if (!h5::exists(f, name)) {
      if (required) throw InputError(file, "/" + name, "(missing)", "required dataset is missing");
      return {};
    }
    hid_t d = H5Dopen2(f, name.c_str(), H5P_DEFAULT);
    if (d < 0) throw InputError(file, "/" + name, "(not a dataset)", "expected a dataset");
    return Handle(d, H5Dclose);
  }

  void expect_shape(hid_t d, const std::string& name, std::vector<hsize_t> want) const {
    auto got = h5::shape(d);
    if (got != want) throw InputError(file, "/" + name + " shape", dims_text(got), "expected " + dims_text(want));
  }

  static std::string dims_text(const std::vector<hsize_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
  }

  void expect_float(hid_t d, const std::string& name) const {
    Handle t(H5Dget_type(d), H5Tclose);
    if (H5Tget_class(t.get()) != H5T_FLOAT)
      throw InputError(file, "/" + name + " dtype", h5::class_name(t.get()), "expected float32 (float64 is accepted)");
  }

  // A complex dataset must be a compound with float members named r and i (h5py, MATLAB).
  void expect_complex(hid_t d, const std::string& name) const {
    Handle t(H5Dget_type(d), H5Tclose);
    bool ok = H5Tget_class(t.get()) == H5T_COMPOUND && H5Tget_nmembers(t.get()) == 2;
    for (const char* member : {"r", "i"}) {
      int idx = ok ? H5Tget_member_index(t.get(), member) : -1;
      ok = ok && idx >= 0 && H5Tget_member_class(t.get(), unsigned(idx)) == H5T_FLOAT;
    }
    if (!ok)
      throw InputError(file, "/" + name + " dtype", h5::class_name(t.get()),
                       "expected complex64 as compound {r float32, i float32}");
  }

  // The samples the trajectory claims, checked against what the file stores
  // and what memory holds, before anything is read.
  std::size_t samples() const {
    Handle d = open("trajectory", true);
    expect_float(d.get(), "trajectory");
    auto dims = h5::shape(d.get());
    if (dims.size() != 2 || dims[1] != 3 || dims[0] == 0)
      throw InputError(file, "/trajectory shape", dims_text(dims), "expected [M,3] with M > 0");
    expect_stored(d.get(), "trajectory", dims);
    return dims[0];
  }

  void trajectory(Trajectory& t, std::size_t m) const {
    Handle d = open("trajectory", true);
    const std::vector<hsize_t> dims = {m, 3};
    std::vector<float> k(3 * dims[0]);
    read(d.get(), H5T_NATIVE_FLOAT, k.data(), "trajectory");
    t.resize(dims[0]);
    for (std::size_t i = 0; i < dims[0]; ++i) {
      t.kx[i] = k[3 * i];
      t.ky[i] = k[3 * i + 1];
      t.kz[i] = k[3 * i + 2];
    }
  }

  // A dataset must store the data its shape claims (a 12 KB file cannot hold
  // 2^40 samples, nor 1,024 coils) and fit in memory. A contiguous one stores
  // every byte. A chunked one (h5py's compressed datasets) stores every chunk
  // (a missing chunk reads as fill values: a sparse dataset backs nothing),
  // and at least 1/kMaxRatio of the bytes: deflate, the filter every HDF5
  // has, packs at most about 1032:1.
  void expect_stored(hid_t d, const std::string& name, const std::vector<hsize_t>& dims) const {
    double points = 1;
    for (hsize_t v : dims) points *= double(v);
    Handle t(H5Dget_type(d), H5Tclose);
    const double bytes = points * double(H5Tget_size(t.get()));
    const double stored = double(H5Dget_storage_size(d));
    auto refuse = [&](const std::string& what) {
      throw InputError(file, "/" + name + " shape", dims_text(dims),
                       "claims " + std::to_string(std::uint64_t(bytes)) + " bytes but the file stores " + what);
    };
    Handle plist(H5Dget_create_plist(d), H5Pclose);
    const H5D_layout_t layout = plist.ok() ? H5Pget_layout(plist.get()) : H5D_LAYOUT_ERROR;
    if (layout == H5D_CONTIGUOUS && stored != bytes)
      refuse(std::to_string(std::uint64_t(stored)) + " (truncated or corrupt)");
    check_allocation(points * 8.0, file, "/" + name + " shape", dims_text(dims));
    if (layout == H5D_CHUNKED) {
      const auto [have, want] = chunks(d, plist.get(), dims);
      if (have < want)
        refuse("only " + std::to_string(std::uint64_t(have)) + " of its " + std::to_string(std::uint64_t(want)) +
               " chunks (a sparse dataset: the rest would be fill values)");
      constexpr double kMaxRatio = 1100;
      if (stored * kMaxRatio < bytes)
        refuse(std::to_string(std::uint64_t(stored)) + ", more than deflate's 1032:1 could pack (corrupt)");
    }
  }

  // Chunks written in the file, and chunks the shape needs.
  static std::pair<double, double> chunks(hid_t d, hid_t plist, const std::vector<hsize_t>& dims) {
    std::vector<hsize_t> chunk(dims.size(), 0);
    if (dims.empty() || H5Pget_chunk(plist, int(dims.size()), chunk.data()) != int(dims.size())) return {0, 1};
    double want = 1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (chunk[i] == 0) return {0, 1};
      want *= std::ceil(double(dims[i]) / double(chunk[i]));
    }
    hsize_t have = 0;
    Handle space(H5Dget_space(d), H5Sclose);
    if (!space.ok() || H5Dget_num_chunks(d, space.get(), &have) < 0) return {0, want};
    return {double(have), want};
  }

  std::vector<cfloat> complex(const std::string& name, std::size_t m, bool required) const {
    Handle d = open(name, required);
    if (!d.ok()) return {};
    expect_complex(d.get(), name);
    expect_shape(d.get(), name, {hsize_t(m)});
    expect_stored(d.get(), name, {hsize_t(m)});
    std::vector<cfloat> v(m);
    Handle t = h5::complex_type();
    read(d.get(), t.get(), v.data(), name);
    return v;
  }

  // [m] (one coil) or [C, m] (C coils, coil slowest); m = 0: any length > 0.
  // coils > 0: the first dimension must be that (1 for rank 1). Returns the
  // shape as (C, n) after checking it, the stored bytes and memory.
  std::pair<std::size_t, std::size_t> coil_shape(hid_t d, const std::string& name, std::size_t m,
                                                 std::size_t coils) const {
    expect_complex(d, name);
    auto dims = h5::shape(d);
    const std::size_t c = dims.size() == 2 ? dims[0] : 1, n = dims.empty() ? 0 : dims.back();
    const bool ok = (dims.size() == 1 || dims.size() == 2) && c > 0 && n > 0 && (m == 0 || n == m) &&
                    (coils == 0 || c == coils) && c <= kMaxCoils;
    if (!ok) {
      std::string want = m ? "[" + std::to_string(m) + "] or [C," + std::to_string(m) + "]" : "[M] or [C,M], M > 0";
      if (coils) want += " with C = " + std::to_string(coils) + " (the coils of /kspace)";
      throw InputError(file, "/" + name + " shape", dims_text(dims),
                       "expected " + want + ", C <= " + std::to_string(kMaxCoils));
    }
    expect_stored(d, name, dims);
    return {c, n};
  }

  // The coil count of /kspace, checked, before anything is read.
  std::size_t coil_count(std::size_t m) const {
    Handle d = open("kspace", true);
    return coil_shape(d.get(), "kspace", m, 0).first;
  }

  std::vector<std::vector<cfloat>> coil_complex(const std::string& name, std::size_t m, std::size_t coils,
                                                bool required) const {
    Handle d = open(name, required);
    if (!d.ok()) return {};
    const auto [c, n] = coil_shape(d.get(), name, m, coils);
    std::vector<cfloat> all(c * n);
    Handle t = h5::complex_type();
    read(d.get(), t.get(), all.data(), name);
    std::vector<std::vector<cfloat>> out(c);
    for (std::size_t i = 0; i < c; ++i) out[i].assign(all.begin() + i * n, all.begin() + (i + 1) * n);
    return out;
  }

  std::vector<float> real(const std::string& name, std::size_t m) const {
    Handle d = open(name, false);
    if (!d.ok()) return {};
    expect_float(d.get(), name);
    expect_shape(d.get(), name, {hsize_t(m)});
    expect_stored(d.get(), name, {hsize_t(m)});
    std::vector<float> v(m);
    read(d.get(), H5T_NATIVE_FLOAT, v.data(), name);
    return v;
  }

  void read(hid_t d, hid_t mem, void* out, const std::string& name) const {
    if (H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
      throw InputError(file, "/" + name, "(unreadable)", "HDF5 cannot read the data (truncated or corrupt?)");
  }

  // Numeric root attribute of exactly 3 elements of the wanted class.
  template <class T>
  std::array<T, 3> attr3(const char* name, H5T_class_t cls, hid_t mem) const {
    const std::string field = std::string("attribute ") + name;
    if (H5Aexists(f, name) <= 0) throw InputError(file, field, "(missing)", "required attribute is missing");
    Handle a(H5Aopen(f, name, H5P_DEFAULT), H5Aclose);
    Handle t(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(t.get()) != cls)
      throw InputError(file, field + " dtype", h5::class_name(t.get()),
                       cls == H5T_INTEGER ? "expected int32[3]" : "expected float32[3]");
    Handle sp(H5Aget_space(a.get()), H5Sclose);
    hssize_t n = H5Sget_simple_extent_npoints(sp.get());
    if (n != 3) throw InputError(file, field + " length", std::to_string(n), "expected 3 values (x, y, z)");
    std::array<T, 3> v{};
    if (H5Aread(a.get(), mem, v.data()) < 0) throw InputError(file, field, "(unreadable)", "cannot read");
    return v;
  }

  void schema() const {
    std::string v = h5::read_string_attr(f, "fhdrecon_schema", file, "attribute fhdrecon_schema");
    std::string major = v.substr(0, v.find('.'));
    if (major != "1")
      throw InputError(file, "attribute fhdrecon_schema", "\"" + v + "\"",
                       "unknown major schema version; this build reads 1.x");
  }

  // Provenance only describes the scan: what cannot be read as text is
  // skipped with a warning, never a reason to refuse the scan.
  std::map<std::string, std::string> provenance() const {
    std::map<std::string, std::string> out;
    if (!h5::exists(f, "provenance")) return out;
    Handle g(H5Gopen2(f, "provenance", H5P_DEFAULT), H5Gclose);
    if (!g.ok()) {
      spdlog::warn("{}: /provenance is not a group of attributes; skipped", printable(file));
      return out;
    }
    // H5Aiterate2 exists unchanged in HDF5 1.10 through 1.14 (H5Oget_info does not).
    std::vector<std::string> names;
    auto collect = [](hid_t, const char* name, const H5A_info_t*, void* op) -> herr_t {
      static_cast<std::vector<std::string>*>(op)->push_back(name);
      return 0;
    };
    H5Aiterate2(g.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names);
    for (const auto& name : names)
      if (std::optional<std::string> v = provenance_value(g.get(), name)) out[name] = *v;
    return out;
  }

  // A string, or one integer or float (h5py's attrs['seed'] = 5 is an int64)
  // as its decimal text; anything else nullopt, with one warning naming it.
  std::optional<std::string> provenance_value(hid_t g, const std::string& name) const {
    const std::string field = "/provenance attribute " + name;
    try {
      Handle a(H5Aopen(g, name.c_str(), H5P_DEFAULT), H5Aclose);
      Handle t(a.ok() ? H5Aget_type(a.get()) : H5I_INVALID_HID, H5Tclose);
      Handle sp(a.ok() ? H5Aget_space(a.get()) : H5I_INVALID_HID, H5Sclose);
      if (!t.ok() || !sp.ok()) throw InputError(file, field, "?", "cannot be opened");
      const H5T_class_t cls = H5Tget_class(t.get());
      if (cls == H5T_STRING) return h5::read_string_attr(g, name, file, field);
      const bool one = H5Sget_simple_extent_npoints(sp.get()) == 1;
      if (one && (cls == H5T_INTEGER || cls == H5T_FLOAT)) return attribute_number(a.get(), t.get(), field);
      throw InputError(file, field, h5::class_name(t.get()) + (one ? "" : " array"), "not a string or one number");
    } catch (const InputError& e) {
      spdlog::warn("{}; skipped", e.what());
      return std::nullopt;
    }
  }

  // One number's text: integers exact, floats the shortest that reads back the same.
  std::string attribute_number(hid_t a, hid_t t, const std::string& field) const {
    const bool is_float = H5Tget_class(t) == H5T_FLOAT;
    float f32 = 0;
    double f64 = 0;
    std::int64_t i64 = 0;
    std::uint64_t u64 = 0;
    if (is_float && H5Tget_size(t) <= 4 && H5Aread(a, H5T_NATIVE_FLOAT, &f32) >= 0) return fmt::format("{}", f32);
    if (is_float && H5Tget_size(t) > 4 && H5Aread(a, H5T_NATIVE_DOUBLE, &f64) >= 0) return fmt::format("{}", f64);
    if (!is_float && H5Tget_sign(t) == H5T_SGN_NONE && H5Aread(a, H5T_NATIVE_UINT64, &u64) >= 0)
      return std::to_string(u64);
    if (!is_float && H5Tget_sign(t) != H5T_SGN_NONE && H5Aread(a, H5T_NATIVE_INT64, &i64) >= 0)
      return std::to_string(i64);
    throw InputError(file, field, h5::class_name(t), "cannot be read as a number");
  }
};

}  // namespace

void write_scan(const std::string& path, const Scan& scan, const std::array<float, 3>& fov) {
  write_coils(path, {&scan}, fov);
}

void write_scan_coils(const std::string& path, const std::vector<Scan>& coils, const std::array<float, 3>& fov) {
  std::vector<const Scan*> ptrs;
  for (const Scan& c : coils) ptrs.push_back(&c);
  write_coils(path, ptrs, fov);
}

std::vector<Scan> read_scan_coils(const std::string& path, std::array<float, 3>* fov, const SizeCheck& check) {
  h5::QuietErrors quiet;
  Handle f = h5::open_read(path);
  Reader r{path, f.get()};
  r.schema();
  Scan s;
  auto matrix = r.attr3<int>("matrix", H5T_INTEGER, H5T_NATIVE_INT);
  s.grid = {matrix[0], matrix[1], matrix[2]};
  auto fv = r.attr3<float>("fov", H5T_FLOAT, H5T_NATIVE_FLOAT);
  for (int a = 0; a < 3; ++a)
    if (!(fv[a] > 0) || !std::isfinite(fv[a]))
      throw InputError(path, "attribute fov[" + std::to_string(a) + "]", std::to_string(fv[a]), "must be finite and > 0");
  if (fov) *fov = fv;
  validate_grid(s.grid, path, "attribute matrix");
  if (fv != std::array<float, 3>{1, 1, 1}) {  // (1, 1, 1): unitless, no physical size known
    s.geometry = ScanGeometry{};
    s.geometry->fov_mm = {fv[0], fv[1], fv[2]};
  }
  const std::size_t m = r.samples();
  const std::size_t nc = r.coil_count(m);
  if (check) check(s.grid, m, nc);
  r.trajectory(s.traj, m);
  auto data = r.coil_complex("kspace", m, 0, true);
  auto noise = r.coil_complex("noise", 0, nc, false);
  s.phi = r.complex("phi", m, false);
  s.dcf = r.real("dcf", m);
  s.field.hz = r.real("field_map", s.grid.voxels());
  s.field.times = r.real("sample_times", m);
  validate_field(s, path,
                 {"/trajectory", "/kspace", "/phi", "/dcf", "attribute matrix", "/field_map", "/sample_times"});
  s.provenance = r.provenance();
  std::vector<Scan> coils(nc, s);
  for (std::size_t c = 0; c < nc; ++c) {
    const std::string at = nc > 1 ? "[" + std::to_string(c) + "]" : "";
    coils[c].data = std::move(data[c]);
    if (!noise.empty()) coils[c].noise = std::move(noise[c]);
    if (c == 0)  // the coils share trajectory, phi and dcf: check those once
      validate_scan(coils[c], path, {"/trajectory", "/kspace" + at, "/phi", "/dcf", "attribute matrix"});
    else
      validate_finite(coils[c].data, path, "/kspace" + at);
    validate_finite(coils[c].noise, path, "/noise" + at);
    if (nc > 1) coils[c].provenance["coil"] = std::to_string(c);
  }
  return coils;
}

namespace {

void require_field_map_size(const std::string& path, const std::vector<hsize_t>& dims, const ImageGrid& grid) {
  double points = 1;
  for (hsize_t v : dims) points *= double(v);
  if (points != double(grid.voxels()))
    throw InputError(path, "/field_map shape", Reader::dims_text(dims),
                     "must hold the image grid's " + std::to_string(grid.voxels()) + " voxels (x fastest)");
}

// The dataset's values, after `check` has seen its shape (before any allocation).
template <class Check>
FieldMapFile read_field_map_checked(const std::string& path, Check check) {
  h5::QuietErrors quiet;
  Handle f = h5::open_read(path);
  Reader r{path, f.get()};
  Handle d = r.open("field_map", true);
  r.expect_float(d.get(), "field_map");
  const std::vector<hsize_t> dims = h5::shape(d.get());
  check(dims);
  r.expect_stored(d.get(), "field_map", dims);
  double points = 1;
  for (hsize_t v : dims) points *= double(v);
  FieldMapFile out{std::vector<std::uint64_t>(dims.begin(), dims.end()), std::vector<float>(std::size_t(points))};
  r.read(d.get(), H5T_NATIVE_FLOAT, out.hz.data(), "field_map");
  for (std::size_t i = 0; i < out.hz.size(); ++i)
    if (!std::isfinite(out.hz[i]) || std::fabs(out.hz[i]) > 1e5)
      throw InputError(path, "/field_map[" + std::to_string(i) + "]", std::to_string(out.hz[i]),
                       "must be finite Hz within +-1e5");
  return out;
}

}  // namespace

std::vector<float> read_field_map(const std::string& path, const ImageGrid& grid) {
  return read_field_map_checked(path, [&](const std::vector<hsize_t>& dims) {
           require_field_map_size(path, dims, grid);
         }).hz;
}

FieldMapFile read_field_map_file(const std::string& path) {
  return read_field_map_checked(path, [](const std::vector<hsize_t>&) {});
}

std::vector<float> field_map_for_grid(const std::string& path, FieldMapFile file, const ImageGrid& grid) {
  require_field_map_size(path, std::vector<hsize_t>(file.dims.begin(), file.dims.end()), grid);
  return std::move(file.hz);
}

Scan read_scan(const std::string& path, std::array<float, 3>* fov, const SizeCheck& check) {
  std::vector<Scan> coils = read_scan_coils(path, fov, check);
  if (coils.size() != 1)
    throw InputError(path, "/kspace coils", std::to_string(coils.size()),
                     "a multi-coil file: read it with read_scan_coils (fhdrecon's readers do)");
  return std::move(coils[0]);
}

}  // namespace fhd
