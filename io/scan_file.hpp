#pragma once
// fhdrecon's own HDF5 scan file (schema "1.0"; listing in docs/formats.md).
//   /trajectory  float32 [M,3]        (kx, ky, kz) per sample, cycles/FOV
//   /kspace      compound {r,i} [M]   D_m, non-unitary convention (CONVENTIONS.md)
//   /phi         compound {r,i} [M]   optional Phi(k_m)
//   /dcf         float32 [M]          optional density weights
//   / attributes fhdrecon_schema = "1.0", matrix int32[3] (x,y,z), fov float32[3]
//   /provenance  group of string attributes
#include <array>
#include <string>

#include "io/validate.hpp"
#include "recon/types.hpp"

namespace fhd {

constexpr const char* kScanSchemaVersion = "1.0";

// Writes atomically (temporary + rename). `fov` is metadata only (1 = unitless):
// k is in cycles/FOV whatever its physical size.
void write_scan(const std::string& path, const Scan& scan, const std::array<float, 3>& fov = {1, 1, 1});

// Reads and validates (validate_scan): throws InputError naming the file, the
// dataset/attribute and the value for anything missing, mis-shaped, mistyped,
// non-finite or out of band, and for an unknown major schema version.
// If `fov` is given it receives the fov attribute. Sizes are checked before any
// allocation (stored bytes, available memory); `check`, if given, is called with
// the grid and sample count before the samples are read.
Scan read_scan(const std::string& path, std::array<float, 3>* fov = nullptr, const SizeCheck& check = {});

}  // namespace fhd
