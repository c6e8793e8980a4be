#pragma once
// Where a scan's image sits in the patient (docs/formats.md "Geometry"), as
// ISMRMRD and DICOM state it: patient coordinates LPS (+x left, +y posterior,
// +z head), millimetres. Image axis x is the readout (kx), y the phase
// direction (ky), z the slice direction (kz), so voxel (i, j, k) lies at
//   position + (i - nx/2) dx read_dir + (j - ny/2) dy phase_dir + (k - nz/2) dz slice_dir,
// d = fov_mm / N per axis: voxel N/2, fhdrecon's origin (docs/conventions.md),
// is the centre of the field of view.
#include <array>
#include <cmath>

#include "core/types.hpp"
#include "core/units.hpp"

namespace fhd {

using Vec3 = std::array<double, 3>;

struct ScanGeometry {
  FovMm fov_mm = kDefaultFov;  // per image axis; a 2D scan's fov_mm[2] is its slice thickness
  Vec3 position = {0, 0, 0};   // centre of the field of view (voxel N/2), LPS mm
  // Unit vectors of the image axes in LPS. The default, (-1,0,0), (0,-1,0),
  // (0,0,1), is the identity in RAS: image x, y, z are NIfTI's x, y, z.
  Vec3 read_dir = {-1, 0, 0};
  Vec3 phase_dir = {0, -1, 0};
  Vec3 slice_dir = {0, 0, 1};
};

// What outputs use when a scan says nothing of its geometry (phantoms, BART
// files): FOV `fov` (256 mm) per axis, a 2D scan's slice as thick as its x
// voxel, the image axes along RAS, the centre at 0 mm.
inline ScanGeometry default_geometry(const ImageGrid& g, const FovMm& fov = kDefaultFov) {
  ScanGeometry s;
  s.fov_mm = {fov[0], fov[1], g.is3d() ? fov[2] : fov[0] / g.nx};
  return s;
}

inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

}  // namespace fhd
