#pragma once
// Checks every reader applies to a Scan before handing it on: the same rules
// whatever the file format, so one bad sample gets the same one-line error.
#include <cstddef>
#include <functional>
#include <string>

#include "recon/problem/scan.hpp"

namespace fhd {

// The most coils (receive channels) any reader accepts or writer writes: ISMRMRD's
// limit, and --coils' range. A file claiming more is refused from its header.
constexpr std::size_t kMaxCoils = 1024;

// Tolerance (cycles/FOV) on the band |k_axis| <= N/2: float32 rounding of a
// sample placed exactly on the band edge must not be rejected.
constexpr double kBandTolerance = 1e-3;

// The largest |value| a k-space, phi or noise sample may have. Every voxel of
// the reconstruction sums all samples (FhD, gridding) in float32, and CG and the
// FFTs multiply and sum those sums again; with at most 2^32 samples, 1e12 keeps
// |value| x samples at 4.3e21, seventeen orders of magnitude below FLT_MAX
// (3.4e38) for the rest. Scanner data lie many orders below it. A sample of 3e38
// is finite, yet overflowed to Inf/NaN and gave an empty image with exit 0.
// docs/robustness.md "Sample magnitudes".
constexpr double kMaxSampleMagnitude = 1e12;

// Throws InputError naming `file`, the field (e.g. "/trajectory[17].ky") and the value when:
// the grid is not positive, sizes differ (trajectory, data, phi, dcf), a value is NaN/Inf,
// a data or phi value's magnitude exceeds kMaxSampleMagnitude, or a sample lies outside the band. `fields` names the datasets in this format.
struct ScanFields {
  std::string traj = "trajectory", data = "kspace", phi = "phi", dcf = "dcf", matrix = "matrix";
  std::string field_map = "field_map", times = "sample_times";
};
void validate_scan(const Scan& scan, const std::string& file, const ScanFields& fields = {});

// The field map and sample times (each optional): times one per sample, in
// [0, 10] s; a map one value per voxel, with times, and recon/field's
// check_field on both.
// Every reader of our HDF5 and every writer applies it (a writer read past
// times shorter than the trajectory before).
void validate_field(const Scan& scan, const std::string& file, const ScanFields& fields = {});

// The pieces of validate_scan, for formats that keep trajectory and data in different files.
void validate_grid(const ImageGrid& g, const std::string& file, const std::string& field);
void validate_trajectory(const Trajectory& t, const ImageGrid& g, const std::string& file, const std::string& field);
// Every value finite and of magnitude at most kMaxSampleMagnitude.
void validate_finite(const std::vector<cfloat>& v, const std::string& file, const std::string& field);

// ---- sizes before allocation (a file's claims are never trusted) ----

// Bytes this process may still allocate: MemAvailable from /proc/meminfo,
// lowered to FHDRECON_MEMORY_LIMIT when that is set (bytes, or with a K, M or G
// suffix, binary). 0 when neither is known (then nothing is refused).
std::size_t available_host_bytes();

// Throws InputError "<file>: <field> = <value>: needs X GiB of memory, Y GiB available"
// when `bytes` exceeds available_host_bytes(). Call before allocating what a file claims.
void check_allocation(double bytes, const std::string& file, const std::string& field, const std::string& value);

// What a reader knows before it reads the samples: the grid, the samples per
// coil and the coils. A reader given a SizeCheck calls it then, so the caller can
// refuse a scan too large for the reconstruction before anything is allocated.
using SizeCheck = std::function<void(const ImageGrid& grid, std::size_t samples, std::size_t coils)>;

}  // namespace fhd
