// Scan files for Python (python/fhdrecon/_io.py picks the format): our HDF5
// scan file, ISMRMRD, BART .cfl/.hdr pairs (docs/formats.md). Each reader
// validates as the CLI's does and raises ValueError with its one line.
#include <string>

#include "common.hpp"
#include "core/error.hpp"
#include "io/cfl.hpp"
#include "io/h5util.hpp"
#include "io/scan_file.hpp"
#ifdef FHD_HAVE_ISMRMRD
#include "io/ismrmrd_io.hpp"
#endif

namespace fhd::py {
namespace {

[[noreturn]] void no_ismrmrd(const std::string& path) {
  throw InputError(path, "format", "ismrmrd", "this fhdrecon was built without ISMRMRD");
}

// units: "" (as the file says, else cycles/FOV unless it looks normalized),
// "cycles" or "normalized" (read_scan checked the word).
nb::dict read_ismrmrd_file(const std::string& path, const std::string& units) {
#ifdef FHD_HAVE_ISMRMRD
  return scans_to_dict(read_ismrmrd(path, traj_units_named(units)));
#else
  no_ismrmrd(path);
#endif
}

void write_ismrmrd_file(const std::string& path, const nb::dict& d, int readout) {
#ifdef FHD_HAVE_ISMRMRD
  write_ismrmrd(path, scans_from_dict(d), readout);
#else
  no_ismrmrd(path);
#endif
}

void write_scan_file(const std::string& path, const nb::dict& d) {
  const std::vector<Scan> coils = scans_from_dict(d);
  std::array<float, 3> fov = {1, 1, 1};
  if (coils.size() == 1 && coils[0].noise.empty())
    write_scan(path, coils[0], fov);
  else
    write_scan_coils(path, coils, fov);
}

// A .cfl/.hdr pair as (dims, flat complex64 array, dimension 0 fastest).
nb::tuple read_cfl_file(const std::string& name) {
  CflArray a = read_cfl(name);
  const std::size_t n = a.data.size();
  std::vector<long> dims(a.dims.begin(), a.dims.end());
  return nb::make_tuple(dims, owned_array(std::move(a.data), {n}));
}

void write_cfl_file(const std::string& name, const std::vector<long>& dims,
                    const nb::ndarray<const cfloat, nb::c_contig, nb::device::cpu>& data) {
  write_cfl(name, dims, std::vector<cfloat>(data.data(), data.data() + data.size()));
}

// ISMRMRD or our scan file, by content, as the CLI tells them apart
// (app/scan_input.cpp): ISMRMRD has /dataset and no /kspace.
bool is_ismrmrd_file(const std::string& path) {
  h5::QuietErrors quiet;
  h5::Handle f = h5::open_read(path);
  return h5::exists(f.get(), "dataset") && !h5::exists(f.get(), "kspace");
}

}  // namespace

void bind_io(nb::module_& m) {
  m.def("read_scan_h5", [](const std::string& p) { return scans_to_dict(read_scan_coils(p)); }, nb::arg("path"));
  m.def("write_scan_h5", &write_scan_file, nb::arg("path"), nb::arg("scan"));
  m.def("read_ismrmrd", &read_ismrmrd_file, nb::arg("path"), nb::arg("units") = "");
  m.def("write_ismrmrd", &write_ismrmrd_file, nb::arg("path"), nb::arg("scan"), nb::arg("readout"));
  m.def(
      "read_bart",
      [](const std::string& traj, const std::string& ksp, const std::vector<int>& matrix) {
        return scans_to_dict(read_bart_scan(traj, ksp, ImageGrid{matrix.at(0), matrix.at(1), matrix.at(2)}));
      },
      nb::arg("traj"), nb::arg("kspace"), nb::arg("matrix"));
  m.def(
      "bart_grid",
      [](const std::string& traj, int matrix) {
        const ImageGrid g = bart_grid(traj, matrix);
        return std::vector<int>{g.nx, g.ny, g.nz};
      },
      nb::arg("traj"), nb::arg("matrix"));
  m.def(
      "write_bart",
      [](const std::string& traj, const std::string& ksp, const nb::dict& d, int readout) {
        write_bart_scan(traj, ksp, scans_from_dict(d), readout);
      },
      nb::arg("traj"), nb::arg("kspace"), nb::arg("scan"), nb::arg("readout"));
  m.def("read_cfl", &read_cfl_file, nb::arg("name"));
  m.def("write_cfl", &write_cfl_file, nb::arg("name"), nb::arg("dims"), nb::arg("data"));
  m.def("is_ismrmrd_file", &is_ismrmrd_file, nb::arg("path"));
  m.def("has_ismrmrd", [] {
#ifdef FHD_HAVE_ISMRMRD
    return true;
#else
    return false;
#endif
  });
}

}  // namespace fhd::py
