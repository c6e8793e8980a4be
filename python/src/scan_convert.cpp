// Scans between Python dicts of arrays and std::vector<Scan> (common.hpp).
#include <algorithm>
#include <string>

#include "common.hpp"
#include "core/error.hpp"
#include "io/scan_checks.hpp"

namespace fhd::py {
namespace {

template <class T>
using HostArray = nb::ndarray<const T, nb::c_contig, nb::device::cpu>;

template <class T>
std::vector<T> vec(const HostArray<T>& a) {
  const T* p = a.data();
  return std::vector<T>(p, p + a.size());
}

// d[key] as a host array of T, or nothing when absent or None.
template <class T>
bool get(const nb::dict& d, const char* key, HostArray<T>& out) {
  if (!d.contains(key) || d[key].is_none()) return false;
  if (!nb::try_cast(d[key], out))
    throw InputError("scan", key, nb::cast<std::string>(nb::str(nb::type_name(d[key].type()))),
                     "must be a contiguous NumPy array of the documented dtype");
  return true;
}

nb::tuple vec3(const std::array<double, 3>& v) { return nb::make_tuple(v[0], v[1], v[2]); }

// geometry[key], three numbers; named when missing or not three numbers (a
// KeyError 'position' or "std::bad_cast" before).
std::array<double, 3> arr3(const nb::dict& geo, const char* key) {
  const std::string field = std::string("geometry['") + key + "']";
  if (!geo.contains(key))
    throw InputError("scan", field, "missing", "geometry needs fov_mm, position, read_dir, phase_dir, slice_dir");
  std::vector<double> t;
  if (!nb::try_cast(geo[key], t))
    throw InputError("scan", field, nb::cast<std::string>(nb::repr(geo[key])), "must be 3 numbers");
  if (t.size() != 3) throw InputError("scan", field, std::to_string(t.size()) + " values", "must hold 3");
  return {t[0], t[1], t[2]};
}

ScanGeometry geometry(const nb::handle& h) {
  nb::dict geo;
  if (!nb::try_cast(h, geo))
    throw InputError("scan", "geometry", nb::cast<std::string>(nb::str(nb::type_name(h.type()))),
                     "must be a dict of fov_mm, position, read_dir, phase_dir, slice_dir, or None");
  ScanGeometry g;
  g.fov_mm = arr3(geo, "fov_mm");
  g.position = arr3(geo, "position");
  g.read_dir = arr3(geo, "read_dir");
  g.phase_dir = arr3(geo, "phase_dir");
  g.slice_dir = arr3(geo, "slice_dir");
  return g;
}

// coils' per-coil vectors (data or noise) as one [C, len] array.
nb::object stacked(const std::vector<Scan>& coils, std::vector<cfloat> Scan::*field) {
  const std::size_t len = (coils[0].*field).size();
  if (len == 0) return nb::none();
  std::vector<cfloat> all;
  all.reserve(coils.size() * len);
  for (const Scan& s : coils) all.insert(all.end(), (s.*field).begin(), (s.*field).end());
  return nb::cast(owned_array(std::move(all), {coils.size(), len}));
}

}  // namespace

nb::dict scans_to_dict(const std::vector<Scan>& coils) {
  if (coils.empty()) throw InputError("scan: no coils");
  const Scan& s = coils[0];
  nb::dict d;
  d["kspace"] = stacked(coils, &Scan::data);
  d["noise"] = stacked(coils, &Scan::noise);
  const std::size_t m = s.traj.size();
  std::vector<float> t(3 * m);
  for (std::size_t i = 0; i < m; ++i) {
    t[3 * i] = s.traj.kx[i];
    t[3 * i + 1] = s.traj.ky.empty() ? 0.f : s.traj.ky[i];
    t[3 * i + 2] = s.traj.kz.empty() ? 0.f : s.traj.kz[i];
  }
  d["traj"] = owned_array(std::move(t), {m, 3});
  d["matrix"] = nb::make_tuple(s.grid.nx, s.grid.ny, s.grid.nz);
  d["dcf"] = s.dcf.empty() ? nb::none() : nb::cast(owned_array(std::vector<float>(s.dcf), {s.dcf.size()}));
  d["phi"] = s.phi.empty() ? nb::none() : nb::cast(owned_array(std::vector<cfloat>(s.phi), {s.phi.size()}));
  const ImageGrid& g = s.grid;
  d["field_map"] = s.field.hz.empty() ? nb::none()
                                      : nb::cast(owned_array(std::vector<float>(s.field.hz),
                                                             {std::size_t(g.nz), std::size_t(g.ny), std::size_t(g.nx)}));
  d["sample_times"] = s.field.times.empty()
                          ? nb::none()
                          : nb::cast(owned_array(std::vector<float>(s.field.times), {s.field.times.size()}));
  if (s.geometry) {
    nb::dict geo;
    geo["fov_mm"] = vec3(s.geometry->fov_mm);
    geo["position"] = vec3(s.geometry->position);
    geo["read_dir"] = vec3(s.geometry->read_dir);
    geo["phase_dir"] = vec3(s.geometry->phase_dir);
    geo["slice_dir"] = vec3(s.geometry->slice_dir);
    d["geometry"] = geo;
  } else {
    d["geometry"] = nb::none();
  }
  nb::dict prov;
  for (const auto& [k, v] : s.provenance) prov[k.c_str()] = v;
  d["provenance"] = prov;
  return d;
}

namespace {

// "shape (2, 3, 4)"
template <class A>
std::string shape_of(const A& a) {
  std::string s = "shape (";
  for (std::size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// The readers' checks (io/scan_checks.hpp) on a scan from Python, which no
// reader saw: a matrix beyond 65536, samples outside the band, NaN or Inf
// in k, the data, Phi or the weights (a crash or an image of zeros before);
// sample_times and field_map of the wrong size or values (the writers read
// past short times and wrote files the readers refuse).
// The coils share everything but their data, checked once.
void check_coils(const std::vector<Scan>& coils) {
  if (coils.empty()) throw InputError("scan", "kspace", "0 coils", "needs [C, M] complex64 with C >= 1");
  ScanFields f;
  f.traj = "traj";
  f.data = "kspace[0]";
  validate_scan(coils[0], "scan", f);
  validate_field(coils[0], "scan", f);
  for (std::size_t i = 1; i < coils.size(); ++i)
    validate_finite(coils[i].data, "scan", "kspace[" + std::to_string(i) + "]");
}

}  // namespace

std::vector<Scan> scans_from_dict(const nb::dict& d) {
  HostArray<cfloat> ksp;
  HostArray<float> traj;
  if (!get(d, "kspace", ksp)) throw InputError("scan", "kspace", "missing", "needs [C, M] complex64");
  if (ksp.ndim() != 2) throw InputError("scan", "kspace", shape_of(ksp), "needs [C, M] complex64");
  if (!get(d, "traj", traj)) throw InputError("scan", "traj", "missing", "needs [M, 3] float32");
  if (traj.ndim() != 2 || traj.shape(1) != 3) throw InputError("scan", "traj", shape_of(traj), "needs [M, 3] float32");
  const std::size_t c = ksp.shape(0), m = ksp.shape(1);
  if (traj.shape(0) != m)
    throw InputError("scan", "traj", std::to_string(traj.shape(0)) + " rows",
                     "must equal the k-space's " + std::to_string(m) + " samples");
  std::vector<int> mat;  // 2**31 threw "std::bad_cast" from nb::cast
  if (!d.contains("matrix") || !nb::try_cast(d["matrix"], mat) || mat.size() != 3)
    throw InputError("scan", "matrix", d.contains("matrix") ? nb::cast<std::string>(nb::repr(d["matrix"])) : "missing",
                     "needs (nx, ny, nz), whole numbers in 1..65536");
  Scan base;
  base.grid = {mat[0], mat[1], mat[2]};
  base.traj.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    base.traj.kx[i] = traj.data()[3 * i];
    base.traj.ky[i] = traj.data()[3 * i + 1];
    base.traj.kz[i] = traj.data()[3 * i + 2];
  }
  HostArray<float> dcf, fmap, times;
  HostArray<cfloat> phi, noise;
  if (get(d, "dcf", dcf)) base.dcf = vec(dcf);
  if (get(d, "phi", phi)) base.phi = vec(phi);
  if (get(d, "field_map", fmap)) base.field.hz = vec(fmap);
  if (get(d, "sample_times", times)) base.field.times = vec(times);
  if (d.contains("geometry") && !d["geometry"].is_none()) base.geometry = geometry(d["geometry"]);
  if (d.contains("provenance") && !d["provenance"].is_none())
    for (auto [k, v] : nb::cast<nb::dict>(d["provenance"]))
      base.provenance[nb::cast<std::string>(nb::str(k))] = nb::cast<std::string>(nb::str(v));
  const bool has_noise = get(d, "noise", noise);
  if (has_noise && (noise.ndim() != 2 || noise.shape(0) != c))
    throw InputError("scan", "noise", shape_of(noise), "needs [C, Mn] with C = " + std::to_string(c));
  std::vector<Scan> coils(c, base);
  for (std::size_t i = 0; i < c; ++i) {
    coils[i].data.assign(ksp.data() + i * m, ksp.data() + (i + 1) * m);
    if (has_noise) {
      const std::size_t mn = noise.shape(1);
      coils[i].noise.assign(noise.data() + i * mn, noise.data() + (i + 1) * mn);
    }
  }
  check_coils(coils);
  return coils;
}

}  // namespace fhd::py
