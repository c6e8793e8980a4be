// Image outputs read back by third-party readers: h5dump, niftiio, libpng.
#include <hdf5.h>

#include <cmath>
#include <filesystem>

#include "catch.hpp"
#include "io/image_out.hpp"
#include "io_test_util.hpp"

#if defined(FHD_HAVE_NIFTI)
#include <nifti1_io.h>
#endif
#if defined(FHD_HAVE_PNG)
#include <png.h>
#endif

using namespace fhd;
using namespace fhd::test;

namespace {
std::vector<float> ramp(const ImageGrid& g) {
  std::vector<float> v(g.voxels());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i) * 0.5f;
  return v;
}
}  // namespace

TEST_CASE("image HDF5: float32 and complex volumes, [z,y,x], as h5py would see them", "[io][image]") {
  TempDir dir;
  const ImageGrid g{6, 5, 4};
  std::vector<float> mag = ramp(g);
  std::vector<cfloat> cpx(g.voxels());
  for (std::size_t i = 0; i < cpx.size(); ++i) cpx[i] = {float(i), -float(i)};
  const std::string path = dir.file("img.h5");
  write_image_h5(path, {{"iterative", &mag}}, {{"complex", &cpx}}, g, default_geometry(g, {120, 100, 80}));
  CHECK(dir.entries() == 1);

  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  hid_t d = H5Dopen2(f, "iterative", H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t dims[3] = {0, 0, 0};
  REQUIRE(H5Sget_simple_extent_dims(sp, dims, nullptr) == 3);
  CHECK(dims[0] == 4);
  CHECK(dims[1] == 5);
  CHECK(dims[2] == 6);
  std::vector<float> back(g.voxels());
  H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data());
  CHECK(back == mag);
  H5Sclose(sp);
  H5Dclose(d);
  double vox[3] = {0, 0, 0};
  hid_t a = H5Aopen(f, "voxel_size_mm", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_DOUBLE, vox);
  H5Aclose(a);
  CHECK(vox[0] == 20.0);
  CHECK(vox[2] == 20.0);
  H5Fclose(f);

  if (on_path("h5dump")) {
    std::string out;
    REQUIRE(run("h5dump -H -d /complex " + path, &out) == 0);
    INFO(out);
    CHECK(contains(out, "H5T_COMPOUND"));
    CHECK(contains(out, "H5T_IEEE_F32LE \"r\";"));
    CHECK(contains(out, "H5T_IEEE_F32LE \"i\";"));
    CHECK(contains(out, "( 4, 5, 6 )"));
    // Element [z=0][y=1][x=2] = flat index 8 = (8, -8).
    REQUIRE(run("h5dump -d /complex -s 0,1,2 -c 1,1,1 " + path, &out) == 0);
    CHECK(contains(out, "8,"));
    CHECK(contains(out, "-8"));
  }
}

TEST_CASE("image HDF5 writer failing midway leaves no file", "[io][image]") {
  TempDir dir;
  const ImageGrid g{4, 4, 1};
  const std::string path = dir.file("img.h5");
  const std::vector<float> good = ramp(g), short_volume(15);
  std::string e = error_of([&] { write_image_h5(path, {{"a_good", &good}, {"b_short", &short_volume}}, {}, g); });
  CHECK(contains(e, path + ": b_short length = 15"));
  CHECK(dir.entries() == 0);
  CHECK(contains(error_of([&] { write_image_h5(path, {{"x/y", &good}}, {}, g); }), "volume name = 'x/y'"));
  CHECK(dir.entries() == 0);
}

#if defined(FHD_HAVE_NIFTI)
TEST_CASE("NIfTI header read back by niftiio: dims, pixdim, datatype, data", "[io][image][nifti]") {
  TempDir dir;
  for (ImageGrid g : {ImageGrid{8, 6, 4}, ImageGrid{10, 12, 1}}) {
    INFO("grid " << g.nx << "x" << g.ny << "x" << g.nz);
    for (const char* name : {"vol.nii", "vol.nii.gz"}) {
      const std::string path = dir.file(name);
      std::vector<float> v = ramp(g);
      write_nifti(path, v, g, default_geometry(g, {240, 180, 120}));
      nifti_image* nim = nifti_image_read(path.c_str(), 1);
      REQUIRE(nim != nullptr);
      CHECK(nim->ndim == 3);
      CHECK(nim->nx == g.nx);
      CHECK(nim->ny == g.ny);
      CHECK(nim->nz == g.nz);
      CHECK(nim->datatype == NIFTI_TYPE_FLOAT32);
      CHECK(std::fabs(nim->dx - 240.0 / g.nx) < 1e-5);
      CHECK(std::fabs(nim->dy - 180.0 / g.ny) < 1e-5);
      CHECK(std::fabs(nim->dz - (g.is3d() ? 120.0 / g.nz : 240.0 / g.nx)) < 1e-5);
      CHECK(nim->xyz_units == NIFTI_UNITS_MM);
      CHECK(nim->qform_code == NIFTI_XFORM_SCANNER_ANAT);
      // Voxel (N/2) maps to 0 mm.
      const mat44& q = nim->qto_xyz;
      CHECK(std::fabs(q.m[0][0] * (g.nx / 2) + q.m[0][3]) < 1e-4);
      CHECK(std::fabs(q.m[1][1] * (g.ny / 2) + q.m[1][3]) < 1e-4);
      CHECK(std::fabs(q.m[2][2] * (g.nz / 2) + q.m[2][3]) < 1e-4);
      CHECK(q.m[0][0] > 0);  // identity rotation: voxel axes are the scanner (RAS+) axes
      CHECK(q.m[0][1] == 0);
      CHECK(q.m[1][0] == 0);
      // sform states the same affine (viewers that read only sform agree).
      CHECK(nim->sform_code == NIFTI_XFORM_SCANNER_ANAT);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) CHECK(std::fabs(nim->sto_xyz.m[r][c] - q.m[r][c]) < 1e-5);
      REQUIRE(nim->nvox == g.voxels());
      const float* data = static_cast<const float*>(nim->data);
      CHECK(std::vector<float>(data, data + nim->nvox) == v);
      nifti_image_free(nim);
    }
  }
  CHECK(dir.entries() == 2);
  CHECK(contains(error_of([&] { write_nifti(dir.file("x.img"), ramp({2, 2, 1}), {2, 2, 1}); }), "x.img"));
}
#endif

#if defined(FHD_HAVE_NIFTI)
namespace {
// An oblique geometry worked out by hand (docs/formats.md "Geometry"):
// grid 8x6x4, FOV (240, 180, 120) mm -> 30 mm voxels; LPS directions
// read (0, 0.6, 0.8), phase (1, 0, 0), slice = read x phase = (0, 0.8, -0.6);
// centre (10, -20, 30) mm LPS. RAS columns are (-x, -y, z) of direction * voxel:
//   i: (0, -18, 24)   j: (-30, 0, 0)   k: (0, -24, -18)
// and voxel (4, 3, 2) sits at the centre, RAS (-10, 20, 30), so
//   t = (-10, 20, 30) - 4 i - 3 j - 2 k = (80, 140, -30).
ScanGeometry oblique() {
  ScanGeometry g;
  g.fov_mm = {240, 180, 120};
  g.position = {10, -20, 30};
  g.read_dir = {0, 0.6, 0.8};
  g.phase_dir = {1, 0, 0};
  g.slice_dir = {0, 0.8, -0.6};
  return g;
}
const double kObliqueAffine[3][4] = {{0, -30, 0, 80}, {-18, 0, -24, 140}, {24, 0, -18, -30}};

void check_affine(const mat44& m, const double (&want)[3][4]) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) {
      INFO("row " << r << " column " << c);
      CHECK(std::fabs(m.m[r][c] - want[r][c]) < 1e-4);
    }
}
}  // namespace

TEST_CASE("NIfTI from an oblique scan geometry: qform and sform equal the hand-computed affine",
          "[io][image][nifti][geometry]") {
  TempDir dir;
  const ImageGrid g{8, 6, 4};
  const std::string path = dir.file("oblique.nii");
  write_nifti(path, ramp(g), g, oblique());
  nifti_image* nim = nifti_image_read(path.c_str(), 1);
  REQUIRE(nim != nullptr);
  CHECK(nim->qform_code == NIFTI_XFORM_SCANNER_ANAT);
  CHECK(nim->sform_code == NIFTI_XFORM_SCANNER_ANAT);
  CHECK(nim->dx == 30.0f);
  CHECK(nim->dy == 30.0f);
  CHECK(nim->dz == 30.0f);
  CHECK(nim->qfac == 1.0f);  // read, phase, slice right-handed
  {
    INFO("sform");
    check_affine(nim->sto_xyz, kObliqueAffine);
  }
  {
    INFO("qform (read back from the quaternion)");
    check_affine(nim->qto_xyz, kObliqueAffine);
  }
  // The centre voxel lands on the acquisition's position (in RAS).
  const double ras[3] = {-10, 20, 30}, centre[3] = {4, 3, 2};
  for (int r = 0; r < 3; ++r) {
    double x = nim->qto_xyz.m[r][3];
    for (int c = 0; c < 3; ++c) x += nim->qto_xyz.m[r][c] * centre[c];
    CHECK(std::fabs(x - ras[r]) < 1e-4);
  }
  nifti_image_free(nim);
}

TEST_CASE("NIfTI of a left-handed geometry: qfac = -1, qform still equals sform", "[io][image][nifti][geometry]") {
  TempDir dir;
  const ImageGrid g{8, 6, 4};
  ScanGeometry geo = oblique();
  geo.slice_dir = {0, -0.8, 0.6};  // -(read x phase): the k column changes sign
  const double want[3][4] = {{0, -30, 0, 80}, {-18, 0, 24, 140 - 2 * 48}, {24, 0, 18, -30 - 2 * 36}};
  write_nifti(dir.file("left.nii"), ramp(g), g, geo);
  nifti_image* nim = nifti_image_read(dir.file("left.nii").c_str(), 1);
  REQUIRE(nim != nullptr);
  CHECK(nim->qfac == -1.0f);
  check_affine(nim->sto_xyz, want);
  check_affine(nim->qto_xyz, want);
  nifti_image_free(nim);
}

TEST_CASE("NIfTI of a 2D slice: thickness from the geometry's fov_mm[2], centre at the position",
          "[io][image][nifti][geometry]") {
  TempDir dir;
  const ImageGrid g{10, 12, 1};
  ScanGeometry geo;  // default axes: RAS identity
  geo.fov_mm = {200, 240, 5};
  geo.position = {-7, 3, 11};  // LPS -> RAS (7, -3, 11)
  write_nifti(dir.file("slice.nii"), ramp(g), g, geo);
  nifti_image* nim = nifti_image_read(dir.file("slice.nii").c_str(), 1);
  REQUIRE(nim != nullptr);
  CHECK(nim->dz == 5.0f);
  const double want[3][4] = {{20, 0, 0, 7 - 5 * 20}, {0, 20, 0, -3 - 6 * 20}, {0, 0, 5, 11}};
  check_affine(nim->sto_xyz, want);
  check_affine(nim->qto_xyz, want);
  nifti_image_free(nim);
  ScanGeometry bad = geo;
  bad.fov_mm[2] = 0;
  CHECK(contains(error_of([&] { write_nifti(dir.file("bad.nii"), ramp(g), g, bad); }), "fov_mm[2] = 0"));
}
#endif

#if defined(FHD_HAVE_PNG)
namespace {
GrayImage read_png(const std::string& path) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_file(&img, path.c_str()) != 0);
  img.format = PNG_FORMAT_GRAY;
  GrayImage out;
  out.width = int(img.width);
  out.height = int(img.height);
  out.pixels.resize(PNG_IMAGE_SIZE(img));
  REQUIRE(png_image_finish_read(&img, nullptr, out.pixels.data(), 0, nullptr) != 0);
  return out;
}
}  // namespace

TEST_CASE("PNG read back by libpng with the right size and pixels", "[io][image][png]") {
  TempDir dir;
  std::vector<std::uint8_t> px(7 * 3);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = std::uint8_t(i * 10);
  write_png_gray(dir.file("a.png"), 7, 3, px);
  GrayImage back = read_png(dir.file("a.png"));
  CHECK(back.width == 7);
  CHECK(back.height == 3);
  CHECK(back.pixels == px);
  CHECK(contains(error_of([&] { write_png_gray(dir.file("b.png"), 7, 4, px); }), "png size = 7x4"));
  CHECK(dir.entries() == 1);
}

TEST_CASE("montage: rows = images, columns = axial/coronal/sagittal, +y up, shared window", "[io][image][png]") {
  TempDir dir;
  const ImageGrid g{8, 6, 4};
  std::vector<float> a(g.voxels(), 0.0f), b(g.voxels(), 0.0f);
  // One bright voxel at (x=1, y=4, z=2) in the first volume; the second is at half scale.
  const std::size_t hot = 1 + 8 * (4 + 6 * 2);
  a[hot] = 10.0f;
  b[hot] = 5.0f;
  write_montage_png(dir.file("m.png"), {a, b}, g);
  GrayImage m = read_png(dir.file("m.png"));
  // Columns 8 + 2 + 8 + 2 + 6 wide; rows max(6, 4) = 6 high, 2-pixel gap.
  CHECK(m.width == 26);
  CHECK(m.height == 14);
  auto px = [&](int x, int y) { return int(m.pixels[std::size_t(y) * m.width + x]); };
  // Axial (z = 2): x = 1, y = 4 drawn at row 6-1-4 = 1.
  CHECK(px(1, 1) == 255);
  CHECK(px(1, 8 + 1) == 128);  // second row at the shared window: 5/10
  // Coronal (y = 3) misses the voxel; sagittal (x = 4) too.
  int bright = 0;
  for (int y = 0; y < 6; ++y)
    for (int x = 10; x < 26; ++x) bright += px(x, y) > 0;
  CHECK(bright == 0);
  // 2D grid: one column only.
  GrayImage flat = build_montage({std::vector<float>(12, 1.0f)}, {4, 3, 1}, {0, 2});
  CHECK(flat.width == 4);
  CHECK(flat.height == 3);
  CHECK(int(flat.pixels[0]) == 128);
}
#endif
