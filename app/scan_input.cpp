#include "app/scan_input.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <spdlog/spdlog.h>

#include "app/memory_check.hpp"
#include "io/cfl.hpp"
#include "io/h5util.hpp"
#include "io/reader_child.hpp"
#include "io/scan_bytes.hpp"
#include "io/scan_file.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

std::string extension(const std::string& path) { return std::filesystem::path(path).extension().string(); }

bool is_bart_name(const std::string& path) {
  std::string e = extension(path);
  return e == ".cfl" || e == ".hdr" || e.empty();
}

bool is_ismrmrd_file(const std::string& path) {
  h5::QuietErrors quiet;
  h5::Handle f = h5::open_read(path);
  return h5::exists(f.get(), "dataset") && !h5::exists(f.get(), "kspace");
}

SizeCheck memory_check_for(const std::string& path) {
  return [path](const ImageGrid& g, std::size_t samples, std::size_t coils) {
    check_host_memory(g, samples, coils, path);
  };
}

std::vector<Scan> read_bart(const std::string& path, const std::string& traj_file, int matrix,
                            const std::optional<ImageGrid>& dims) {
  if (traj_file.empty())
    throw InputError(path, "--traj-file", "(none)", "a BART k-space needs its trajectory (--traj-file traj.cfl)");
  // Another format's file (s.h5) was looked for as s.h5.hdr and named so. A
  // base name may hold dots (run.1_traj): only an existing file is refused.
  const std::string ext = std::filesystem::path(traj_file).extension().string();
  std::error_code ec;
  if (ext != ".cfl" && ext != ".hdr" && std::filesystem::is_regular_file(traj_file, ec))
    throw InputError(traj_file, "--traj-file", traj_file,
                     "is not a BART trajectory (a .cfl/.hdr pair: give its .cfl, .hdr or base name)");
  return read_bart_scan(traj_file, path, dims ? *dims : bart_grid(traj_file, matrix),
                        memory_check_for(cfl_base(path) + ".cfl"));
}

// fhdrecon's own scan file or ISMRMRD, by content; `units` (--traj-units) is
// for ISMRMRD: an fhdrecon file's trajectory is in cycles/FOV by its schema.
std::vector<Scan> read_hdf5(const std::string& path, TrajUnits units) {
  if (is_ismrmrd_file(path)) {
#ifdef FHD_HAVE_ISMRMRD
    return read_ismrmrd(path, units, memory_check_for(path));
#else
    throw InputError(path, "/dataset", "ISMRMRD", "this fhdrecon was built without ISMRMRD");
#endif
  }
  if (units == TrajUnits::normalized)
    throw InputError(path, "--traj-units", "normalized",
                     "is for ISMRMRD input; an fhdrecon scan file's trajectory is in cycles/FOV (leave the option out)");
  return read_scan_coils(path, nullptr, memory_check_for(path));
}

// What the reader child (io/reader_child.hpp) runs: the real read, its scans
// handed to the parent as bytes of our own format (io/scan_bytes.hpp); its
// argument is --traj-units' word.
constexpr const char* kHdf5Reader = "hdf5-scan";
const bool kHdf5ReaderAdded = add_child_reader(kHdf5Reader, [](const std::string& path, const std::string& units) {
  return scans_to_bytes(read_hdf5(path, traj_units_named(units)));
});
// A --field-map file is HDF5 as well: its dataset is read there too.
constexpr const char* kFieldMapReader = "field-map";
const bool kFieldMapReaderAdded = add_child_reader(
    kFieldMapReader, [](const std::string& path, const std::string&) {
      return field_map_to_bytes(read_field_map_file(path));
    });

// What the file system says of `path` (a symlink loop, a bad permission) as one
// InputError; false when it does not exist.
bool input_exists(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw InputError(path, "--input", path, "cannot be opened: " + ec.message());
  return std::filesystem::exists(st);
}

// HDF5's signature at offset 0, 512, 1024, 2048, ... (where libhdf5 looks for
// its superblock), read by our own code: the parent never hands an untrusted
// file to libhdf5.
bool is_hdf5_file(const std::string& path) {
  static constexpr char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char got[8];
  for (std::streamoff at = 0; in.seekg(at) && in.read(got, sizeof got); at = at ? 2 * at : 512)
    if (std::equal(got, got + 8, kSignature)) return true;
  return false;
}

}  // namespace

bool is_bart_input(const std::string& path, const std::string& traj_file) {
  const std::string e = extension(path);
  return !traj_file.empty() || e == ".cfl" || e == ".hdr" || (is_bart_name(path) && !input_exists(path));
}

std::vector<Scan> read_scans_any(const std::string& path, const std::string& traj_file, int matrix, TrajUnits units,
                                 std::optional<ImageGrid> dims) {
  if (!traj_file.empty() && is_hdf5_file(path))
    throw InputError(path, "--traj-file", traj_file,
                     "is for a BART k-space --input; this file is HDF5 (fhdrecon or ISMRMRD) and carries its own "
                     "trajectory (leave --traj-file out)");
  if (is_bart_input(path, traj_file)) return read_bart(path, traj_file, matrix, dims);
  if (!input_exists(path)) throw InputError(path, "--input", path, "no such file");
  // In a child only: a corrupt file that crashes or hangs libhdf5 becomes one
  // line, and this process decodes bytes of our own, never the file. Where no
  // child can be started, the file is read here, as without isolation.
  if (std::optional<std::string> bytes = read_in_child(path, kHdf5Reader, traj_units_word(units)))
    return scans_from_bytes(*bytes, path);
  return read_hdf5(path, units);
}

std::vector<float> read_field_map_any(const std::string& path, const ImageGrid& grid) {
  if (std::optional<std::string> bytes = read_in_child(path, kFieldMapReader))
    return field_map_for_grid(path, field_map_from_bytes(*bytes, path), grid);
  return read_field_map(path, grid);
}

namespace {
std::string write_scan_as(const std::string& path, const std::string& format, const std::vector<Scan>& coils,
                          int readout) {
  std::string e = extension(path);
  std::string f = format != "auto" ? format
                  : (e == ".mrd" || e == ".ismrmrd") ? "ismrmrd"
                  : is_bart_name(path)               ? "bart"
                                                     : "fhdrecon";
  if (f == "bart") {
    std::string base = cfl_base(path);
    if (!coils[0].noise.empty()) spdlog::warn("{}: BART files have no noise acquisitions; the noise samples are not written", path);
    if (!coils[0].field.empty())
      spdlog::warn("{}: BART files have no field map or sample times; they are not written (write fhdrecon HDF5)", path);
    write_bart_scan(base + "_traj", base, coils, readout);
    return base + ".cfl/.hdr and " + base + "_traj.cfl/.hdr";
  }
  if (f == "ismrmrd") {
#ifdef FHD_HAVE_ISMRMRD
    if (!coils[0].field.hz.empty())
      spdlog::warn("{}: ISMRMRD has no place for a field map: the sample times are written (sample_time_us, TE), "
                   "the map is not (write it to an fhdrecon HDF5 file too and give it with --field-map)", path);
    write_ismrmrd(path, coils, readout);
    return path;
#else
    throw InputError(path, "--format", "ismrmrd", "this fhdrecon was built without ISMRMRD");
#endif
  }
  write_scan_coils(path, coils);
  return path;
}
}  // namespace

// A failure other than bad input (a full disk: "HDF5: flush") names the file.
std::string write_scan_any(const std::string& path, const std::string& format, const std::vector<Scan>& coils,
                           int readout) {
  try {
    return write_scan_as(path, format, coils, readout);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not written (" + e.what() + ")");
  }
}

}  // namespace fhd::app
