// The batch's process lifecycle and the files it opens (hunt20's lifecycle
// sweep): nothing opened that can block for ever, signals that end a batch
// still write its summary, and what cannot be written is refused up front.

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "batch_test_util.hpp"
#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::test::read_json;
using fhd::test::rows_by_name;
using fhd::test::run_cli;

namespace {

fs::path fresh(const std::string& name) { return fhd::test::fresh_dir("lifecycle", name); }

// fhdrecon ARGS, killed after `seconds` (exit 124) should it hang.
fhd::test::CliRun run_within(int seconds, const std::string& args) {
  return run_cli(args, "timeout " + std::to_string(seconds));
}

}  // namespace

TEST_CASE("a FIFO as a scan's report.json is not waited on: the scan is reconstructed", "[batch][lifecycle][fifo]") {
  const fs::path d = fresh("fifo-report");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  const std::string cmd =
      "batch " + (d / "a.h5").string() + " --out " + (d / "o").string() + " --iters 3 --no-cache --device cpu";
  REQUIRE(run_cli("--quiet " + cmd).code == 0);
  fs::remove(d / "o" / "a" / "report.json");
  REQUIRE(::mkfifo((d / "o" / "a" / "report.json").c_str(), 0600) == 0);
  auto r = run_within(60, cmd);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("reconstructing (report.json is not a plain file)") != std::string::npos);
  CHECK(rows_by_name(read_json(d / "o" / "summary.json"))["a.h5"]["status"] == "ok");
  CHECK(fs::is_regular_file(d / "o" / "a" / "report.json"));
}

TEST_CASE("batch --merge refuses a FIFO as a shard file, not waiting on it", "[batch][lifecycle][fifo]") {
  const fs::path d = fresh("fifo-shard");
  fs::create_directories(d / "shards");
  const fs::path fifo = d / "shards" / "shard-0000-of-0001.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto r = run_within(20, "--quiet batch --merge " + d.string());
  fhd::test::one_line_error(r, "shard file " + fifo.string() + ": is not a plain file");
}

TEST_CASE("--out through a link writes where it points and keeps the link", "[lifecycle][outputs]") {
  const fs::path d = fresh("link");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  fs::create_directories(d / "real");
  std::ofstream(d / "real" / "notes.txt") << "keep";
  fs::create_directory_symlink("real", d / "lnk");
  auto r = run_cli("--quiet --input " + (d / "a.h5").string() + " --out " + (d / "lnk").string() +
                   " --iters 3 --no-cache --device cpu --save h5");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(d / "lnk"));
  CHECK(fs::is_regular_file(d / "real" / "report.json"));
  CHECK(fs::is_regular_file(d / "real" / "images.h5"));
  CHECK(fs::is_regular_file(d / "real" / "notes.txt"));
  // A batch's DIR/<scan> that is a link: the same.
  fs::create_directories(d / "o");
  fs::create_directories(d / "elsewhere");
  fs::create_directory_symlink("../elsewhere", d / "o" / "a");
  auto b = run_cli("--quiet batch " + (d / "a.h5").string() + " --out " + (d / "o").string() +
                   " --iters 3 --no-cache --device cpu");
  INFO(b.out);
  CHECK(b.code == 0);
  CHECK(fs::is_symlink(d / "o" / "a"));
  CHECK(fs::is_regular_file(d / "elsewhere" / "report.json"));
}

TEST_CASE("--out whose staging name cannot exist is refused before any work", "[lifecycle][outputs]") {
  const fs::path d = fresh("long");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  const fs::path out = d / std::string(245, 'L');
  auto r = run_cli("--quiet --input " + (d / "a.h5").string() + " --out " + out.string() +
                   " --iters 3 --no-cache --device cpu");
  fhd::test::one_line_error(r,
                            ": its name is too long: the staging directory beside it (.NAME.fhdtmp-PID) would need ");
  CHECK(r.out.find("; give a name of at most ") != std::string::npos);
  CHECK(r.out.find("cmpFhD") == std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("--out on a mount point is refused before any work", "[lifecycle][outputs][mount]") {
  const fs::path d = fresh("mount");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  fs::create_directories(d / "mp");
  // A private mount namespace (root, or user namespaces): else nothing to test here.
  const std::string out = fhd::test::shell(
      "unshare -m sh -c \"mount -t tmpfs tmpfs " + (d / "mp").string() + " || exit 99; $FHD --quiet --input " +
      (d / "a.h5").string() + " --out " + (d / "mp").string() +
      " --iters 3 --no-cache --device cpu; echo rc=\\$?; ls -A " + (d / "mp").string() + "\"; echo shell=$?");
  if (out.find("rc=") == std::string::npos) FHD_SKIP("cannot mount a tmpfs here");
  INFO(out);
  CHECK(fhd::test::exit_status(out) == 2);
  CHECK(out.find("fhdrecon: error: " + (d / "mp").string() + ": output directory = " + (d / "mp").string() +
                 ": is a mount point (another filesystem than its parent " + d.string() + ")") != std::string::npos);
  CHECK(out.find("give a folder inside it, e.g. " + (d / "mp" / "run1").string()) != std::string::npos);
}

TEST_CASE("--cache-dir inside the output directory is refused before any work, naming both", "[lifecycle][outputs]") {
  const fs::path d = fresh("cache-in-out");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  fs::copy_file(d / "a.h5", d / "b.h5");
  const std::string out = (d / "r").string();
  auto r = run_cli("--quiet --input " + (d / "a.h5").string() + " --out " + out + " --cache-dir " + out +
                   " --iters 3 --device cpu");
  fhd::test::one_line_error(r, out + ": --cache-dir = " + out + ": lies inside --out " + out +
                                   ", which each run replaces as a whole; put the cache elsewhere");
  CHECK_FALSE(fs::exists(out));
  const std::string cache = (d / "o" / "a" / "cache").string();
  auto b = run_cli("--quiet batch " + (d / "a.h5").string() + " " + (d / "b.h5").string() + " --out " +
                   (d / "o").string() + " --cache-dir " + cache + " --iters 3 --device cpu");
  fhd::test::one_line_error(b, "--cache-dir = " + cache + ": lies inside " + (d / "o" / "a").string() +
                                   ", the output directory of " + (d / "a.h5").string() + ", which each run");
  CHECK_FALSE(fs::exists(d / "o"));
}

TEST_CASE("an entry of DIR that is not a plain file is named as such, not with a stale errno", "[lifecycle][outputs]") {
  const fs::path d = fresh("fifo-in-out");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  fs::create_directories(d / "r");
  REQUIRE(::mkfifo((d / "r" / "fifo").c_str(), 0600) == 0);
  auto r = run_cli("--quiet --input " + (d / "a.h5").string() + " --out " + (d / "r").string() +
                   " --iters 3 --no-cache --device cpu --save none");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("holds 'fifo', which is not a plain file (made during the run?); it cannot be kept") !=
        std::string::npos);
  CHECK(r.out.find("No such file or directory") == std::string::npos);
}

TEST_CASE("a batch whose log reader has gone (| head -1) still runs every scan and writes its summary",
          "[batch][lifecycle][sigpipe]") {
  const fs::path d = fresh("sigpipe");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  fs::copy_file(d / "a.h5", d / "b.h5");
  const std::string out = fhd::test::shell("$FHD --verbose batch " + (d / "a.h5").string() + " " +
                                           (d / "b.h5").string() + " --out " + (d / "o").string() +
                                           " --iters 3 --no-cache --device cpu 2>&1 | head -1 > /dev/null; "
                                           "echo rc=${PIPESTATUS[0]}");
  INFO(out);
  CHECK(fhd::test::exit_status(out) == 0);
  REQUIRE(fs::exists(d / "o" / "summary.json"));
  const auto rows = rows_by_name(read_json(d / "o" / "summary.json"));
  CHECK(rows.at("a.h5")["status"] == "ok");
  CHECK(rows.at("b.h5")["status"] == "ok");
}

TEST_CASE("SIGHUP ends a batch as SIGINT does: a full, truthful summary", "[batch][lifecycle][sighup]") {
  const fs::path d = fresh("sighup");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  for (const char* f : {"b.h5", "c.h5"}) fs::copy_file(d / "a.h5", d / f);
  const std::string out = fhd::test::shell(
      "FHDRECON_TEST_SCAN_FAULT=hang:b.h5 $FHD --quiet batch " + (d / "a.h5").string() + " " + (d / "b.h5").string() +
      " " + (d / "c.h5").string() + " --out " + (d / "o").string() +
      " --iters 3 --no-cache --device cpu --jobs 1 > /dev/null 2>&1 & pid=$!; sleep 2; kill -HUP $pid; wait $pid; "
      "echo rc=$?");
  INFO(out);
  CHECK(fhd::test::exit_status(out) == 1);
  REQUIRE(fs::exists(d / "o" / "summary.json"));
  const auto rows = rows_by_name(read_json(d / "o" / "summary.json"));
  CHECK(rows.at("a.h5")["status"] == "ok");
  CHECK(rows.at("b.h5")["reason"] == "not finished: batch interrupted");
  CHECK(rows.at("c.h5")["reason"] == "not run: batch interrupted");
}

TEST_CASE("a batch's summary that cannot be written is refused before any scan; failed rows have no times",
          "[batch][lifecycle][summary]") {
  const fs::path d = fresh("summary");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  fs::create_directories(d / "o" / "summary.json");
  auto r = run_cli("--quiet batch " + (d / "a.h5").string() + " " + (d / "missing.h5").string() + " --out " +
                   (d / "o").string() + " --iters 3 --no-cache --device cpu");
  fhd::test::one_line_error(r, (d / "o" / "summary.json").string() + ": batch summary = " +
                                   (d / "o" / "summary.json").string() + ": is a directory, not a file");
  CHECK_FALSE(fs::exists(d / "o" / "a"));  // no scan ran
  fs::remove(d / "o" / "summary.json");
  auto b = run_cli("--quiet batch " + (d / "a.h5").string() + " " + (d / "missing.h5").string() + " --out " +
                   (d / "o").string() + " --iters 3 --no-cache --device cpu");
  CHECK(b.code == 2);
  const auto rows = rows_by_name(read_json(d / "o" / "summary.json"));
  CHECK(rows.at("missing.h5")["seconds"]["total"].is_null());
  CHECK(rows.at("missing.h5")["seconds"]["CG"].is_null());
  CHECK(rows.at("a.h5")["seconds"]["total"].is_number());
}

TEST_CASE("a reader child killed from outside (OOM killer, kill -9) is not blamed on the file", "[lifecycle][reader]") {
  const fs::path d = fresh("reader-kill");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  const std::string in = (d / "a.h5").string();
  const std::string out = fhd::test::shell(
      "FHDRECON_TEST_HOOK=spin@reader-child FHDRECON_READ_TIMEOUT=60 $FHD --quiet --input " + in +
      " --no-cache --device cpu --out " + (d / "o").string() + " > " + (d / "log").string() +
      " 2>&1 & pid=$!; for i in $(seq 200); do c=$(pgrep -f \"[-]-fhdrecon-reader-child hdf5-scan " + in +
      "\") && break; sleep 0.1; done; kill -KILL $c; wait $pid; echo rc=$?; cat " + (d / "log").string());
  INFO(out);
  CHECK(fhd::test::exit_status(out) == 2);
  CHECK(out.find(in +
                 ": its reader was killed (signal 9: out of memory, or killed from outside); the file may be fine") !=
        std::string::npos);
  CHECK(out.find("corrupt") == std::string::npos);
}

TEST_CASE("a batch's lock file is not opened through a link", "[batch][lifecycle][lockfile]") {
  const fs::path d = fresh("lock-link");
  fhd::test::synth_scan(d / "a.h5", "--spokes 12");
  fs::create_directories(d / "o");
  fs::create_directories(d / "victim");
  fs::create_symlink("../victim/x", d / "o" / ".fhdrecon-batch.lock");
  auto r = run_cli("--quiet batch " + (d / "a.h5").string() + " --out " + (d / "o").string() +
                   " --iters 3 --no-cache --device cpu");
  fhd::test::one_line_error(r, "batch --out: the lock file " + (d / "o" / ".fhdrecon-batch.lock").string() +
                                   " is a symbolic link; remove it");
  CHECK_FALSE(fs::exists(d / "victim" / "x"));
}

TEST_CASE("a worker ended by its scan's time limit does not say it was interrupted", "[batch][lifecycle][timeout]") {
  const fs::path d = fresh("worker-line");
  fhd::test::synth_scan(d / "hangs.h5", "--spokes 12");
  auto r = run_cli("batch " + (d / "hangs.h5").string() + " --out " + (d / "o").string() +
                       " --iters 3 --no-cache --device cpu --scan-timeout 2",
                   "FHDRECON_TEST_SCAN_FAULT=hang:hangs");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("fhdrecon batch worker: ended by its batch or server (Terminated): temporaries removed") !=
        std::string::npos);
  CHECK(r.out.find("fhdrecon: interrupted") == std::string::npos);
}
