// Output sets are all-or-nothing (io/atomic_file.hpp OutputSet): a full disk,
// SIGINT/SIGTERM between files or just before the swap, and a second writer
// all leave the previous set byte-identical and no temporaries behind.
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io/figures.hpp"
#include "io/ismrmrd_io.hpp"
#include "recon/plan/qcache.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::test::CliRun;
using fhd::test::exit_status;
using fhd::test::run_cli;
using fhd::test::shell;

namespace {

const std::string kTiny = "--phantom shepp2d --matrix 16 --spokes 16 --iters 3 --no-cache --quiet";

std::set<std::string> names_of(const std::map<std::string, std::string>& files) {
  std::set<std::string> names;
  for (const auto& f : files) names.insert(f.first);
  return names;
}

std::map<std::string, std::string> snapshot(const fs::path& d) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(d)) {
    std::ifstream in(e.path(), std::ios::binary);
    files[e.path().filename().string()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

// Per process: test runs of several checkouts at once never share a directory.
// Removed when the test program ends.
struct Scratch {
  std::string prefix = "fhdrecon-out" + std::to_string(::getpid()) + "-";
  ~Scratch() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(e.path(), ec);
  }
} g_scratch;

fs::path fresh(const std::string& name) {
  return fhd::test::fresh_temp_dir("out" + std::to_string(::getpid()), name);
}

// No staging directory beside d, no temporary inside it.
void require_no_temporaries(const fs::path& d) {
  const std::string prefix = "." + d.filename().string() + ".fhdtmp-";
  for (const auto& e : fs::directory_iterator(d.parent_path()))
    CHECK(e.path().filename().string().rfind(prefix, 0) != 0);
  if (fs::exists(d))
    for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().find(".fhdtmp-") == std::string::npos);
}

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

// A good first set in a fresh directory; returns its bytes.
std::map<std::string, std::string> good_set(const fs::path& d) {
  CliRun r = run_cli(kTiny + " --out " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  auto s = snapshot(d);
  REQUIRE(s.count("report.json"));
  return s;
}

// How many lines of `out` start with "fhdrecon: error: ".
int error_lines(const std::string& out) {
  int n = 0;
  for (std::size_t at = out.find("fhdrecon: error: "); at != std::string::npos;
       at = out.find("fhdrecon: error: ", at + 1))
    n += at == 0 || out[at - 1] == '\n';
  return n;
}

// A failed run ends by exit (1 or 2) with its one error line, never by a
// signal: bash reports a crash as 128 + signal ("Segmentation fault", rc=139).
void require_clean_failure(const std::string& out) {
  INFO(out);
  CHECK(error_lines(out) == 1);
  const int rc = exit_status(out);
  CHECK((rc == 1 || rc == 2));
  CHECK(out.find("Segmentation fault") == std::string::npos);
  CHECK(out.find("HDF5 Error") == std::string::npos);  // no library error stack
}

}  // namespace

TEST_CASE("a full disk (RLIMIT_FSIZE) fails with one line and keeps the previous set", "[outputs]") {
  const fs::path d = fresh("full");
  const auto before = good_set(d);
  // 8 KiB per file: the report fits, images.h5 does not. SIGXFSZ ignored: write() fails with EFBIG.
  const std::string out = shell("trap \"\" XFSZ; ulimit -f 8; $FHD --phantom shepp2d --matrix 32 --spokes 16 --iters 3 --no-cache "
                                "--quiet --out " + d.string() +
                                "; echo rc=$?");
  INFO(out);
  CHECK(out.find("fhdrecon: error: ") != std::string::npos);
  // The message names the file asked for (not a staging copy) and what survives.
  CHECK(out.find((d / "images.h5").string() + ": not written") != std::string::npos);
  CHECK(out.find("the previous outputs are kept") != std::string::npos);
  CHECK(out.find("rc=0") == std::string::npos);
  require_clean_failure(out);
  CHECK(snapshot(d) == before);
  require_no_temporaries(d);
}

TEST_CASE("batch on a full disk: each scan's row says why, no crash, the previous sets survive",
          "[outputs][batch]") {
  const fs::path in = fresh("bfull-in"), out = fresh("bfull-out");
  fs::create_directories(in);
  REQUIRE(run_cli("--quiet synth --phantom shepp2d --matrix 32 --spokes 16 -o " + (in / "a.h5").string()).code == 0);
  const std::string batch = "$FHD --quiet batch " + (in / "a.h5").string() + " --iters 3 --no-cache --force --out " +
                            out.string();
  const std::string first = shell(batch + "; echo rc=$?");
  INFO(first);
  REQUIRE(exit_status(first) == 0);
  const auto before = snapshot(out / "a");
  // 16 KiB per file: the summary and the sheet fit, the scan's images.h5 (63 KB) does not.
  const std::string full = shell("trap \"\" XFSZ; ulimit -f 16; " + batch + "; echo rc=$?");
  INFO(full);
  CHECK(exit_status(full) == 2);  // scans failed; batch itself ended normally
  std::ifstream csv(out / "summary.csv");
  const std::string summary((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  INFO(summary);
  CHECK(summary.find("a.h5,failed,") != std::string::npos);
  CHECK(summary.find("crashed") == std::string::npos);  // used to be "crashed: signal 11"
  CHECK(snapshot(out / "a") == before);
  require_no_temporaries(out / "a");
}

TEST_CASE("SIGINT or SIGTERM between files or before the swap keeps the previous set", "[outputs]") {
  const fs::path d = fresh("signal");
  const auto before = good_set(d);
  for (const char* hook : {"sigint@1", "sigterm@2", "sigint@4", "sigterm@swap"}) {
    const std::string out =
        shell(std::string("FHDRECON_TEST_HOOK=") + hook + " $FHD " + kTiny + " --out " + d.string() + "; echo rc=$?");
    INFO(hook << ": " << out);
    CHECK(out.find("interrupted") != std::string::npos);
    const bool term = std::string(hook).find("term") != std::string::npos;
    CHECK(out.find(term ? "rc=143" : "rc=130") != std::string::npos);
    CHECK(snapshot(d) == before);
    require_no_temporaries(d);
  }
}

TEST_CASE("SIGINT or SIGTERM at unplanned times (0.05 to 1.5 s in) keeps one whole set", "[outputs]") {
  // The hooks above stop at chosen points; here the signal lands wherever the
  // run is after a delay (mostly during compute: FhD, Q, CG). Whatever it hit,
  // DIR holds one whole set (the old one, or the new one when the run finished
  // first) and no temporaries. A background job of a non-interactive shell
  // starts with SIGINT ignored, so a SIGINT before main installs its handler
  // is ignored and that run finishes (rc 0).
  const fs::path d = fresh("anytime");
  auto before = good_set(d);
  const std::string run = "$FHD --phantom shepp2d --matrix 48 --spokes 48 --iters 20 --no-cache --quiet --out " +
                          d.string();
  int interrupted = 0;
  for (const char* sig : {"INT", "TERM"})
    for (const char* delay : {"0.05", "0.2", "0.4", "0.8", "1.5"}) {
      const std::string out = shell(run + " > /dev/null 2>&1 & p=$!; sleep " + std::string(delay) + "; kill -" + sig +
                                    " $p; wait $p; echo rc=$?");
      INFO(sig << " after " << delay << " s: " << out);
      const int rc = exit_status(out);
      CHECK((rc == 0 || rc == 130 || rc == 143));
      require_no_temporaries(d);
      if (rc != 0) ++interrupted;
      const auto now = snapshot(d);
      if (now != before) {
        // The run swapped its new set in first (it finished, or the signal
        // landed after the swap): the new set must be whole, file for file.
        CHECK(names_of(now) == names_of(before));
        CHECK(now.count("report.json"));
        before = now;
      }
    }
  INFO("interrupted runs: " << interrupted);
  CHECK(interrupted > 0);
}

TEST_CASE("a second writer into the same --out is refused; the first one's interrupt keeps the old set",
          "[outputs]") {
  const fs::path d = fresh("lock");
  const auto before = good_set(d);
  const std::string staging = "." + d.filename().string() + ".fhdtmp-";
  const std::string out = shell(
      "FHDRECON_TEST_HOOK=pause@1 $FHD " + kTiny + " --out " + d.string() + " & a=$!; " +
      "for i in $(seq 300); do ls -a " + d.parent_path().string() + " | grep -q \"^" + staging +
      "\" && break; sleep 0.1; done; $FHD " + kTiny + " --out " + d.string() +
      "; echo second=$?; kill -TERM $a; wait $a; echo first=$?");
  INFO(out);
  CHECK(out.find("another fhdrecon run is writing it") != std::string::npos);
  CHECK(out.find("second=2") != std::string::npos);
  CHECK(out.find("first=143") != std::string::npos);
  CHECK(snapshot(d) == before);
  require_no_temporaries(d);
  // And once it is gone, a run goes through.
  CHECK(run_cli(kTiny + " --out " + d.string()).code == 0);
}

TEST_CASE("the next run removes what a killed run left; foreign files stay, subdirectories are refused",
          "[outputs]") {
  const fs::path d = fresh("stale");
  good_set(d);
  const fs::path stale = d.parent_path() / ("." + d.filename().string() + ".fhdtmp-999999");
  fs::create_directories(stale);
  std::ofstream(stale / "images.h5") << "half";
  std::ofstream(d / ".fhdtmp-1-2-report.json") << "half";
  std::ofstream(d / "notes.txt") << "mine";
  std::ofstream(d / "montage.png") << "an older run's";
  CliRun r = run_cli(kTiny + " --save h5 --out " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  require_no_temporaries(d);
  CHECK(!fs::exists(stale));
  CHECK(snapshot(d)["notes.txt"] == "mine");
  CHECK(!fs::exists(d / "montage.png"));  // not written by this run: dropped, not mixed in
  CHECK(!fs::exists(d / "iterative.nii"));
  fs::create_directories(d / "sub");
  r = run_cli(kTiny + " --out " + d.string());
  CHECK(r.code == 2);
  CHECK(r.out.find("subdirectory 'sub'") != std::string::npos);
}

TEST_CASE("--out \"\" and an unusable --json are refused before any work", "[outputs]") {
  CliRun r = run_cli(kTiny + " --out \"\"");
  CHECK(r.code == 2);
  CHECK(r.out.find("--out") != std::string::npos);
  const fs::path d = fresh("json");
  fs::create_directories(d / "adir");
  r = run_cli(kTiny + " --out " + (d / "o").string() + " --json " + (d / "adir").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("is a directory") != std::string::npos);
  CHECK(r.out.find("PSNR") == std::string::npos);  // no table: nothing was computed
  CHECK(!fs::exists(d / "o"));
  // A place nobody can create files in, root included: refused before the work too.
  r = run_cli(kTiny + " --out " + (d / "o").string() + " --json /proc/fhdrecon-report.json");
  CHECK(r.code == 2);
  CHECK(r.out.find("/proc/fhdrecon-report.json") != std::string::npos);
  CHECK(r.out.find("PSNR") == std::string::npos);
  CHECK(!fs::exists(d / "o"));
  r = run_cli(kTiny + " --save h5,tiff --out " + (d / "o").string());
  CHECK(r.code == 2);
  CHECK(r.out.find("tiff") != std::string::npos);
}

TEST_CASE("synth to .h5 and .mrd on a full disk keeps the old file", "[outputs]") {
  const fs::path d = fresh("synth");
  fs::create_directories(d);
  for (const char* name : {"scan.h5", "scan.mrd"}) {
    const fs::path f = d / name;
    CliRun r = run_cli("--quiet synth --phantom shepp2d --matrix 16 --spokes 8 -o " + f.string());
    INFO(r.out);
    if (r.code != 0 && std::string(name) == "scan.mrd" && r.out.find("no ISMRMRD") != std::string::npos) continue;
    REQUIRE(r.code == 0);
    const auto before = snapshot(d);
    const std::string out = shell("trap \"\" XFSZ; ulimit -f 16; $FHD --quiet synth --phantom shepp3d --matrix 32 -o " +
                                  f.string() + "; echo rc=$?");
    INFO(out);
    CHECK(out.find("rc=0") == std::string::npos);
    CHECK(out.find("fhdrecon: error: ") != std::string::npos);
    require_clean_failure(out);
    CHECK(snapshot(d) == before);
    for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().find(".fhdtmp-") == std::string::npos);
  }
}

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

namespace {
std::vector<std::string> g_q_created, g_q_done;
}  // namespace

TEST_CASE("Q-cache temporaries: announced to the interrupt cleanup; a killed run's are removed by the next",
          "[outputs][qcache]") {
  // Issue 13: a signal while Q was being stored left <key>.q.tmp.* in the cache.
  // fhdrecon's main hands these hooks io's register_temporary/forget_temporary.
  const fs::path d = fresh("qtmp");
  fs::create_directories(d);
  const fhd::ImageGrid g{4, 4, 1};
  fhd::Trajectory t;
  t.resize(8);
  for (std::size_t i = 0; i < t.size(); ++i) t.kx[i] = 0.25f * float(i), t.ky[i] = -0.1f * float(i);
  const std::string key = fhd::q_key(t, {}, g, fhd::TrigMode::Single);
  const std::vector<fhd::cfloat> q(g.doubled().voxels(), fhd::cfloat(1.0f, 0.5f));
  // A writer that is gone (a child that has exited) and one still running (our parent).
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  REQUIRE(gone > 0);
  waitpid(gone, nullptr, 0);
  const fs::path stale = d / ("q1-other.q.tmp." + std::to_string(gone) + ".7");
  const fs::path live = d / ("q1-other.q.tmp." + std::to_string(::getppid()) + ".7");
  std::ofstream(stale) << "half";
  std::ofstream(live) << "being written";
  g_q_created.clear();
  g_q_done.clear();
  fhd::set_q_temporary_hooks([](const std::string& p) { g_q_created.push_back(p); },
                             [](const std::string& p) { g_q_done.push_back(p); });
  const bool stored = fhd::store_q(d.string(), key, q);
  fhd::set_q_temporary_hooks(nullptr, nullptr);
  REQUIRE(stored);
  REQUIRE(g_q_created.size() == 1);
  CHECK(g_q_created[0].find(key + ".q.tmp." + std::to_string(::getpid()) + ".") != std::string::npos);
  CHECK(g_q_done == g_q_created);
  CHECK(!fs::exists(g_q_created[0]));
  CHECK(!fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fhd::load_q(d.string(), key) == q);
  fs::remove_all(d);
}
