// The outputs other tools and people read: the man page against --help,
// --version, BART reading our .cfl, nifti_tool reading our NIfTI (plain and
// oblique), the batch overview sheet and the default run's figures.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io/figures.hpp"
#include "io/ismrmrd_io.hpp"
#include "output_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::test::CliRun;
using fhd::test::run_cli;
using fhd::test::shell;
using fhd::test::outputs::fresh;
using fhd::test::outputs::kTiny;

namespace {

struct PngInfo {
  unsigned width = 0, height = 0;
  std::size_t bytes = 0;
};

// A PNG's size from its IHDR chunk (big-endian width, height at bytes 16, 20).
PngInfo png_info(const fs::path& path) {
  REQUIRE(fs::exists(path));
  std::ifstream f(path, std::ios::binary);
  std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(b.size() > 24);
  REQUIRE(b.compare(1, 3, "PNG") == 0);
  auto be32 = [&](int at) {
    return (unsigned(uint8_t(b[at])) << 24) | (unsigned(uint8_t(b[at + 1])) << 16) |
           (unsigned(uint8_t(b[at + 2])) << 8) | unsigned(uint8_t(b[at + 3]));
  };
  return {be32(16), be32(20), b.size()};
}

}  // namespace

TEST_CASE("the man page names every option of fhdrecon --help", "[outputs][man]") {
  // docs/fhdrecon.1 is written by hand: this keeps it from falling behind --help
  // (11 of the main command's options were missing from it).
  const CliRun r = run_cli("--help");
  REQUIRE(r.code == 0);
  std::ifstream f(std::string(FHD_SOURCE_DIR) + "/docs/fhdrecon.1");
  std::string man((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(!man.empty());
  // roff writes a hyphen as \-: compare with plain hyphens.
  for (std::size_t at; (at = man.find("\\-")) != std::string::npos;) man.erase(at, 1);
  int options = 0;
  for (std::size_t at = r.out.find("--"); at != std::string::npos; at = r.out.find("--", at + 2)) {
    std::size_t end = at + 2;
    while (end < r.out.size() && (std::isalnum(static_cast<unsigned char>(r.out[end])) || r.out[end] == '-')) ++end;
    const std::string opt = r.out.substr(at, end - at);
    if (opt.size() < 4 || !std::isalpha(static_cast<unsigned char>(opt[2]))) continue;
    ++options;
    INFO(opt);
    CHECK(man.find(opt) != std::string::npos);
  }
  CHECK(options > 20);
}

TEST_CASE("--version names the git revision and whether CUDA is built in", "[outputs]") {
  CliRun r = run_cli("--version");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("fhdrecon ") == 0);
  CHECK(r.out.find("(git ") != std::string::npos);
  CHECK(r.out.find("CUDA backend") != std::string::npos);
}

#if defined(FHD_HAVE_NIFTI)
#include <nifti1_io.h>

#include <complex>
#include <sstream>

TEST_CASE("--save cfl: bart reads our image with BART's dimension order and the same values", "[outputs][bart]") {
  if (std::system("command -v bart >/dev/null 2>&1") != 0) FHD_SKIP("bart not installed");
  const fs::path d = fresh("cfl");
  CliRun r = run_cli(kTiny + " --save cfl,nii --out " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(fs::exists(d / "iterative.cfl"));
  CHECK(!fs::exists(d / "images.h5"));
  const std::string base = (d / "iterative").string();
  const std::string meta = shell("bart show -m " + base);
  INFO(meta);
  CHECK(meta.find("AoD:\t16\t16\t1\t1") != std::string::npos);  // [x, y, z, ...]: x is BART's dim 0
  // bart show: one line per y, x across; compare magnitudes with our NIfTI (x fastest).
  std::istringstream lines(shell("bart show " + base));  // "+1.2e+00-3.4e-01i" per value
  nifti_image* nim = nifti_image_read((d / "iterative.nii").c_str(), 1);
  REQUIRE(nim != nullptr);
  const float* mag = static_cast<const float*>(nim->data);
  int n = 0;
  double worst = 0, peak = 0;
  for (std::string tok; lines >> tok; ++n) {
    double re = 0, im = 0;
    REQUIRE(std::sscanf(tok.c_str(), "%lf%lfi", &re, &im) == 2);
    REQUIRE(n < 256);
    worst = std::max(worst, std::abs(std::abs(std::complex<double>(re, im)) - mag[n]));
    peak = std::max(peak, double(mag[n]));
  }
  nifti_image_free(nim);
  CHECK(n == 256);
  CHECK(peak > 0.1);
  CHECK(worst < 1e-5 * peak);  // bart prints 7 significant digits
}
#endif

// One field of `nifti_tool -disp_hdr` output ("name offset nvals values..."):
// its values, empty when the field is missing.
std::vector<double> nifti_field(const std::string& hdr, const std::string& name) {
  std::istringstream lines(hdr);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string w, off, n;
    if (!(words >> w >> off >> n) || w != name) continue;
    std::vector<double> v;
    for (double x; words >> x;) v.push_back(x);
    return v;
  }
  return {};
}

TEST_CASE("nifti_tool reads our NIfTI: scanner-anatomical qform and sform, mm voxels, voxel N/2 at 0 mm",
          "[outputs][nifti]") {
  if (std::system("command -v nifti_tool >/dev/null 2>&1") != 0) FHD_SKIP("nifti_tool not installed (nifti-bin)");
  const fs::path d = fresh("niftitool");
  CliRun r = run_cli(kTiny + " --save nii --out " + d.string());  // 16^2, FOV 256 mm: 16 mm voxels
  INFO(r.out);
  REQUIRE(r.code == 0);
  const std::string hdr = shell("nifti_tool -disp_hdr -infiles " + (d / "iterative.nii").string() +
                                " -field dim -field pixdim -field xyzt_units -field qform_code -field sform_code"
                                " -field quatern_b -field quatern_c -field quatern_d -field qoffset_x"
                                " -field qoffset_y -field srow_x -field srow_y -field srow_z");
  INFO(hdr);
  auto values = [&](const std::string& name) { return nifti_field(hdr, name); };
  CHECK(values("dim") == std::vector<double>{3, 16, 16, 1, 0, 0, 0, 0});
  REQUIRE(values("pixdim").size() == 8);
  CHECK(values("pixdim")[1] == 16.0);
  CHECK(values("pixdim")[2] == 16.0);
  CHECK(values("xyzt_units") == std::vector<double>{2});     // NIFTI_UNITS_MM
  CHECK(values("qform_code") == std::vector<double>{1});     // NIFTI_XFORM_SCANNER_ANAT
  CHECK(values("sform_code") == std::vector<double>{1});
  for (const char* q : {"quatern_b", "quatern_c", "quatern_d"}) CHECK(values(q) == std::vector<double>{0});
  CHECK(values("qoffset_x") == std::vector<double>{-128});  // voxel 8 (N/2) at 0 mm
  CHECK(values("qoffset_y") == std::vector<double>{-128});
  CHECK(values("srow_x") == std::vector<double>{16, 0, 0, -128});
  CHECK(values("srow_y") == std::vector<double>{0, 16, 0, -128});
  REQUIRE(values("srow_z").size() == 4);
  CHECK(values("srow_z")[0] == 0);
  CHECK(values("srow_z")[1] == 0);
}

#if defined(FHD_HAVE_ISMRMRD)
TEST_CASE("nifti_tool reads the NIfTI of an oblique ISMRMRD scan with the scan's orientation",
          "[outputs][nifti][geometry]") {
  if (std::system("command -v nifti_tool >/dev/null 2>&1") != 0) FHD_SKIP("nifti_tool not installed (nifti-bin)");
  const fs::path d = fresh("oblique"), in = fresh("oblique-in");
  fs::create_directories(in);
  const std::string plain = (in / "plain.mrd").string(), oblique = (in / "oblique.mrd").string();
  REQUIRE(run_cli("--quiet synth --phantom shepp2d --matrix 16 --spokes 16 -o " + plain).code == 0);
  // A sagittal slice: read along LPS +y (posterior), phase along -z (feet),
  // slice = read x phase = -x (right); FOV 240 mm (15 mm voxels), 6 mm thick,
  // centred at (12, -30, 45) mm LPS.
  std::vector<fhd::Scan> coils = fhd::read_ismrmrd(plain);
  fhd::ScanGeometry g;
  g.fov_mm = {240, 240, 6};
  g.position = {12, -30, 45};
  g.read_dir = {0, 1, 0};
  g.phase_dir = {0, 0, -1};
  g.slice_dir = {-1, 0, 0};
  for (fhd::Scan& c : coils) c.geometry = g;
  fhd::write_ismrmrd(oblique, coils, 0);
  CliRun r = run_cli("--input " + oblique + " --iters 3 --no-cache --quiet --save nii --out " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  const std::string hdr = shell("nifti_tool -disp_hdr -infiles " + (d / "iterative.nii").string() +
                                " -field pixdim -field qform_code -field sform_code -field srow_x -field srow_y"
                                " -field srow_z -field qoffset_x -field qoffset_y -field qoffset_z");
  INFO(hdr);
  auto values = [&](const std::string& name) { return nifti_field(hdr, name); };
  // RAS = (-x, -y, z) of LPS. Columns: i = read * 15 -> (0, -15, 0), j = phase * 15
  // -> (0, 0, -15), k = slice * 6 -> (6, 0, 0); voxel (8, 8, 0) at RAS (-12, 30, 45),
  // so t = (-12, 30, 45) - 8 i - 8 j = (-12, 150, 165).
  CHECK(values("pixdim") == std::vector<double>{1, 15, 15, 6, 0, 0, 0, 0});  // pixdim[0] = qfac = 1
  CHECK(values("qform_code") == std::vector<double>{1});
  CHECK(values("sform_code") == std::vector<double>{1});
  CHECK(values("srow_x") == std::vector<double>{0, 0, 6, -12});
  CHECK(values("srow_y") == std::vector<double>{-15, 0, 0, 150});
  CHECK(values("srow_z") == std::vector<double>{0, -15, 0, 165});
  CHECK(values("qoffset_x") == std::vector<double>{-12});
  CHECK(values("qoffset_y") == std::vector<double>{150});
  CHECK(values("qoffset_z") == std::vector<double>{165});
  // The qform's matrix as niftiio rebuilds it from the quaternion.
  const std::string nim = shell("nifti_tool -disp_nim -infiles " + (d / "iterative.nii").string() + " -field qto_xyz");
  INFO(nim);
  std::istringstream words(nim.substr(nim.find("qto_xyz")));
  std::string name, off, n;
  words >> name >> off >> n;
  std::vector<double> q;
  for (double x; words >> x;) q.push_back(x);
  const std::vector<double> want = {0, 0, 6, -12, -15, 0, 0, 150, 0, -15, 0, 165, 0, 0, 0, 1};
  REQUIRE(q.size() == want.size());
  for (std::size_t i = 0; i < q.size(); ++i) CHECK(std::abs(q[i] - want[i]) < 1e-4);
}
#endif

TEST_CASE("batch writes an overview sheet of its scans", "[outputs][batch]") {
  if (!fhd::figures_available()) FHD_SKIP("built without Cairo");
  const fs::path in = fresh("sheet-in"), out = fresh("sheet-out");
  fs::create_directories(in);
  REQUIRE(run_cli("--quiet synth --phantom shepp2d --matrix 16 --spokes 16 -o " + (in / "a.h5").string()).code == 0);
  std::ofstream(in / "bad.h5") << "not hdf5";
  CliRun r = run_cli("--quiet batch " + (in / "a.h5").string() + " " + (in / "bad.h5").string() +
                     " --iters 3 --no-cache --out " + out.string());
  INFO(r.out);
  const PngInfo png = png_info(out / "overview.png");
  // Two tiles side by side: wider than one 200-pixel tile, and a few kB of drawing.
  CHECK(png.width > 400);
  CHECK(png.bytes > 4000);
}

TEST_CASE("the default run's montage and convergence plot are screen-sized PNGs", "[outputs][figures]") {
  if (!fhd::figures_available()) FHD_SKIP("built without Cairo");
  const fs::path d = fresh("figures");
  CliRun r = run_cli(kTiny + " --out " + d.string());  // 16^2: 5 columns of one slice
  INFO(r.out);
  REQUIRE(r.code == 0);
  // The plain gray montage of a 16^2 run is 16x52 pixels (three rows of one
  // 16-pixel slice); the Cairo montage enlarges each tile
  // to about 200 pixels, with titles and a colour bar.
  const PngInfo montage = png_info(d / "montage.png"), conv = png_info(d / "convergence.png");
  CHECK(montage.width > 5 * 150);
  CHECK(montage.height > 150);
  CHECK(conv.width >= 400);
  CHECK(conv.height >= 250);
  CHECK(conv.bytes > 4000);  // axes, two curves, labels: not a blank image
}
