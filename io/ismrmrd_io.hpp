#pragma once
// ISMRMRD raw data (docs/formats.md). Only built with FHD_HAVE_ISMRMRD; without
// it both functions throw InputError saying so.
//   /dataset/xml   header: matrix and FOV from encoding[0].encodedSpace
//   /dataset/data  one readout (spoke, interleave) per acquisition, traj per
//                  acquisition with trajectory_dimensions 2 (kz = 0) or 3
// Units: trajectory in cycles/FOV (the encoded FOV), as BART and fhdrecon use.
// Gadgetron-style trajectories normalized to [-0.5, 0.5] are accepted when the
// header says so (userParameterString fhdrecon_traj_units = "normalized") or the
// caller asks; they are multiplied by the matrix size per axis. Units stated
// nowhere, on a trajectory within |k| <= 0.5 on every axis of N >= 4: refused
// (it looks normalized; read as cycles it would be garbage).
// Scaling: none. ISMRMRD stores raw samples with no transform convention; they
// are taken as fhdrecon's non-unitary D_m unchanged.
#include <string>
#include <vector>

#include "core/units.hpp"
#include "io/scan_checks.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

// One Scan per receive channel (same trajectory), in acquisition order,
// samples [discard_pre, number_of_samples - discard_post) of each readout.
// Noise-measurement acquisitions (ISMRMRD_ACQ_IS_NOISE_MEASUREMENT) go to each
// channel's Scan::noise, all their samples, in file order. Coil combination is
// the app's job. Validated like a scan file. Every acquisition
// header is checked against the stored traj/data lengths (HDF5, directly) and
// the totals against memory before libismrmrd reads anything; `check`, if
// given, is called with the grid, samples per coil and coils before the samples are read.
// Scan::geometry: the encoded FOV (header, finite > 0) with the first data
// acquisition's position and read/phase/slice directions (LPS; all zero = not
// recorded: the default axes; otherwise unit and orthogonal, slice_dir zero =
// read x phase).
// Image data only: acquisitions flagged navigator, phase correction, dummy scan,
// RT/HP feedback, surface-coil correction, phase stabilization (+ reference) or
// parallel calibration (not "calibration and imaging") are skipped and counted
// (one spdlog::info line). The image acquisitions must share idx.slice,
// contrast, repetition, set, phase and encoding_space_ref (one image per file;
// averages are merged): InputError names the first that differs.
// `units`: what the caller says of the trajectory's units; the file's
// fhdrecon_traj_units, when present, must agree with it.
enum class TrajUnits { unstated, cycles, normalized };
std::vector<Scan> read_ismrmrd(const std::string& path, TrajUnits units = TrajUnits::unstated,
                               const SizeCheck& check = {});
// The older form, kept for the installed library's callers: true =
// normalized, false = unstated.
std::vector<Scan> read_ismrmrd(const std::string& path, bool normalized_traj, const SizeCheck& check = {});
// "cycles" or "normalized" (--traj-units, Python's traj_units); anything else
// (the front ends checked the word), "" among it, is unstated.
TrajUnits traj_units_named(const std::string& word);
// The word traj_units_named reads back: "cycles", "normalized" or "".
const char* traj_units_word(TrajUnits units);

// Writes coils (sharing coils[0]'s trajectory) as acquisitions of `readout`
// samples (0 = all samples in one acquisition); readout must fit number_of_samples
// (16-bit, <= 65535) and divide the sample count. Scan provenance goes to
// userParameterString "provenance.<key>" and comes back on reading. The coils'
// noise samples (Scan::noise, equal counts) are written first as noise
// acquisitions of up to `readout` samples. coils[0].geometry, when set, gives
// the header's FOV and every acquisition's position and directions (fov_mm is
// then unused); otherwise the FOV is fov_mm and the directions are left zero.
void write_ismrmrd(const std::string& path, const std::vector<Scan>& coils, int readout,
                   const FovMm& fov_mm = kDefaultFov);

}  // namespace fhd
