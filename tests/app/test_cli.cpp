// The CLI's contract for bad input: one line naming the option/file and value,
// a non-zero exit code, and no output files left behind.
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "io/cfl.hpp"
#include "io/scan_file.hpp"
#include "recon/problem/lambda_auto.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace {

using Run = fhd::test::CliRun;

Run fhdrecon(const std::string& args) { return fhd::test::run_cli(args); }

fs::path fresh_dir(const std::string& name) { return fhd::test::fresh_temp_dir("cli", name); }

// A tiny, fast problem for the runs that should succeed.
const std::string kTiny = "--phantom shepp2d --matrix 16 --spokes 16 --iters 3 --no-cache --quiet";

void require_one_line_error(const Run& r, int code, const std::string& must_contain) {
  INFO(r.out);
  CHECK(r.code == code);
  CHECK(fhd::test::line_count(r.out) == 1);
  CHECK(r.out.rfind("fhdrecon: error: ", 0) == 0);
  CHECK(r.out.find(must_contain) != std::string::npos);
}

}  // namespace

TEST_CASE("unknown options and out-of-range values fail with one line and exit 2", "[cli]") {
  require_one_line_error(fhdrecon("--bogus"), 2, "--bogus");
  require_one_line_error(fhdrecon("--matrix 3"), 2, "--matrix");
  require_one_line_error(fhdrecon("--matrix 100000"), 2, "--matrix");
  require_one_line_error(fhdrecon("--trig quad"), 2, "--trig");
  require_one_line_error(fhdrecon("--phantom cube"), 2, "--phantom");
  require_one_line_error(fhdrecon("--traj zigzag"), 2, "--traj");
  require_one_line_error(fhdrecon("--iters -1"), 2, "--iters");
  require_one_line_error(fhdrecon("--lambda -0.5"), 2, "--lambda");
  require_one_line_error(fhdrecon("--lambda automatic"), 2, "must be auto or a number, not automatic");
  require_one_line_error(fhdrecon("--device tpu"), 2, "--device");
}

TEST_CASE("impossible combinations name the option and value", "[cli]") {
  // A 2D trajectory for a 3D phantom.
  require_one_line_error(fhdrecon("--phantom shepp3d --traj radial2d --matrix 16"), 2, "radial2d");
  // Far more memory than any machine here has.
  require_one_line_error(fhdrecon("--phantom shepp3d --matrix 1024 --spokes 4"), 2,
                         "--matrix 1024 --spokes 4: matrix = 1024x1024x1024");
}

TEST_CASE("a missing or corrupt input file is one line naming the file", "[cli]") {
  fs::path d = fresh_dir("input");
  fs::create_directories(d);
  require_one_line_error(fhdrecon("--input " + (d / "nope.h5").string() + " --out " + (d / "o").string()), 2,
                         "nope.h5");
  std::ofstream(d / "junk.h5") << "this is not HDF5";
  Run r = fhdrecon("--input " + (d / "junk.h5").string() + " --out " + (d / "o2").string());
  require_one_line_error(r, 2, "junk.h5");
  CHECK(!fs::exists(d / "o2"));  // the output directory it made is gone again
}

TEST_CASE("an output directory that cannot be created fails before any work", "[cli]") {
  fs::path d = fresh_dir("outdir");
  fs::create_directories(d);
  std::ofstream(d / "afile") << "x";
  Run r = fhdrecon(kTiny + " --out " + (d / "afile" / "sub").string());
  require_one_line_error(r, 2, "afile");
}

TEST_CASE("--device gpu without a usable GPU is a device error (exit 3)", "[cli]") {
  Run probe = fhdrecon(kTiny + " --device gpu --out " + fresh_dir("gpu").string());
  if (probe.code == 0) FHD_SKIP("a GPU is usable here");
  require_one_line_error(probe, 3, "no usable GPU");
  CHECK(!fs::exists(fresh_dir("gpu") / "report.json"));
}

TEST_CASE("a good run writes the table, the report and the images, and no temporaries", "[cli]") {
  fs::path d = fresh_dir("good");
  Run r = fhdrecon(kTiny + " --out " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (const char* m : {"iterative", "gridding-trilinear", "gridding-kb", "band-limited ceiling"})
    CHECK(r.out.find(m) != std::string::npos);
  for (const char* f : {"report.json", "images.h5", "iterative.nii", "montage.png"}) CHECK(fs::exists(d / f));
  for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().rfind(".fhdtmp", 0) != 0);
}

TEST_CASE("--quiet leaves only the table on the output", "[cli]") {
  Run r = fhdrecon(kTiny + " --out " + fresh_dir("quiet").string());
  REQUIRE(r.code == 0);
  INFO(r.out);
  // The first line is the table's (the data's description), and no line is a
  // log line ("[HH:MM:SS] level: ...") or a progress redraw.
  CHECK(r.out.rfind("shepp2d 16^2", 0) == 0);
  CHECK(r.out.find("method") != std::string::npos);
  CHECK(r.out.find("\n[") == std::string::npos);
  CHECK(r.out.find('\r') == std::string::npos);
  // Without --quiet the same run logs (so the assertions above can fail).
  Run loud = fhdrecon("--phantom shepp2d --matrix 16 --spokes 16 --iters 3 --no-cache --out " +
                      fresh_dir("loud").string());
  CHECK(loud.out.find("info:") != std::string::npos);
}

TEST_CASE("--gpus: refused with --device cpu, a bad list or more GPUs than visible, before any work", "[cli]") {
  require_one_line_error(fhdrecon(kTiny + " --device cpu --gpus 0,1"), 2, "--gpus 0,1 with --device cpu");
  require_one_line_error(fhdrecon(kTiny + " --gpus x"), 2, "expected all, a count or a list");
  require_one_line_error(fhdrecon(kTiny + " --gpus 4096"), 2, "--gpus 4096");
  require_one_line_error(fhdrecon(kTiny + " --gpus 0,4095"), 2, "--gpus 0,4095: no GPU");
}

TEST_CASE("--coil-combine and --maps: bad values and impossible combinations fail with one line", "[cli]") {
  require_one_line_error(fhdrecon(kTiny + " --coil-combine both"), 2, "--coil-combine");
  require_one_line_error(fhdrecon(kTiny + " --maps guess"), 2, "--maps");
  require_one_line_error(fhdrecon(kTiny + " --maps true"), 2, "--maps");  // one coil: no synthesized array
}

TEST_CASE("SENSE with a sparse prior runs (it was refused before the operator layer)", "[cli]") {
  for (const char* reg : {"tv", "wavelet"}) {
    const fs::path d = fresh_dir(std::string("sense-") + reg);
    Run r = fhdrecon(kTiny + " --coils 2 --coil-combine sense --reg " + reg + " --out " + d.string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    std::ifstream f(d / "report.json");
    const nlohmann::json rep = nlohmann::json::parse(f);
    bool admm = false;
    for (const auto& s : rep["stages"]) admm = admm || s["name"].get<std::string>().rfind("ADMM-", 0) == 0;
    CHECK(admm);
  }
}

TEST_CASE("--reg tv: its noise rule by default and with auto, a given number wins", "[cli]") {
  // 100 spokes of 32 samples at 2x readout oversampling: enough for the readout noise estimate.
  const std::string noisy = "--phantom shepp2d --matrix 16 --spokes 100 --iters 2 --no-cache --quiet --no-gridding "
                            "--no-images --noise 0.3 --reg tv";
  auto options = [](const fs::path& d) {
    std::ifstream f(d / "report.json");
    return nlohmann::json::parse(f)["options"];
  };
  for (const char* lambda : {"", " --lambda auto"}) {
    fs::path d = fresh_dir(std::string("tv-auto") + (*lambda ? "-given" : ""));
    Run r = fhdrecon(noisy + lambda + " --out " + d.string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    const nlohmann::json o = options(d);
    CHECK(o["lambda_rule"].get<std::string>().rfind("auto: TV noise rule", 0) == 0);
    CHECK(o["lambda"].get<double>() > fhd::kTvLambda);
    CHECK(r.out.find("lambda auto: TV noise rule") != std::string::npos);  // the table says so too
  }
  fs::path d = fresh_dir("tv-fixed");
  Run r = fhdrecon(noisy + " --lambda 0.2 --out " + d.string());
  REQUIRE(r.code == 0);
  const nlohmann::json o = options(d);
  CHECK(o["lambda_rule"] == "fixed");
  CHECK(o["lambda"].get<double>() == 0.2);
}

TEST_CASE("--lambda auto: the risk estimate only where it models the problem, else the fixed value", "[cli]") {
  const std::string base = "--phantom shepp2d --matrix 16 --spokes 100 --iters 3 --no-cache --quiet --no-gridding "
                           "--no-images --lambda auto";
  auto rule = [](const fs::path& d) {
    std::ifstream f(d / "report.json");
    return nlohmann::json::parse(f)["options"];
  };
  // SENSE's E^H y and a field model's A^H y took it to its floor, 2-5 dB below the fixed value.
  for (const char* model : {" --coils 4 --noise 1", " --noise 0.5 --off-resonance 100"}) {
    const fs::path d = fresh_dir(std::string("auto-") + (model[3] == 'c' ? "sense" : "field"));
    Run r = fhdrecon(base + model + " --out " + d.string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    const nlohmann::json o = rule(d);
    CHECK(o["lambda_rule"] == "auto: the risk estimate models one coil without field compensation, fixed");
    CHECK(o["lambda"].get<double>() == 0.03);
  }
  const fs::path d = fresh_dir("auto-plain");
  Run r = fhdrecon(base + " --noise 0.5 --out " + d.string());
  REQUIRE(r.code == 0);
  CHECK(rule(d)["lambda_rule"].get<std::string>().rfind("auto: risk estimate", 0) == 0);
}

TEST_CASE("sparse priors: the table names ADMM's iterations and the CG steps that start it", "[cli]") {
  const fs::path d = fresh_dir("admm-words");
  Run r = fhdrecon("--phantom shepp2d --matrix 16 --spokes 24 --iters 3 --reg tv --no-cache --quiet --no-gridding "
                   "--no-images --out " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("ADMM 3 iterations after 10 CG steps") != std::string::npos);
  std::ifstream f(d / "report.json");
  CHECK(nlohmann::json::parse(f)["cg"]["starts_admm"] == true);
}

TEST_CASE("options this run ignores are warned of, once each, and the run goes on", "[cli]") {
  const std::string base = "--phantom shepp2d --matrix 16 --spokes 20 --iters 2 --no-cache --quiet --no-images "
                           "--no-gridding --out " + fresh_dir("ignored").string() + " ";
  Run one = fhdrecon(base + "--maps espirit --calibration 12 --admm-rho 2 --nufft-tol 1e-5");
  INFO(one.out);
  REQUIRE(one.code == 0);
  using fhd::test::occurrences;
  CHECK(occurrences(one.out, "warning: --maps and --calibration: ignored (for several coils; this scan has one)") == 1);
  CHECK(occurrences(one.out, "warning: --admm-rho: ignored (for ADMM") == 1);
  CHECK(occurrences(one.out, "warning: --nufft-tol: ignored (for the NUFFT; the exact gather has no tolerance)") == 1);
  CHECK(occurrences(one.out, "ignored") == 3);  // those three lines, nothing else
  Run rss = fhdrecon(base + "--coils 3 --coil-combine rss --maps-crop 0.2");
  REQUIRE(rss.code == 0);
  CHECK(occurrences(rss.out, "warning: --maps-crop: ignored (for SENSE's maps; coil combination rss uses none)") == 1);
  Run nufft = fhdrecon(base + "--fhd nufft --trig double --kernel coarsened");
  REQUIRE(nufft.code == 0);
  CHECK(occurrences(nufft.out, "warning: --trig and --kernel: ignored (for the exact gather; the NUFFT has its own)") == 1);
  Run used = fhdrecon(base + "--coils 3 --maps espirit --reg tv --admm-rho 2 --fhd nufft --nufft-tol 1e-5");
  REQUIRE(used.code == 0);
  CHECK(used.out.find("ignored") == std::string::npos);  // every option given is used
}

namespace {

// A run that must succeed into a fresh directory `name`: its report.json, and its output in *out.
nlohmann::json report_of(const std::string& args, const std::string& name, std::string* out = nullptr) {
  const fs::path d = fresh_dir(name);
  Run r = fhdrecon(args + " --no-cache --quiet --no-images --out " + d.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  if (out) *out = r.out;
  std::ifstream f(d / "report.json");
  return nlohmann::json::parse(f);
}

}  // namespace

TEST_CASE("report.json names the options that shaped the result and the scan's counts", "[cli]") {
  std::string out;
  const nlohmann::json j = report_of("--phantom shepp2d --matrix 16 --spokes 20 --coils 3 --coil-combine rss "
                                     "--fhd nufft --reg tv --dcf pipe-menon --iters 2",
                                     "report-options", &out),
                       o = j["options"];
  CHECK(o["fhd"] == "nufft");
  CHECK(o["nufft_tol"].get<double>() == 1e-6);
  CHECK_FALSE(o.contains("trig"));  // the exact gather's option: a NUFFT run has none
  CHECK(o["reg"] == "tv");
  CHECK(o["coil_combine"] == "rss");
  CHECK_FALSE(o.contains("maps"));  // rss uses no maps
  CHECK(o["dcf"] == "pipe-menon");
  CHECK(j["scan"]["coils"] == 3);
  CHECK(j["scan"]["samples"].get<std::size_t>() > 0);
  CHECK(out.find("fhd nufft (tol 1e-06)") != std::string::npos);  // the table's device line, not a trig
}

TEST_CASE("report.json says what ran: SENSE's plain CG, the coils' prewhitening and compression, the build", "[cli]") {
  const nlohmann::json j =
      report_of("--phantom shepp2d --matrix 16 --spokes 20 --coils 4 --noise 0.05 --virtual-coils 3 --iters 2", "report-ran");
  CHECK(j["options"]["precondition"] == false);  // --no-precond not given, but SENSE never preconditions
  CHECK(j["scan"]["prewhitened"] == true);
  CHECK(j["scan"]["virtual_coils"] == "3 of 4");
  CHECK(j["scan"]["coils"] == 3);
  CHECK(j["tool"]["revision"].get<std::string>() != "unknown");  // a git checkout names its revision
  const nlohmann::json k = report_of("--phantom shepp2d --matrix 16 --spokes 16 --iters 3", "report-ran-1");
  CHECK(k["options"]["precondition"] == true);
  CHECK(k["scan"]["prewhitened"] == false);
  CHECK_FALSE(k["scan"].contains("virtual_coils"));
}

namespace {

// A scan of m samples spread over the band of g (an axis of one voxel takes
// k in [-0.5, 0.5]), its data a smooth mix of them.
fhd::Scan spread_scan(fhd::ImageGrid g, std::size_t m) {
  fhd::Scan s;
  s.grid = g;
  s.traj.resize(m);
  s.data.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    const double t = double(i);
    s.traj.kx[i] = float(0.49 * g.nx * std::sin(1.3 * t + 0.2));
    s.traj.ky[i] = float(0.49 * g.ny * std::sin(2.9 * t + 0.7));
    s.traj.kz[i] = g.nz > 1 ? float(0.49 * g.nz * std::sin(4.1 * t + 1.1)) : 0.0f;
    s.data[i] = fhd::cfloat(float(std::cos(0.7 * t)), float(std::sin(0.3 * t)));
  }
  return s;
}

}  // namespace

TEST_CASE("a scan's own /dcf: a --dcf it overrides is warned of once; auto is not", "[cli]") {
  const fs::path d = fresh_dir("file-dcf");
  const std::string f = (d / "dcf.h5").string();
  fhd::Scan s = spread_scan({16, 16, 1}, 300);
  s.dcf.assign(s.traj.size(), 1.0f);
  fhd::write_scan(f, s);
  const std::string base = "--input " + f + " --iters 2 --no-cache --quiet --no-images --out ";
  Run given = fhdrecon(base + (d / "a").string() + " --dcf pipe-menon");
  INFO(given.out);
  REQUIRE(given.code == 0);
  CHECK(fhd::test::occurrences(given.out, "warning: --dcf pipe-menon: ignored (" + f +
                                              " has its own density weights, /dcf, and they are used)") == 1);
  CHECK(fhd::test::occurrences(given.out, "ignored") == 1);
  Run dflt = fhdrecon(base + (d / "b").string());
  REQUIRE(dflt.code == 0);
  CHECK(dflt.out.find("ignored") == std::string::npos);
}

// 0.4 N^3 samples made one spoke per partition at N <= 7: ky = 0 everywhere,
// refused by --dcf auto as "not radial".
TEST_CASE("the default stack of stars at --matrix 5 runs", "[cli]") {
  Run r = fhdrecon("--phantom shepp3d --traj stack-of-stars --matrix 5 --iters 3 --no-cache --quiet --no-images --out " +
                   fresh_dir("sos5").string());
  INFO(r.out);
  CHECK(r.code == 0);
}

TEST_CASE("--fhd nufft on a scan with one voxel along x or y matches --fhd exact; a 1D scan is refused by name",
          "[cli]") {
  const fs::path d = fresh_dir("nufft-slab");
  for (fhd::ImageGrid g : {fhd::ImageGrid{7, 1, 5}, fhd::ImageGrid{1, 7, 5}}) {
    const std::string f = (d / ("slab" + std::to_string(g.nx) + ".h5")).string();
    fhd::write_scan(f, spread_scan(g, 150));
    std::vector<fhd::cfloat> image[2];
    for (int nufft = 0; nufft < 2; ++nufft) {
      const fs::path o = d / (std::to_string(g.nx) + (nufft ? "nufft" : "exact"));
      // One thread: the NUFFT's spreading sums in the threads' order, and 20 CG
      // iterations carry that rounding from 4e-6 to 4e-5 run by run.
      Run r = fhd::test::run_cli("--input " + f + " --iters 20 --no-cache --quiet --no-gridding --save cfl --out " +
                                     o.string() + (nufft ? " --fhd nufft --nufft-tol 1e-7" : " --trig double"),
                                 "OMP_NUM_THREADS=1");
      INFO(r.out);  // was: "nufft: x and y need at least 2 voxels", exit 1
      REQUIRE(r.code == 0);
      fhd::ImageGrid found;
      image[nufft] = fhd::read_bart_image((o / "iterative").string(), &found);
      CHECK(found == g);
    }
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < image[0].size(); ++i)
      diff += std::norm(image[1][i] - image[0][i]), norm += std::norm(image[0][i]);
    INFO(fhd::dims_string(g) << ": relative difference " << std::sqrt(diff / norm));
    CHECK(std::sqrt(diff / norm) < 1e-5);
  }
  const std::string line = (d / "line.h5").string();
  fhd::write_scan(line, spread_scan({9, 1, 1}, 27));
  require_one_line_error(fhdrecon("--input " + line + " --fhd nufft --iters 2 --no-cache --quiet --out " +
                                  (d / "line").string()),
                         2, line + ": matrix = 9x1x1: --fhd nufft needs two axes of 2 or more voxels");
  CHECK(!fs::exists(d / "line"));
}

TEST_CASE("--matrix NX,NY,NZ reads an odd, non-cubic BART scan on its own grid, at its own scale", "[cli][bart]") {
  // A constant object (1 in each voxel of 9x7x5) seen through random samples,
  // written as BART's unitary k-space. BART carries no matrix: on the grid
  // the trajectory implies (10x8x6), or --matrix 9 (9x9x9), the sqrt(N) rescale
  // is another grid's and the image came out 0.66-0.86 of its intensity.
  const fs::path d = fresh_dir("bart-dims");
  const fhd::ImageGrid g{9, 7, 5};
  fhd::Scan s;
  s.grid = g;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.45f, 0.45f);
  const std::size_t m = 3 * g.voxels();
  s.traj.resize(m);
  s.data.resize(m);
  for (std::size_t j = 0; j < m; ++j) {
    s.traj.kx[j] = u(rng) * g.nx, s.traj.ky[j] = u(rng) * g.ny, s.traj.kz[j] = u(rng) * g.nz;
    std::complex<double> sum = 0;
    for (int z = 0; z < g.nz; ++z)
      for (int y = 0; y < g.ny; ++y)
        for (int x = 0; x < g.nx; ++x) {
          const double ph = s.traj.kx[j] * fhd::axis_coord(x, g.nx, g.nx) + s.traj.ky[j] * fhd::axis_coord(y, g.ny, g.ny) +
                            s.traj.kz[j] * fhd::axis_coord(z, g.nz, g.nz);
          sum += std::polar(1.0, -2 * M_PI * ph);
        }
    s.data[j] = fhd::cfloat(sum);
  }
  const std::string base = (d / "k").string();
  fhd::write_bart_scan(base + "_traj", base, {s});
  auto mean_of = [&](const std::string& matrix, const std::string& out) {
    Run r = fhdrecon("--device cpu --input " + base + ".cfl --traj-file " + base + "_traj.cfl " + matrix +
                     " --lambda 0 --iters 60 --no-cache --no-gridding --save cfl --quiet --out " + (d / out).string());
    INFO(r.out);
    REQUIRE(r.code == 0);
    const fhd::CflArray img = fhd::read_cfl((d / out / "iterative").string());
    double sum = 0;
    for (const auto& v : img.data) sum += std::abs(v);
    return std::make_pair(img.data.size(), sum / double(img.data.size()));
  };
  const auto [voxels, mean] = mean_of("--matrix 9,7,5", "own");
  CHECK(voxels == g.voxels());
  CHECK(mean == Approx(1.0).epsilon(0.02));
  require_one_line_error(fhdrecon("--matrix 9,7,5 --phantom shepp3d"), 2,
                         "--matrix: value = 9,7,5: NX,NY,NZ is a BART k-space --input's own grid");
  require_one_line_error(fhdrecon("--matrix 9,,5"), 2, "expected N (4..1024) or NX,NY[,NZ] (each 1..1024)");
}
