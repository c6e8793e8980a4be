#include "io/image_out.hpp"

#include <cstdint>
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/atomic_file.hpp"
#include "io/h5util.hpp"
#include "core/error.hpp"

#if defined(FHD_HAVE_NIFTI)
#include <nifti1_io.h>
#endif
#if defined(FHD_HAVE_PNG)
#include <png.h>
#endif

namespace fhd {
namespace {

void check_volume(const std::string& path, const std::string& name, std::size_t size, const ImageGrid& g) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw InputError(path, "volume name", "'" + name + "'", "must be non-empty without '/'");
  if (size != g.voxels())
    throw InputError(path, name + " length", std::to_string(size),
                     "must equal the grid's " + std::to_string(g.voxels()) + " voxels");
}

void check_geometry(const std::string& path, const ScanGeometry& g) {
  for (int a = 0; a < 3; ++a)
    if (!(g.fov_mm[a] > 0) || !std::isfinite(g.fov_mm[a]))
      throw InputError(path, "fov_mm[" + std::to_string(a) + "]", std::to_string(g.fov_mm[a]), "must be finite and > 0");
}

}  // namespace

FovMm voxel_size_mm(const ImageGrid& g, const ScanGeometry& geometry) {
  const FovMm& fov = geometry.fov_mm;
  return {fov[0] / g.nx, fov[1] / g.ny, fov[2] / g.nz};
}

Affine nifti_affine(const ImageGrid& g, const ScanGeometry& geometry) {
  const FovMm vox = voxel_size_mm(g, geometry);
  const Vec3* dirs[3] = {&geometry.read_dir, &geometry.phase_dir, &geometry.slice_dir};
  const int half[3] = {g.nx / 2, g.ny / 2, g.nz / 2};
  const double lps_to_ras[3] = {-1, -1, 1};
  Affine a{};
  for (int r = 0; r < 3; ++r) {
    a[r][3] = lps_to_ras[r] * geometry.position[r];
    for (int c = 0; c < 3; ++c) {
      a[r][c] = lps_to_ras[r] * (*dirs[c])[r] * vox[c] + 0.0;  // + 0.0: no -0 in headers
      a[r][3] -= half[c] * a[r][c];  // voxel N/2 at the position
    }
  }
  return a;
}

void write_image_h5(const std::string& path, const RealVolumes& magnitude, const ComplexVolumes& complex,
                    const ImageGrid& grid, const std::optional<ScanGeometry>& geometry) {
  const ScanGeometry geom = geometry ? *geometry : default_geometry(grid);
  check_geometry(path, geom);
  h5::QuietErrors quiet;
  AtomicOutput out(path);
  {
    h5::Handle f = h5::create_file(out.tmp());
    const std::vector<hsize_t> dims = {hsize_t(grid.nz), hsize_t(grid.ny), hsize_t(grid.nx)};
    // Each volume is checked as it is written: a bad one midway leaves no file.
    for (const auto& [name, v] : magnitude) {
      check_volume(path, name, v->size(), grid);
      h5::write_dataset(f.get(), name.c_str(), H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, dims, v->data());
    }
    h5::Handle ctype = h5::complex_type();
    for (const auto& [name, v] : complex) {
      check_volume(path, name, v->size(), grid);
      if (magnitude.count(name)) throw InputError(path, "volume name", name, "used twice");
      h5::write_dataset(f.get(), name.c_str(), ctype.get(), ctype.get(), dims, v->data());
    }
    const int matrix[3] = {grid.nx, grid.ny, grid.nz};
    h5::write_attr(f.get(), "matrix", H5T_NATIVE_INT, H5T_STD_I32LE, 3, matrix);
    const FovMm vox = voxel_size_mm(grid, geom);
    h5::write_attr(f.get(), "voxel_size_mm", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, 3, vox.data());
    h5::write_string_attr(f.get(), "axes", "dataset dims are [z, y, x]; x fastest");
    h5::check(H5Fflush(f.get(), H5F_SCOPE_GLOBAL), "flush " + path);
    f.close("close " + path);  // a full disk shows here: never rename a broken file into place
  }
  out.commit();
}

#if defined(FHD_HAVE_NIFTI)
namespace {

// qform (a rotation, qfac and the voxel sizes) and sform (the matrix) of one affine.
void set_orientation(nifti_image* nim, const Affine& a) {
  mat44 m{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) m.m[r][c] = float(a[r][c]);
  m.m[3][3] = 1;
  nim->qform_code = NIFTI_XFORM_SCANNER_ANAT;
  nifti_mat44_to_quatern(m, &nim->quatern_b, &nim->quatern_c, &nim->quatern_d, &nim->qoffset_x, &nim->qoffset_y,
                         &nim->qoffset_z, nullptr, nullptr, nullptr, &nim->qfac);
  nim->qto_xyz = nifti_quatern_to_mat44(nim->quatern_b, nim->quatern_c, nim->quatern_d, nim->qoffset_x,
                                        nim->qoffset_y, nim->qoffset_z, nim->dx, nim->dy, nim->dz, nim->qfac);
  // The same affine as sform too: viewers that read only one of them agree.
  nim->sform_code = NIFTI_XFORM_SCANNER_ANAT;
  nim->sto_xyz = m;
}

}  // namespace

void write_nifti(const std::string& path, const std::vector<float>& magnitude, const ImageGrid& grid,
                 const std::optional<ScanGeometry>& geometry) {
  const ScanGeometry geom = geometry ? *geometry : default_geometry(grid);
  check_volume(path, "volume", magnitude.size(), grid);
  check_geometry(path, geom);
  auto ends = [&](const std::string& e) {
    return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (!ends(".nii") && !ends(".nii.gz"))
    throw InputError(path, "file name", path, "NIfTI output must end in .nii or .nii.gz");
  const FovMm vox = voxel_size_mm(grid, geom);
  // Always 3 dims: a 2D image is one slice (nz = 1), as scanners write it.
  int dims[8] = {3, grid.nx, grid.ny, grid.nz, 1, 1, 1, 1};
  nifti_image* nim = nifti_make_new_nim(dims, NIFTI_TYPE_FLOAT32, 1);
  if (!nim) throw InputError(path, "nifti", path, "niftiio could not allocate the image");
  std::copy(magnitude.begin(), magnitude.end(), static_cast<float*>(nim->data));
  nim->dx = nim->pixdim[1] = float(vox[0]);
  nim->dy = nim->pixdim[2] = float(vox[1]);
  nim->dz = nim->pixdim[3] = float(vox[2]);
  nim->xyz_units = NIFTI_UNITS_MM;
  set_orientation(nim, nifti_affine(grid, geom));
  AtomicOutput out(path);
  const bool named = nifti_set_filenames(nim, out.tmp().c_str(), 0, 1) == 0;
  if (named) nifti_image_write(nim);  // void: success is checked through the file
  nifti_image_free(nim);
  // nifti_image_write returns nothing: check the file (a full disk truncates it).
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::exists(out.tmp(), ec) ? std::filesystem::file_size(out.tmp(), ec) : 0;
  const std::uintmax_t want = 352 + 4 * std::uintmax_t(magnitude.size());  // header + vox_offset pad, float32
  if (!named || size == 0 || (ends(".nii") && size != want))
    throw InputError(path, "nifti", path, "niftiio failed to write the whole file (disk full?)");
  out.commit();
}
#else
void write_nifti(const std::string& path, const std::vector<float>&, const ImageGrid&,
                 const std::optional<ScanGeometry>&) {
  throw InputError(path, "format", "nifti", "this build has no NIfTI support (niftiio not found)");
}
#endif

#if defined(FHD_HAVE_PNG)
void write_png_gray(const std::string& path, int width, int height, const std::vector<std::uint8_t>& pixels) {
  if (width <= 0 || height <= 0 || pixels.size() != std::size_t(width) * height)
    throw InputError(path, "png size", std::to_string(width) + "x" + std::to_string(height),
                     "does not match " + std::to_string(pixels.size()) + " pixels");
  AtomicOutput out(path);
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  img.width = png_uint_32(width);
  img.height = png_uint_32(height);
  img.format = PNG_FORMAT_GRAY;
  if (!png_image_write_to_file(&img, out.tmp().c_str(), 0, pixels.data(), width, nullptr)) {
    std::string why = img.message;
    png_image_free(&img);
    throw InputError(path, "png", path, "libpng: " + why);
  }
  out.commit();
}
#else
void write_png_gray(const std::string& path, int, int, const std::vector<std::uint8_t>&) {
  throw InputError(path, "format", "png", "this build has no PNG support (libpng not found)");
}
#endif

Window shared_window(const std::vector<std::vector<float>>& rows) {
  Window w{0, -INFINITY};
  for (const auto& r : rows)
    for (float v : r)
      if (std::isfinite(v)) {
        w.lo = std::min(w.lo, v);
        w.hi = std::max(w.hi, v);
      }
  if (!(w.hi > w.lo)) w.hi = w.lo + 1;  // blank or constant images
  return w;
}

namespace {

struct Tile {
  int w, h;
  // Volume index of tile pixel (column c, row r counted from the bottom).
  std::size_t (*index)(const ImageGrid&, int c, int r);
};

std::size_t at(const ImageGrid& g, int x, int y, int z) { return x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z); }
std::size_t axial(const ImageGrid& g, int c, int r) { return at(g, c, r, g.nz / 2); }
std::size_t coronal(const ImageGrid& g, int c, int r) { return at(g, c, g.ny / 2, r); }
std::size_t sagittal(const ImageGrid& g, int c, int r) { return at(g, g.nx / 2, c, r); }

std::vector<Tile> tiles(const ImageGrid& g) {
  if (!g.is3d()) return {{g.nx, g.ny, axial}};
  return {{g.nx, g.ny, axial}, {g.nx, g.nz, coronal}, {g.ny, g.nz, sagittal}};
}

std::uint8_t gray(float v, Window w) {
  if (!std::isfinite(v)) return 0;
  const float t = (v - w.lo) / (w.hi - w.lo);
  return std::uint8_t(std::lround(255.0f * std::clamp(t, 0.0f, 1.0f)));
}

}  // namespace

GrayImage build_montage(const std::vector<std::vector<float>>& rows, const ImageGrid& grid, Window window) {
  constexpr int gap = 2;
  const std::vector<Tile> cols = tiles(grid);
  int width = 0, row_h = 0;
  for (const Tile& t : cols) {
    width += t.w + gap;
    row_h = std::max(row_h, t.h);
  }
  GrayImage img;
  img.width = width - gap;
  img.height = int(rows.size()) * (row_h + gap) - gap;
  if (rows.empty()) img.height = 0;
  img.pixels.assign(std::size_t(std::max(img.width, 0)) * std::max(img.height, 0), 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != grid.voxels())
      throw InputError("montage", "row " + std::to_string(i) + " length", std::to_string(rows[i].size()),
                       "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
    int x0 = 0;
    const int y0 = int(i) * (row_h + gap);
    for (const Tile& t : cols) {
      for (int r = 0; r < t.h; ++r)
        for (int c = 0; c < t.w; ++c)  // r counts up from the bottom: +y / +z up
          img.pixels[std::size_t(y0 + t.h - 1 - r) * img.width + x0 + c] = gray(rows[i][t.index(grid, c, r)], window);
      x0 += t.w + gap;
    }
  }
  return img;
}

void write_montage_png(const std::string& path, const std::vector<std::vector<float>>& rows, const ImageGrid& grid) {
  if (rows.empty()) throw InputError(path, "montage rows", "0", "nothing to draw");
  GrayImage img = build_montage(rows, grid, shared_window(rows));
  write_png_gray(path, img.width, img.height, img.pixels);
}

}  // namespace fhd
