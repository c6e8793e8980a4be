#pragma once
// Image outputs: HDF5 (float32 magnitude and complex64 volumes), NIfTI-1
// (magnitude, physical voxel sizes), PNG previews (grayscale montage).
// All writers are atomic (temporary + rename). Volumes are x fastest:
// index = ix + nx * (iy + ny * iz), as ImageGrid says.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/geometry.hpp"
#include "core/units.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

// Views of the caller's volumes (not owned): a 128^3 run stores 80 MB, which
// copying into the maps first cost as much as writing it.
using RealVolumes = std::map<std::string, const std::vector<float>*>;
using ComplexVolumes = std::map<std::string, const std::vector<cfloat>*>;

// One HDF5 file, one dataset per name at the root, shape [Nz, Ny, Nx] (C order,
// so x is the fastest axis, as in memory). Real volumes are float32; complex
// ones the compound {r, i} of float32 (h5py's complex64). Root attributes:
// matrix int32[3] = (nx, ny, nz), voxel_size_mm float64[3] = fov_mm / N.
// Names must be non-empty without '/'; sizes must equal grid.voxels().
// No geometry = default_geometry(grid) (core/geometry.hpp).
void write_image_h5(const std::string& path, const RealVolumes& magnitude, const ComplexVolumes& complex,
                    const ImageGrid& grid, const std::optional<ScanGeometry>& geometry = std::nullopt);

// Voxel size per axis in mm: geometry.fov_mm / N.
FovMm voxel_size_mm(const ImageGrid& grid, const ScanGeometry& geometry);

// The NIfTI affine (RAS+, mm) of a grid placed by `geometry` (LPS): row r is
// (R_r0, R_r1, R_r2, t_r) with x_ras = R * (i, j, k) + t. Columns are the
// direction cosines times the voxel size with x and y negated (LPS -> RAS);
// t puts voxel N/2 at the position.
using Affine = std::array<std::array<double, 4>, 3>;
Affine nifti_affine(const ImageGrid& grid, const ScanGeometry& geometry);

// NIfTI-1 single file (.nii or .nii.gz), FLOAT32, dims (nx, ny, nz) (nz = 1 in 2D),
// pixdim = fov_mm / N in mm, qform and sform = nifti_affine (scanner
// anatomical). No geometry = default_geometry(grid): 256 mm, identity
// rotation, voxel (N/2) at 0 mm.
void write_nifti(const std::string& path, const std::vector<float>& magnitude, const ImageGrid& grid,
                 const std::optional<ScanGeometry>& geometry = std::nullopt);

// 8-bit grayscale image, row 0 at the top.
struct GrayImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // width * height, row-major
};

void write_png_gray(const std::string& path, int width, int height, const std::vector<std::uint8_t>& pixels);

// Display window: values <= lo map to 0, >= hi to 255.
struct Window {
  float lo = 0, hi = 1;
};
// [min(0, smallest), largest] over every row: one scale for all images, so an
// error map is seen at the phantom's scale.
Window shared_window(const std::vector<std::vector<float>>& rows);

// Rows = volumes (e.g. phantom, iterative, gridding, error map), columns = the
// central slices: axial (z = nz/2: x right, y up), coronal (y = ny/2: x right,
// z up), sagittal (x = nx/2: y right, z up); a 2D grid gives the axial column
// only. Tiles are separated by a 2-pixel black gap.
GrayImage build_montage(const std::vector<std::vector<float>>& rows, const ImageGrid& grid, Window window);

// build_montage with shared_window, written as PNG.
void write_montage_png(const std::string& path, const std::vector<std::vector<float>>& rows, const ImageGrid& grid);

}  // namespace fhd
