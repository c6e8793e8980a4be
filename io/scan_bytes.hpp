#pragma once
// Scans as bytes of our own format: how the reader child (io/reader_child.hpp)
// hands what it read to its parent, so the parent never runs libhdf5 on an
// untrusted file (docs/robustness.md, "Crashes and hangs inside libhdf5").
//
// The format, native byte order (written and read by the same executable on
// the same machine, never stored):
//   "FHDSCANS", u32 version, u64 scan count, then per scan:
//   i32 nx, ny, nz; u8 1 when the trajectory is the previous scan's (coils
//   share one), else kx, ky, kz; data, phi, dcf, noise, field.hz, field.times;
//   u64 provenance entries, each key and value; u8 1 when a geometry follows
//   (fov_mm, position, read_dir, phase_dir, slice_dir: 15 f64).
// An array or string is a u64 count then its elements. Nothing may follow the
// last scan.
#include <string>
#include <vector>

#include "io/scan_file.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

std::string scans_to_bytes(const std::vector<Scan>& scans);

// The scans scans_to_bytes wrote. Every count is checked against the bytes
// left before anything is allocated for it, and the grid against 1..65536 per
// axis; a malformed buffer (a bug, never a user's file) throws
// std::runtime_error naming `where` and what was wrong.
std::vector<Scan> scans_from_bytes(const std::string& bytes, const std::string& where);

// A --field-map file's dataset (io/scan_file.hpp) the same way:
//   "FHDFMAP1", u64 dims then the dims (u64 each), the values (an array).
// The values must number the dims' product; malformed bytes throw as above.
std::string field_map_to_bytes(const FieldMapFile& map);
FieldMapFile field_map_from_bytes(const std::string& bytes, const std::string& where);

}  // namespace fhd
