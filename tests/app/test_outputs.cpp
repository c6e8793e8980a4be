// Output sets are all-or-nothing (io/atomic_file.hpp OutputSet): a full disk,
// SIGINT/SIGTERM between files or just before the swap, and a second writer
// all leave the previous set byte-identical and no temporaries behind.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/outputs.hpp"
#include "catch.hpp"
#include "recon/plan/qcache.hpp"
#include "output_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::test::CliRun;
using fhd::test::exit_status;
using fhd::test::run_cli;
using fhd::test::shell;
using fhd::test::outputs::fresh;
using fhd::test::outputs::kTiny;

namespace {

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

// No staging directory beside d, no temporary inside it.
void require_no_temporaries(const fs::path& d) {
  const std::string prefix = "." + d.filename().string() + ".fhdtmp-";
  for (const auto& e : fs::directory_iterator(d.parent_path()))
    CHECK(e.path().filename().string().rfind(prefix, 0) != 0);
  if (fs::exists(d))
    for (const auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().find(".fhdtmp-") == std::string::npos);
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

TEST_CASE("an image that is not finite fails the write: no empty image, the previous set kept", "[outputs]") {
  const fs::path d = fresh("nonfinite");
  fhd::app::OutputOptions o;
  o.dir = (d / "out").string();
  fhd::ReconResult res;
  res.grid = {4, 4, 1};
  res.methods.push_back({"iterative", std::vector<fhd::cfloat>(16, {1, 0})});
  res.methods[0].image[5] = {std::numeric_limits<float>::quiet_NaN(), 0};
  {
    fhd::app::OutputPlan plan = fhd::app::plan_outputs(o);
    CHECK_THROWS_WITH(fhd::app::write_outputs(plan, res, nlohmann::json::object()),
                      Catch::Contains("the iterative image has 1 of 16 voxels not finite"));
    fhd::app::discard_outputs(plan);
  }
  CHECK(!fs::exists(d / "out" / "images.h5"));
  res.methods[0].image[5] = {2, 0};  // the same set, finite, is written
  fhd::app::OutputPlan plan = fhd::app::plan_outputs(o);
  fhd::app::write_outputs(plan, res, nlohmann::json::object());
  CHECK(fs::exists(d / "out" / "images.h5"));
  fs::remove_all(d);
}

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

// --json inside --out replaced one of the run's outputs (exit 0), or made a
// subdirectory there that broke --out for every later run; a name ending in
// '/' was refused only after the work, with the previous outputs swapped out.
// Each is refused first now, nothing created, the previous set kept whole.
TEST_CASE("--json inside --out or naming a directory is refused before any work", "[outputs]") {
  const fs::path d = fresh("json-in-out");
  const std::string out = (d / "o").string();
  REQUIRE(run_cli(kTiny + " --out " + out).code == 0);
  const auto before = snapshot(d / "o");
  for (const std::string& json : {out + "/images.h5", out + "/sub/r.json", (d / "jx").string() + "/"}) {
    INFO(json);
    const CliRun r = run_cli(kTiny + " --out " + out + " --json " + json);
    CHECK(r.code == 2);
    CHECK(r.out.find("--json") != std::string::npos);
    CHECK(r.out.find("PSNR") == std::string::npos);
    CHECK(snapshot(d / "o") == before);
    CHECK(!fs::exists(d / "o" / "sub"));
    CHECK(!fs::exists(d / "jx"));
  }
  // Its default place, and a folder that does not exist yet (made when written).
  CHECK(run_cli(kTiny + " --out " + out + " --json " + out + "/report.json").code == 0);
  CHECK(fs::exists(d / "o" / "report.json"));
  CHECK(run_cli(kTiny + " --out " + out + " --json " + (d / "new" / "r.json").string()).code == 0);
  CHECK(fs::exists(d / "new" / "r.json"));
  // "o/./" as typed: swapped into place, not refused by rename after the work.
  CHECK(run_cli(kTiny + " --out " + out + "/./").code == 0);
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
  const auto q = std::make_shared<const fhd::QValues>(g.doubled().voxels(), fhd::cfloat(1.0f, 0.5f));
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
  const fhd::SharedQ back = fhd::load_q(d.string(), key);
  CHECK((back && *back == *q));
  fs::remove_all(d);
}
