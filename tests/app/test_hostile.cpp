// Hostile input through the CLI (issue 13): options that are NaN, infinite or
// empty, memory bombs that must be refused before the samples are read, options
// that cannot work with the scan refused before FhD and Q, and the BART naming
// mistakes. Each is one line naming the file or option and value, exit 2.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/batch.hpp"
#include "app/scan_input.hpp"
#include "catch.hpp"
#include "io/cfl.hpp"
#include "io/scan_file.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::test::CliRun;
using fhd::test::one_line_error;
using fhd::test::run_cli;

namespace {

std::string error_of_read(const std::string& input, const std::string& traj = "", int matrix = 0) {
  try {
    fhd::app::read_scans_any(input, traj, matrix);
  } catch (const fhd::InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "no error";
}

// Sets FHDRECON_MEMORY_LIMIT for this scope (the child processes inherit it).
struct MemoryLimit {
  explicit MemoryLimit(const char* v) { ::setenv("FHDRECON_MEMORY_LIMIT", v, 1); }
  ~MemoryLimit() { ::unsetenv("FHDRECON_MEMORY_LIMIT"); }
};

const std::string kTiny = "--phantom shepp2d --matrix 16 --spokes 16 --iters 3 --no-cache --quiet";

fhd::Scan small_scan(fhd::ImageGrid g, std::size_t m) {
  fhd::Scan s;
  s.grid = g;
  s.traj.resize(m);
  s.data.assign(m, fhd::cfloat(1, 0));
  for (std::size_t i = 0; i < m; ++i) s.traj.kx[i] = float(i % 7) - 3.0f, s.traj.ky[i] = float(i % 5) - 2.0f;
  return s;
}

}  // namespace

TEST_CASE("NaN and infinite option values are refused by name", "[cli][hostile]") {
  for (const char* opt : {"--lambda", "--tol", "--noise"})
    for (const char* v : {"nan", "NaN", "inf", "-inf"}) {
      const CliRun r = run_cli(kTiny + " " + opt + " " + v + " --out " + (fs::temp_directory_path() / "fhd-nan").string());
      one_line_error(r, opt);
      CHECK(!fs::exists(fs::temp_directory_path() / "fhd-nan"));
    }
  one_line_error(run_cli("--lambda nan"), "must be a finite number, not nan");
}

// CLI11 read "" as the option's default: --noise '' ran without noise.
TEST_CASE("empty option values are refused by name", "[cli][hostile]") {
  const std::string out = " --out " + (fs::temp_directory_path() / "fhd-empty").string();
  for (const char* opt : {"--noise", "--tol", "--nufft-tol", "--maps-crop", "--admm-rho", "--off-resonance",
                          "--readout-ms", "--te-ms", "--json", "--save"}) {
    const CliRun r = run_cli(kTiny + " " + opt + " ''" + out);
    one_line_error(r, opt);
    CHECK(!fs::exists(fs::temp_directory_path() / "fhd-empty"));
  }
  one_line_error(run_cli(kTiny + " --save none,h5" + out), "none cannot go with other formats");
  // strtod took "1e-400" as 0 and "0x10" as 16, silently.
  one_line_error(run_cli(kTiny + " --lambda 1e-400" + out),
                 "--lambda: is too small for a double (it would be read as 0): 1e-400");
  one_line_error(run_cli(kTiny + " --lambda 0x10" + out), "--lambda: must be a decimal number, not 0x10");
  one_line_error(run_cli(kTiny + " --noise 0x1p-3" + out), "--noise: must be a decimal number, not 0x1p-3");
  one_line_error(run_cli(kTiny + " --maps-crop 1e-999" + out), "--maps-crop: is too small for a double");
  // bench-nufft: a bad value made every row "failed" and the command exit 0.
  for (const char* bad : {"--tols nan", "--tols 0", "--sigmas 0.5", "--samples 0", "--json ''"})
    one_line_error(run_cli(std::string("bench-nufft --device cpu --matrix 8 --samples 64 --reps 1 ") + bad),
                   std::string(bad).substr(0, std::string(bad).find(' ')));
}

// --samples past 2^30 wrapped into "trajectory spokes = -1"; --sweep on the CPU
// was ignored while --spread was refused (hunt19 findings 5 and 11).
TEST_CASE("bench-nufft: --samples past 2^30 and --sweep on the CPU are refused by name", "[cli][hostile]") {
  const std::string base = "bench-nufft --device cpu --matrix 8 --reps 1 ";
  for (const char* n : {"1073741825", "3000000000", "4294967295"})
    one_line_error(run_cli(base + "--samples " + n), std::string("--samples: must be in 1 .. 2^30 (1073741824), not ") + n);
  one_line_error(run_cli(base + "--samples 64 --sweep"), "bench-nufft: --sweep:");
}

TEST_CASE("a stack trajectory with a 2D phantom is refused, not run as a 2D one", "[cli][hostile]") {
  for (const char* kind : {"stack-of-stars", "stack-of-spirals"})
    one_line_error(run_cli(std::string("--phantom shepp2d --matrix 16 --traj ") + kind), "a 2D phantom has one slice");
  // The other mismatches named neither option ("trajectory nz = 1: ...").
  one_line_error(run_cli("--phantom shepp2d --matrix 16 --traj radial3d"),
                 "--traj: with --phantom shepp2d = radial3d: is 3D, and a 2D phantom has one slice");
  for (const char* kind : {"radial2d", "spiral2d"})
    one_line_error(run_cli(std::string("--phantom shepp3d --matrix 16 --traj ") + kind),
                   std::string("--traj: with --phantom shepp3d = ") + kind + ": is 2D");
}

TEST_CASE("options that a synthesized scan would drop are refused", "[cli][hostile]") {
  // --spokes won: --samples 50000 gave 640 samples, unsaid.
  one_line_error(run_cli("--phantom shepp2d --matrix 16 --spokes 10 --samples 50000"),
                 "--samples: with --spokes = 10: the spokes (times the readout) set the samples");
  const std::string map = fhd::test::fresh_temp_dir("hostile", "synth-map").string() + ".h5";
  REQUIRE(run_cli("synth --phantom shepp2d --matrix 16 --traj spiral2d --off-resonance 150 -o " + map).code == 0);
  const std::string out = " -o " + fhd::test::fresh_temp_dir("hostile", "synth-out").string() + ".h5";
  // The stored map replaced, the data's field not: a file at odds with itself.
  one_line_error(run_cli("synth --phantom shepp2d --matrix 16 --traj spiral2d --off-resonance 50 --field-map " + map +
                         out),
                 "synth: --field-map = " + map + ": synth writes the analytic field of --off-resonance");
  one_line_error(run_cli("synth --phantom shepp2d --matrix 16 --coils 2 --prewhitened --no-prewhiten" + out),
                 "synth: --no-prewhiten is the reconstruction's");
  std::filesystem::remove(map);
}

TEST_CASE("empty paths are refused by name", "[cli][hostile]") {
  one_line_error(run_cli("--input ''"), "--input");
  one_line_error(run_cli("--input x.cfl --traj-file ''"), "--traj-file");
  one_line_error(run_cli(kTiny + " --cache-dir ''"), "--cache-dir");
  one_line_error(run_cli("synth -o ''"), "--output");
}

TEST_CASE("a BART k-space without --traj-file says so, not 'not an HDF5 file'", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "bart");
  fs::create_directories(d);
  fhd::write_bart_scan((d / "k_traj").string(), (d / "k").string(), {small_scan({16, 16, 1}, 32)}, 8);
  for (const char* name : {"k.cfl", "k.hdr"}) {
    const CliRun r = run_cli("--input " + (d / name).string() + " --out " + (d / "o").string());
    one_line_error(r, "--traj-file = (none): a BART k-space needs its trajectory");
    CHECK(r.out.find("HDF5") == std::string::npos);
  }
  fs::remove_all(d);
}

// An HDF5 file given as --traj-file was looked for as FILE.hdr and named so.
TEST_CASE("a --traj-file that is another format's file is named as such", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "trajfile");
  fs::create_directories(d);
  fhd::write_bart_scan((d / "k_traj").string(), (d / "k").string(), {small_scan({16, 16, 1}, 32)}, 8);
  std::ofstream(d / "t.h5") << "not a trajectory";
  one_line_error(run_cli("--input " + (d / "k.cfl").string() + " --traj-file " + (d / "t.h5").string() + " --out " +
                         (d / "o").string()),
                 "is not a BART trajectory");
  CHECK(run_cli("--quiet --input " + (d / "k.cfl").string() + " --traj-file " + (d / "k_traj").string() +
                " --iters 2 --out " + (d / "o").string())
            .code == 0);
  fs::remove_all(d);
}

TEST_CASE("memory bombs are refused naming the file, before the samples are read", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "bombs");
  fs::create_directories(d);
  MemoryLimit limit("2G");
  SECTION("a scan file with a matrix of 8192^2") {
    const std::string f = (d / "wide.h5").string();
    fhd::write_scan(f, small_scan({8192, 8192, 1}, 32));
    const std::string e = error_of_read(f);
    CHECK(e.rfind(f + ": matrix = 8192x8192x1 with 32 samples x 1 coil(s): needs about", 0) == 0);
    one_line_error(run_cli("--input " + f + " --out " + (d / "o").string()), f + ": matrix = 8192x8192x1");
    CHECK(!fs::exists(d / "o"));
  }
  SECTION("one BART sample at k = 200 makes a 400^3 grid") {
    fhd::Scan s = small_scan({16, 16, 16}, 32);
    s.grid = {400, 400, 400};
    s.traj.kx[5] = s.traj.ky[5] = s.traj.kz[5] = 200.0f;
    fhd::write_bart_scan((d / "k_traj").string(), (d / "k").string(), {s}, 8);
    const std::string k = (d / "k.cfl").string();
    CHECK(error_of_read(k, (d / "k_traj").string()).rfind(k + ": matrix = 400x400x400 with 32 samples", 0) == 0);
  }
  fs::remove_all(d);
}

TEST_CASE("a BART trajectory value of 1e10 is named at its own sample", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "1e10");
  fs::create_directories(d);
  fhd::Scan s = small_scan({16, 16, 1}, 32);
  s.grid = {32, 32, 1};
  s.traj.ky[21] = 1e10f;
  fhd::write_bart_scan((d / "k_traj").string(), (d / "k").string(), {s}, 8);
  const std::string t = (d / "k_traj").string();
  CHECK(error_of_read((d / "k").string(), t) ==
        t + ".cfl: sample[21].ky = 10000000000.000000: not a finite k within |k| <= 32768 cycles/FOV (matrix at most 65536)");
  fs::remove_all(d);
}

TEST_CASE("--dcf radial on an imported trajectory is refused before FhD and Q", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "dcf");
  fs::create_directories(d);
  const std::string f = (d / "scan.h5").string();
  fhd::write_scan(f, small_scan({16, 16, 1}, 64));  // no provenance: an imported trajectory
  const CliRun r = run_cli("--input " + f + " --dcf radial --iters 2 --no-cache --quiet --out " + (d / "o").string());
  one_line_error(r, f + ": --dcf = radial: radial weights need");
  CHECK(r.out.find("of unknown kind (imported)") != std::string::npos);
  CHECK(!fs::exists(d / "o"));
  // --no-gridding needs no weights: the same options then run.
  CHECK(run_cli("--input " + f + " --dcf radial --no-gridding --iters 2 --no-cache --quiet --out " +
                (d / "o").string()).code == 0);
  fs::remove_all(d);
}

TEST_CASE("radial weights a radial file's samples cannot take name the file and --dcf", "[cli][hostile]") {
  // Provenance says radial2d, but every sample lies on one circle: one radius,
  // no shells. The error used to be "radial DCF: ..." with no file named.
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "dcf-shells");
  fs::create_directories(d);
  const std::string f = (d / "ring.h5").string();
  fhd::Scan s = small_scan({16, 16, 1}, 64);
  for (std::size_t i = 0; i < 64; ++i) {
    const double a = 2 * 3.14159265358979 * double(i) / 64;
    s.traj.kx[i] = float(4 * std::cos(a)), s.traj.ky[i] = float(4 * std::sin(a));
  }
  s.provenance = {{"trajectory", "radial2d"}};
  fhd::write_scan(f, s);
  for (const char* dcf : {"auto", "radial"}) {
    const CliRun r = run_cli("--input " + f + " --dcf " + dcf + " --iters 2 --no-cache --quiet --out " +
                             (d / "o").string());
    one_line_error(r, f + ": --dcf = " + dcf + ": radial weights for this radial2d trajectory: "
                          "a group of samples has only one radius; use --dcf pipe-menon");
    CHECK(!fs::exists(d / "o"));
  }
  CHECK(run_cli("--input " + f + " --dcf pipe-menon --iters 2 --no-cache --quiet --save none --out " +
                (d / "o").string()).code == 0);
  // SENSE weighs its calibration too: --no-gridding, given already, is no way out.
  const CliRun sense = run_cli("--phantom shepp2d --matrix 16 --iters 2 --traj spiral2d --coils 3 --no-gridding "
                               "--dcf radial --no-cache --quiet --out " + (d / "o").string());
  one_line_error(sense, "use --dcf pipe-menon (SENSE's coil maps weigh their calibration by it)");
  CHECK(sense.out.find("--no-gridding") == std::string::npos);
  fs::remove_all(d);
}

TEST_CASE("a batch report.json of the wrong shape is one clear reason, not a json exception", "[batch][hostile]") {
  using nlohmann::json;
  CHECK(fhd::app::report_shape_problem(json::parse(R"({"outputs":{"png":"a.png"},"methods":[],"stages":[]})")) == "");
  CHECK(fhd::app::report_shape_problem(json::parse("[1,2]")) == "is not a JSON object");
  CHECK(fhd::app::report_shape_problem(json::parse(R"({"batch":{"options_fingerprint":7}})")) ==
        "has a malformed batch section");
  CHECK(fhd::app::report_shape_problem(json::parse(R"({"outputs":["a.png"]})")) == "has outputs that are not an object");
  CHECK(fhd::app::report_shape_problem(json::parse(R"({"outputs":{"png":3}})")) == "has outputs that are not file names");
  CHECK(fhd::app::report_shape_problem(json::parse(R"({"methods":{"name":"x"}})")) ==
        "has methods or stages of the wrong shape");
  CHECK(fhd::app::report_shape_problem(json::parse(R"({"stages":[{"name":"Q","seconds":"1"}]})")) ==
        "has a stage whose seconds is not a number");
  // Through the up-to-date check: a reason, no exception.
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "report");
  fs::create_directories(d / "out");
  std::ofstream(d / "in.h5") << "x";
  std::ofstream(d / "out" / "report.json") << R"({"batch":[],"outputs":7})";
  std::string why;
  REQUIRE_NOTHROW(why = fhd::app::why_not_up_to_date((d / "in.h5").string(), (d / "out").string(), "fp"));
  CHECK(why == "report.json has a malformed batch section");
  fs::remove_all(d);
}

TEST_CASE("files that crash or hang inside libhdf5 are one line, exit 2", "[cli][hostile]") {
  // Found by fhd_fuzz: a corrupt global heap under a provenance string attribute
  // (segfault in H5HG_read), and an ISMRMRD acquisition whose variable-length
  // data claims gigabytes (libhdf5 allocates and clears it: minutes, or OOM).
  const std::string dir = std::string(FHD_SOURCE_DIR) + "/tests/fuzz/crashers/";
  const fs::path out = fhd::test::fresh_temp_dir("hostile", "crashers");
  one_line_error(run_cli("--input " + dir + "corrupt-global-heap.h5 --out " + out.string()),
                 dir + "corrupt-global-heap.h5: libhdf5 crashed reading it");
  CHECK(!fs::exists(out));
#if defined(FHD_HAVE_ISMRMRD)
  const CliRun r = run_cli("--input " + dir + "huge-vlen.mrd --out " + out.string());
  one_line_error(r, "huge-vlen.mrd");
  CHECK(!fs::exists(out));
#endif
}

TEST_CASE("a batch scan whose name is not UTF-8 fails its row; the batch and a plain run finish", "[batch][hostile]") {
  // Before: the batch waited for ever (its worker's JSON message could not be
  // written), and a plain run threw its report away after the reconstruction.
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "utf8");
  fs::create_directories(d);
  const std::string good = (d / "g.h5").string(), latin1 = (d / "u\xff.h5").string();
  fhd::write_scan(good, small_scan({16, 16, 1}, 64));
  fs::copy_file(good, latin1);
  const std::string opts = " --iters 3 --no-cache --no-gridding";
  const CliRun b = run_cli("--quiet batch '" + latin1 + "' " + good + " --out " + (d / "b").string() + opts, "timeout 120");
  INFO(b.out);
  CHECK(b.code == 2);  // one scan failed
  std::ifstream csv(d / "b" / "summary.csv");
  const std::string rows((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  CHECK(rows.find(",failed,the file name is not UTF-8") != std::string::npos);
  CHECK(rows.find("g.h5,ok,") != std::string::npos);
  CHECK(fs::exists(d / "b" / "summary.json"));
  const CliRun one = run_cli("--quiet --input '" + latin1 + "' --out " + (d / "o").string() + opts, "timeout 120");
  INFO(one.out);
  CHECK(one.code == 0);
  CHECK(fs::exists(d / "o" / "report.json"));
  fs::remove_all(d);
}

TEST_CASE("--json on a file the run reads is refused before any work; the file is kept", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "json-input");
  fs::create_directories(d);
  const std::string in = (d / "in.h5").string();
  fhd::write_scan(in, small_scan({16, 16, 1}, 64));
  const auto before = fs::file_size(in);
  one_line_error(run_cli("--input " + in + " --json " + (d / "." / "in.h5").string() + " --out " +
                         (d / "o").string() + " --quiet"),
                 "--json: path = " + (d / "." / "in.h5").string() + ": is an input of this run");
  CHECK(fs::file_size(in) == before);
  CHECK(fhd::read_scan(in).data.size() == 64);
  CHECK(!fs::exists(d / "o"));
  fs::remove_all(d);
}

TEST_CASE("a subnormal --lambda is the tiny number it is, not 'stod'", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "subnormal");
  fs::create_directories(d);
  const CliRun r = run_cli(kTiny + " --no-images --lambda 1e-310 --out " + (d / "o").string());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("stod") == std::string::npos);
  CHECK(fs::exists(d / "o" / "report.json"));
  fs::remove_all(d);
}

TEST_CASE("an unreadable scan says so, not 'not an HDF5 file'; option ranges are written as numbers", "[cli][hostile]") {
  const fs::path d = fhd::test::fresh_temp_dir("hostile", "unreadable");
  fs::create_directories(d);
  fs::permissions(d, fs::perms::all);  // the user below must reach the file
  const std::string f = (d / "s.h5").string();
  fhd::write_scan(f, small_scan({16, 16, 1}, 64));
  fs::permissions(f, fs::perms::none);
  // root reads any file: run as nobody there (setpriv, util-linux).
  const std::string as = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
  if (run_cli("--version", as).code != 0)  // nobody cannot reach this build (a private home)
    WARN("not checked: the unreadable file (root, and nobody cannot run " FHDRECON_EXE ")");
  else
    one_line_error(run_cli("--quiet --input " + f + " --out " + (d / "o").string(), as),
                   f + ": cannot be read (Permission denied)");
  fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write);
  one_line_error(run_cli(kTiny + " --fhd nufft --nufft-tol 1e-8 --out " + (d / "o").string()),
                 "--nufft-tol: must be in [1e-07, 0.1], not 1e-8");
  fs::remove_all(d);
}
