#pragma once
// Coil sensitivity estimation from the fully sampled centre of k-space
// (docs/coils.md): a fast low-resolution estimate normalized by the root sum
// of squares, and ESPIRiT (Uecker et al., MRM 71:990, 2014) as the reference
// (declared in recon/coils/espirit.hpp, included here).
// Both return maps whose root sum of squares is 1 where the object is, so a
// SENSE reconstruction with them gives the object as the array sees it
// (f times the true maps' root sum of squares), up to a smooth common phase.
#include <vector>

#include "recon/device/device.hpp"
#include "recon/coils/coil_noise.hpp"
#include "recon/coils/espirit.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

// Cartesian calibration data: per coil, the centre `size` of its k-space on the
// centred grid (index q <-> k = q - size.n/2 cycles/FOV, x fastest).
struct Calibration {
  ImageGrid size;
  CoilData kspace;  // [coil][size.voxels()]
};

// The calibration size for a `cal` request on `grid`: min(cal, n) per axis
// (an axis of 1 stays 1). Throws InputError for cal < 4.
ImageGrid calibration_size(const ImageGrid& grid, int cal);

// The centre of each coil image's centred DFT X_q = sum_i m_i exp(-i 2 pi k_q . x_i),
// the convention of the data (D_m = sum over voxels for a band-limited object).
Calibration calibration_from_images(const CoilData& images, const ImageGrid& grid, int cal);

// From non-Cartesian coils sharing one trajectory: each coil's density-weighted
// samples near the centre (weights by `dcf_method`, recon/gridding/dcf.hpp,
// computed around the centre only) taken to an image on a grid of the
// calibration size plus a margin (docs/coils.md) by one batched type 1 NUFFT
// of all coils, then as above. The radial centre is densely sampled, so the
// density-weighted sum is accurate there.
Calibration calibration_from_scans(Device& dev, const std::vector<const Scan*>& coils, int cal,
                                   const std::string& dcf_method = "auto");
// The same in two halves: the host's (the samples near the centre, their
// density weights, each coil's data there times its weight: 20-26 ms at 8
// coils of 1M samples, done beside the GPU's start by prepare_host_work; an
// InputError when no sample lies in the region) and the device's.
struct CalibrationSamples {
  ImageGrid low;                  // the images' grid: the calibration size plus a margin
  Trajectory traj;                // the samples kept (m of them)
  std::size_t coils = 0;
  std::vector<cfloat> weighted;   // coil c's kept samples times their density weights at [c m, (c + 1) m)
};
CalibrationSamples calibration_samples(const std::vector<const Scan*>& coils, int cal,
                                       const std::string& dcf_method = "auto");
// Each coil's image on s.low: (1 / s.low.voxels()) sum_m weighted_m exp(+i 2 pi k_m . x_n),
// all coils in one type 1 NUFFT call on `dev` (one plan, one sort). Coil by
// coil gridding took 34-37 ms for 8 coils of 300,222 samples on an H200, most
// of it host work per coil (docs/performance.md).
CoilData calibration_images(Device& dev, const CalibrationSamples& s);
Calibration calibration_from_samples(Device& dev, const CalibrationSamples& s, int cal);
Calibration calibration_from_scans(Device& dev, const std::vector<Scan>& coils, int cal,
                                   const std::string& dcf_method = "auto");

// Fast: each coil's calibration data times a Hann window, zero-padded to `grid`
// and transformed back (a smooth low-resolution coil image), divided by the
// root sum of squares over coils. In float, by a pruned FFT (only the lines
// that hold data are transformed), OpenMP over lines. Where that root sum of
// squares is below `crop` times its peak (outside the object: the ratio is one
// of noise and blur tails there) the maps are zero, a support constraint as
// ESPIRiT's crop is (docs/coils.md); 0 keeps every voxel.
constexpr double kLowresCrop = 0.1;
// Each coil's calibration data times the separable Hann window of the fast
// method (the first step of maps_lowres, shared with the GPU's).
CoilData windowed_calibration(const Calibration& cal);
CoilData maps_lowres(const Calibration& cal, const ImageGrid& grid, double crop = kLowresCrop);
// The support maps_lowres keeps at this crop (true where its maps are set):
// the same support constraint for other maps (the synthesized coils' true
// maps, compared with the estimated ones on equal terms).
std::vector<bool> lowres_support(const Calibration& cal, const ImageGrid& grid, double crop = kLowresCrop);

// How far estimated maps are from true ones where `mask` is set: the RMS over
// those voxels of min over phi || est e^{i phi} - truth / ||truth|| || (the
// truth normalized per voxel, as the estimates are; the phase per voxel is free).
double map_difference(const CoilData& est, const CoilData& truth, const std::vector<bool>& mask);

// In-place centred DFT in float64 on `g` (x fastest): sign -1 forward
// (X_q = sum_i x_i e^{-i 2 pi (q - n/2)(i - n/2)/n}), +1 inverse, unnormalized.
void centered_dft(std::vector<cdouble>& v, const ImageGrid& g, int sign);

}  // namespace fhd
