#pragma once
#include <optional>
#include <string>
#include <vector>

#include "io/ismrmrd_io.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::app {

// Reads a scan whatever its format, chosen by content and name:
// fhdrecon HDF5 (root attribute fhdrecon_schema), ISMRMRD HDF5 (/dataset),
// BART k-space .cfl/.hdr (needs `traj_file`, the trajectory's .cfl; the grid
// is `dims` when given, else io/cfl.hpp's bart_grid(traj_file, matrix)).
// One Scan per coil. Every reader validates (io/scan_checks.hpp): errors name the
// file, field and value. `units` (--traj-units) is for ISMRMRD; normalized on an
// fhdrecon file is refused. What the readers log in the reader child is logged
// here.
std::vector<Scan> read_scans_any(const std::string& path, const std::string& traj_file, int matrix,
                                 TrajUnits units = TrajUnits::unstated, std::optional<ImageGrid> dims = {});

// A --field-map file's map for `grid` (io/scan_file.hpp, read_field_map), read
// in the reader child like an HDF5 --input: a file that crashes or hangs
// libhdf5 becomes one line naming it.
std::vector<float> read_field_map_any(const std::string& path, const ImageGrid& grid);

// Whether read_scans_any reads `path` as a BART k-space: a --traj-file given,
// a .cfl/.hdr name, or a name without extension that is not a file (a base name).
bool is_bart_input(const std::string& path, const std::string& traj_file);

// Writes a scan's coils (sharing coils[0]'s trajectory) as `format` (fhdrecon |
// ismrmrd | bart | auto: from the name: .mrd/.ismrmrd -> ISMRMRD, .cfl/.hdr or
// no extension -> BART, else fhdrecon HDF5). Noise samples go where the format
// has a place for them (not BART: a warning says they were left out).
// Returns what was written (file names).
std::string write_scan_any(const std::string& path, const std::string& format, const std::vector<Scan>& coils,
                           int readout);
inline std::string write_scan_any(const std::string& path, const std::string& format, const Scan& scan, int readout) {
  return write_scan_any(path, format, std::vector<Scan>{scan}, readout);
}

}  // namespace fhd::app
