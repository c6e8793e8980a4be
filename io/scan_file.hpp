#pragma once
// fhdrecon's own HDF5 scan file (schema "1.0", "1.1" with coils or noise; docs/formats.md).
//   /trajectory  float32 [M,3]        (kx, ky, kz) per sample, cycles/FOV
//   /kspace      compound {r,i} [M]   D_m, non-unitary convention (docs/conventions.md);
//                or [C,M]             C coils sharing the trajectory (schema 1.1)
//   /noise       compound {r,i} [C,Mn] optional noise-only samples per coil (1.1;
//                [Mn] for one coil), for prewhitening
//   /phi         compound {r,i} [M]   optional Phi(k_m)
//   /dcf         float32 [M]          optional density weights
//   /field_map   float32 [Nx*Ny*Nz]   optional field map, Hz, x fastest (docs/field-maps.md)
//   /sample_times float32 [M]         optional time of each sample after excitation, s
//                                     (required with /field_map)
//   / attributes fhdrecon_schema = "1.0" | "1.1", matrix int32[3] (x,y,z), fov float32[3]
//   /provenance  group of string attributes
#include <array>
#include <cstdint>
#include <string>

#include "io/scan_checks.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

constexpr const char* kScanSchemaVersion = "1.0";
// Written when a file holds several coils or noise samples, so that a
// single-coil file stays exactly what 1.0 readers know.
constexpr const char* kScanSchemaVersionCoils = "1.1";

// Writes atomically (temporary + rename). `fov` (mm; 1, 1, 1 = unitless) is
// metadata: k is in cycles/FOV whatever its physical size. A scan with a
// geometry writes its fov_mm instead (its position and directions have no place
// in this format). Reading, a fov other than (1, 1, 1) becomes Scan::geometry
// with that FOV and the default axes (core/geometry.hpp).
void write_scan(const std::string& path, const Scan& scan, const std::array<float, 3>& fov = {1, 1, 1});

// Several coils sharing coils[0]'s grid and trajectory (their own trajectories,
// phi and dcf are not written); each coil's noise samples (Scan::noise) go to
// /noise, all of the same count or all empty. Throws InputError otherwise.
void write_scan_coils(const std::string& path, const std::vector<Scan>& coils,
                      const std::array<float, 3>& fov = {1, 1, 1});

// Reads and validates (validate_scan): throws InputError naming the file, the
// dataset/attribute and the value for anything missing, mis-shaped, mistyped,
// non-finite or out of band, and for an unknown major schema version.
// If `fov` is given it receives the fov attribute. Sizes are checked before any
// allocation (stored bytes, available memory); `check`, if given, is called with
// the grid, sample count and coil count before the samples are read.
// A multi-coil file is refused here (read_scan_coils reads it).
Scan read_scan(const std::string& path, std::array<float, 3>* fov = nullptr, const SizeCheck& check = {});

// The /field_map dataset of an HDF5 file (a scan file, or one holding only
// it): grid.voxels() finite values in Hz, x fastest (any shape of that size).
std::vector<float> read_field_map(const std::string& path, const ImageGrid& grid);

// The same in two halves, for a read in the reader child (io/reader_child.hpp),
// which knows the file but not the grid: the dataset as stored (finite Hz
// within +-1e5, a shape the file's bytes back), then its check against the grid.
struct FieldMapFile {
  std::vector<std::uint64_t> dims;
  std::vector<float> hz;
};
FieldMapFile read_field_map_file(const std::string& path);
std::vector<float> field_map_for_grid(const std::string& path, FieldMapFile file, const ImageGrid& grid);

// One Scan per coil (one for a single-coil file), with its noise samples.
std::vector<Scan> read_scan_coils(const std::string& path, std::array<float, 3>* fov = nullptr,
                                  const SizeCheck& check = {});

}  // namespace fhd
