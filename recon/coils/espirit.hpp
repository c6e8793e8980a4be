#pragma once
// ESPIRiT coil sensitivity maps (Uecker et al., MRM 71:990, 2014), the
// reference estimator of recon/coils/coil_maps.hpp (docs/coils.md), which
// includes this header: callers of coil_maps.hpp see these declarations too.
#include <vector>

#include "core/types.hpp"
#include "recon/coils/coil_noise.hpp"

namespace fhd {

struct Calibration;  // recon/coils/coil_maps.hpp

struct EspiritOptions {
  int kernel = 6;           // kernel width per axis (k-space samples)
  double threshold = 0.02;  // keep singular vectors with sigma >= threshold * sigma_max
  double crop = 0.8;        // zero the maps where the top eigenvalue is below this
};
// ESPIRiT: the calibration matrix's signal subspace gives, at every voxel, a
// coils x coils operator whose eigenvector of eigenvalue ~1 is the coil
// sensitivity vector (unit norm, phase relative to coil 0).
// Voxels where a non-empty `support` is false are left zero, not computed
// (the per-voxel eigenproblems are most of the time after the eigen-decomposition).
// Throws InputError when the kernel does not fit the calibration region, or
// when the region is too small for the signal subspace to be found (more than
// 80% of its kernel-sized blocks kept as signal).
CoilData maps_espirit(const Calibration& cal, const ImageGrid& grid, const EspiritOptions& opt = {},
                      const std::vector<bool>& support = {});

}  // namespace fhd
