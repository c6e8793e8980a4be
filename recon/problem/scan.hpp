#pragma once
// The scan every stage reads (docs/conventions.md); grids, complex types and trig
// modes are core's (core/types.hpp).
#include <complex>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.hpp"
#include "core/trajectory.hpp"
#include "core/types.hpp"

namespace fhd {

// What a scan says about off-resonance (recon/field/field.hpp): both empty = none.
struct FieldData {
  std::vector<float> hz;     // field map on the image grid (x fastest), Hz
  std::vector<float> times;  // each sample's time after excitation, s
  bool empty() const { return hz.empty() && times.empty(); }
};

// One scan: what a source (phantom or file) hands to the pipeline.
struct Scan {
  ImageGrid grid;
  Trajectory traj;
  std::vector<cfloat> data;  // D_m, non-unitary convention (docs/conventions.md)
  std::vector<cfloat> phi;   // Phi(k_m); empty means Phi = 1 (Dirac basis)
  std::vector<float> dcf;    // density weights for gridding; empty = compute
  std::vector<cfloat> noise; // this coil's noise-only samples (noise calibration); empty = none
  FieldData field;           // field map and sample times; empty = no off-resonance known
  std::map<std::string, std::string> provenance;  // "phantom", "trajectory", "seed", ...
  // Field of view and orientation in the patient, when the file states them
  // (ISMRMRD: FOV and directions; fhdrecon HDF5: FOV only). Empty = unknown:
  // outputs use default_geometry (256 mm, image axes along RAS, centre at 0).
  std::optional<ScanGeometry> geometry;
};

}  // namespace fhd
