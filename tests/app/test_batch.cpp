// fhdrecon batch through the CLI: a folder of small 2D scans, two sharing a
// trajectory, one truncated. Checks the summary, the Q-cache column, the exit
// code, skipping up-to-date scans and --force.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "app/batch.hpp"
#include "app/batch_scan.hpp"
#include "app/recon_options.hpp"
#include "app/source.hpp"
#include "core/error.hpp"
#include "recon/eval/metrics.hpp"
#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using BatchRun = fhd::test::CliRun;

BatchRun cli(const std::string& args) { return fhd::test::run_cli(args); }

fs::path batch_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("fhdrecon-batch-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void synth(const fs::path& file, const std::string& args) {
  BatchRun r = cli("--quiet synth --phantom shepp2d --matrix 24 " + args + " -o " + file.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
}

// The first half of `from`'s bytes: a truncated HDF5 file.
void truncated_copy(const fs::path& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(to, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
}

// file name -> its row of summary.json
std::map<std::string, json> summary_rows(const fs::path& out) {
  std::ifstream f(out / "summary.json");
  json j = json::parse(f);
  std::map<std::string, json> rows;
  for (const json& s : j["scans"]) rows[fs::path(s["file"].get<std::string>()).filename().string()] = s;
  return rows;
}

json read_report(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

int csv_lines(const fs::path& p) {
  std::ifstream f(p);
  int n = 0;
  for (std::string line; std::getline(f, line);) ++n;
  return n;
}

}  // namespace

TEST_CASE("batch: summary rows, Q once per trajectory, failures, skip and --force", "[batch]") {
  const fs::path in = batch_dir("in"), out = batch_dir("out"), cache = batch_dir("cache");
  synth(in / "a.h5", "--spokes 24");
  synth(in / "b.h5", "--spokes 24 --noise 0.05");  // a's trajectory, other data
  synth(in / "c.mrd", "--spokes 20");              // another trajectory, ISMRMRD
  truncated_copy(in / "a.h5", in / "bad.h5");
  std::string files;
  for (const char* f : {"a.h5", "b.h5", "bad.h5", "c.mrd"}) files += " " + (in / f).string();
  const std::string opts = " --out " + out.string() + " --cache-dir " + cache.string() + " --iters 5";

  BatchRun first = cli("--quiet batch" + files + opts);
  INFO(first.out);
  CHECK(first.code == 2);
  auto rows = summary_rows(out);
  REQUIRE(rows.size() == 4);
  CHECK(rows["a.h5"]["status"] == "ok");
  CHECK(rows["a.h5"]["q_source"] == "computed");
  CHECK(rows["b.h5"]["status"] == "ok");
  CHECK(rows["b.h5"]["q_source"] == "cache");  // same trajectory as a.h5
  CHECK(rows["c.mrd"]["status"] == "ok");
  CHECK(rows["c.mrd"]["q_source"] == "computed");
  CHECK(rows["bad.h5"]["status"] == "failed");
  CHECK(rows["bad.h5"]["reason"].get<std::string>().find("bad.h5") != std::string::npos);
  for (const char* f : {"a.h5", "b.h5", "c.mrd"}) {
    INFO(f);
    REQUIRE(rows[f]["iterative"]["psnr_db"].is_number());  // phantom provenance travels with the file
    CHECK(rows[f]["iterative"]["psnr_db"].get<double>() > 10);
    CHECK(rows[f]["gridding_kb"]["psnr_db"].is_number());
    CHECK(rows[f]["seconds"]["total"].get<double>() > 0);
  }
  CHECK(fs::exists(out / "a" / "images.h5"));
  CHECK(fs::exists(out / "c" / "report.json"));
  CHECK(csv_lines(out / "summary.csv") == 5);

  BatchRun again = cli("--quiet batch" + files + opts);
  CHECK(again.code == 2);  // bad.h5 still fails
  rows = summary_rows(out);
  CHECK(rows["a.h5"]["status"] == "skipped");
  CHECK(rows["b.h5"]["status"] == "skipped");
  CHECK(rows["c.mrd"]["status"] == "skipped");
  CHECK(rows["a.h5"]["iterative"]["psnr_db"].is_number());  // carried over from the report
  CHECK(rows["bad.h5"]["status"] == "failed");

  // A newer input is redone; so is every scan when the options change.
  fs::last_write_time(in / "a.h5", fs::file_time_type::clock::now() + std::chrono::seconds(5));
  cli("--quiet batch" + files + opts);
  rows = summary_rows(out);
  CHECK(rows["a.h5"]["status"] == "ok");
  CHECK(rows["b.h5"]["status"] == "skipped");
  cli("--quiet batch" + files + opts + " --lambda 0.01");
  rows = summary_rows(out);
  CHECK(rows["b.h5"]["status"] == "ok");
  CHECK(rows["c.mrd"]["status"] == "ok");

  BatchRun forced = cli("--quiet batch " + (in / "b.h5").string() + opts + " --lambda 0.01 --force");
  CHECK(forced.code == 0);
  rows = summary_rows(out);
  REQUIRE(rows.size() == 1);
  CHECK(rows["b.h5"]["status"] == "ok");
  CHECK(rows["b.h5"]["q_source"] == "cache");
}

TEST_CASE("batch warns once of an option no scan uses, not once per scan", "[batch]") {
  const fs::path in = batch_dir("warn-in"), out = batch_dir("warn-out");
  std::string files;
  for (const char* f : {"a.h5", "b.h5", "c.h5"}) {
    synth(in / f, "--spokes 16");
    files += " " + (in / f).string();
  }
  BatchRun r = cli("--quiet batch" + files + " --out " + out.string() +
                   " --no-cache --iters 2 --fhd nufft --trig double --admm-rho 2");
  INFO(r.out);
  CHECK(r.code == 0);
  using fhd::test::occurrences;
  CHECK(occurrences(r.out, "warning: --trig: ignored (for the exact gather; the NUFFT has its own)") == 1);
  CHECK(occurrences(r.out, "warning: --admm-rho: ignored (for ADMM") == 1);
  CHECK(occurrences(r.out, "ignored") == 2);
}

TEST_CASE("batch: output names stay distinct and the fingerprint follows the options", "[batch]") {
  using namespace fhd::app;
  auto names = output_names({"x/a.h5", "y/a.mrd", "z/a.mrd", "b"});
  REQUIRE(names.size() == 4);
  CHECK(names[0] == "a");
  CHECK(names[1] == "a_mrd");
  CHECK(names[2] == "a_mrd_2");
  CHECK(names[3] == "b");
  // The batch's own files and names that are no directory of their own are
  // taken: "st/summary.csv.h5" wrote its outputs where the summary goes.
  names = output_names({"st/summary.csv.h5", "..h5", "x/shards.mrd", "overview.png.h5"});
  CHECK(names == std::vector<std::string>{"summary_csv_h5", "__h5", "shards_mrd", "overview_png_h5"});
  CHECK(output_names({"x/logs.h5"}) == std::vector<std::string>{"logs_h5"});  // scripts/slurm/submit.sh's OUT/logs
  SolverOptions s;
  std::string fp = options_fingerprint(s, "cpu");
  CHECK(fp == options_fingerprint(s, "cpu"));
  CHECK(fp != options_fingerprint(s, "gpu"));
  s.iters = SolverOptions{}.iters + 1;
  CHECK(fp != options_fingerprint(s, "cpu"));
  s.iters = SolverOptions{}.iters;
  // Another build (its git revision) redoes the scans: the version stayed 0.1.0 through image-changing fixes.
  CHECK(fp == options_fingerprint(s, "cpu", build_revision()));
  CHECK(options_fingerprint(s, "cpu", "255f782721") != options_fingerprint(s, "cpu", "ee422ec1ba-dirty"));
  s.cache_dir = "/elsewhere";  // where Q is cached does not change the images
  CHECK(fp == options_fingerprint(s, "cpu"));
  // Every option that changes the images changes it.
  const std::vector<std::function<void(SolverOptions&)>> changes = {
      [](SolverOptions& o) { o.reg = "tv"; },           [](SolverOptions& o) { o.fhd = "nufft"; },
      [](SolverOptions& o) { o.no_precond = true; },    [](SolverOptions& o) { o.coil_combine = "rss"; },
      [](SolverOptions& o) { o.maps = "espirit"; },     [](SolverOptions& o) { o.maps_crop = 0.2; },
      [](SolverOptions& o) { o.field_comp = "exact"; }, [](SolverOptions& o) { o.nufft_tol = 1e-4; },
      [](SolverOptions& o) { set_lambda(o, "0.03"); },  [](SolverOptions& o) { o.admm_rho *= 2; },
      [](SolverOptions& o) { o.admm_inner += 1; }};
  for (const auto& change : changes) {
    SolverOptions c;
    change(c);
    CHECK(options_fingerprint(c, "cpu") != fp);
  }
  CHECK(bart_traj_for("d/k.cfl") == "d/k_traj");
  CHECK(bart_traj_for("d/k.h5").empty());
}

// hunt19 finding 1: output names follow the list, so DIR/<name> can hold
// another scan's outputs; they were "skipped, outputs up to date", the row
// showing the other scan's PSNR.
TEST_CASE("batch: outputs of another scan with the same name are not up to date", "[batch]") {
  const fs::path in = batch_dir("same-stem-in"), out = batch_dir("same-stem-out");
  fs::create_directories(in / "sub");
  synth(in / "s1.h5", "--spokes 24");
  synth(in / "sub" / "s1.h5", "--spokes 8 --noise 0.2");  // another trajectory and data: another PSNR
  const std::string opts = " --out " + out.string() + " --device cpu --iters 2 --no-cache";
  const std::string first = (in / "s1.h5").string(), second = (in / "sub" / "s1.h5").string();
  auto input_of_report = [&] { return read_report(out / "s1" / "report.json")["batch"]["input"]; };

  BatchRun a = cli("--quiet batch " + first + opts);
  INFO(a.out);
  REQUIRE(a.code == 0);
  const double psnr_first = summary_rows(out)["s1.h5"]["iterative"]["psnr_db"].get<double>();
  // A second study with the same stem into the same --out: both are DIR/s1.
  BatchRun b = cli("batch " + second + opts);
  INFO(b.out);
  CHECK(b.code == 0);
  CHECK(b.out.find("reconstructing (outputs are of another scan: " + first + ")") != std::string::npos);
  auto rows = summary_rows(out);
  CHECK(rows["s1.h5"]["status"] == "ok");  // was "skipped", "outputs up to date"
  REQUIRE(rows["s1.h5"]["iterative"]["psnr_db"].is_number());
  CHECK(rows["s1.h5"]["iterative"]["psnr_db"].get<double>() != psnr_first);
  CHECK(input_of_report() == second);

  // The same file named relative to another directory is the same scan: skipped.
  const std::string rel = fhd::test::shell("cd " + in.string() + " && $FHD --quiet batch sub/s1.h5" + opts +
                                           "; echo rc=$?");
  INFO(rel);
  CHECK(fhd::test::exit_status(rel) == 0);
  CHECK(summary_rows(out)["s1.h5"]["status"] == "skipped");
  // A report that names no input is not trusted.
  json report = read_report(out / "s1" / "report.json");
  report["batch"].erase("input");
  std::ofstream(out / "s1" / "report.json", std::ios::trunc) << report.dump();
  BatchRun c = cli("batch " + second + opts);
  CHECK(c.out.find("reconstructing (report.json names no input)") != std::string::npos);
  CHECK(summary_rows(out)["s1.h5"]["status"] == "ok");
  CHECK(input_of_report() == second);
}

TEST_CASE("batch: a missing file is reported in its row, not a crash", "[batch]") {
  const fs::path out = batch_dir("missing");
  BatchRun r = cli("--quiet batch /nonexistent/scan.h5 --out " + out.string());
  INFO(r.out);
  CHECK(r.code == 2);
  auto rows = summary_rows(out);
  REQUIRE(rows.size() == 1);
  CHECK(rows["scan.h5"]["status"] == "failed");
  // Said of the file: batch takes no --input ("--input = ...: no such file" before).
  CHECK(rows["scan.h5"]["reason"] == "/nonexistent/scan.h5: does not exist");
}

TEST_CASE("batch tells formats apart as recon does and names a file's problem plainly", "[batch]") {
  const fs::path in = batch_dir("formats-in"), out = batch_dir("formats-out");
  synth(in / "a.h5", "--spokes 8");
  fs::rename(in / "a.h5", in / "scan");  // HDF5 without extension: was read as BART, blaming --traj-file
  fs::create_directories(in / "adir");   // said "adir_traj.hdr: does not exist"
  fs::create_symlink(in / "loop.h5", in / "loop.h5");  // said "--input = ...: cannot be opened"
  CHECK(fhd::app::bart_traj_for((in / "scan").string()).empty());
  CHECK(fhd::app::bart_traj_for((in / "k").string()) == (in / "k_traj").string());  // no file: a BART base name
  BatchRun r = cli("--quiet batch " + (in / "scan").string() + " " + (in / "adir").string() + " " +
                   (in / "loop.h5").string() + " --out " + out.string() + " --device cpu --iters 2 --no-gridding");
  INFO(r.out);
  CHECK(r.code == 2);
  auto rows = summary_rows(out);
  CHECK(rows["scan"]["status"] == "ok");
  CHECK(rows["adir"]["reason"] == (in / "adir").string() + ": is a directory, not a scan file");
  CHECK(rows["loop.h5"]["reason"].get<std::string>().rfind((in / "loop.h5").string() + ": cannot be opened: ", 0) == 0);
}

TEST_CASE("batch refuses a scan file its own outputs would overwrite", "[batch]") {
  using fhd::app::check_inputs_outside_outputs;
  const fs::path d = batch_dir("inside"), out = d / "o";
  fs::create_directories(out / "raw");
  fs::create_directories(out / "shards");
  for (const char* f : {"summary.json", "summary.csv", "overview.png", "s0", "raw/a.h5", "shards/x.h5", "k.cfl"})
    std::ofstream(out / f) << "x";
  fs::create_symlink(out / "summary.csv", d / "link.h5");  // writing the summary replaces what the link names
  auto refusal = [&](const std::vector<std::string>& files) {
    try {
      check_inputs_outside_outputs(files, fhd::app::output_names(files), out.string());
    } catch (const fhd::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string o = out.string();
  CHECK(refusal({o + "/summary.json"}) == o + "/summary.json: is where batch --out " + o +
                                             " writes its summary.json; it would be overwritten (move the scan out "
                                             "of " + o + " or choose another --out)");
  CHECK(refusal({o + "/raw/../summary.csv"}).find("writes its summary.csv") != std::string::npos);
  CHECK(refusal({(d / "link.h5").string()}).find("writes its summary.csv") != std::string::npos);
  CHECK(refusal({d.string() + "/./o/overview.png"}).find("writes its overview.png") != std::string::npos);
  CHECK(refusal({o + "/shards/x.h5"}).find("writes its shard files") != std::string::npos);
  // out/s0 (no extension) would be replaced by its own output directory out/s0.
  CHECK(refusal({o + "/s0"}).find("writes the outputs of " + o + "/s0 (" + o + "/s0, replaced whole)") !=
        std::string::npos);
  CHECK(refusal({o + "/raw/a.h5", o + "/k.cfl", (d / "x.h5").string()}) == "accepted");  // out/a, out/k, out/x
  CHECK(refusal({o + "/raw/a.h5", (d / "raw.h5").string()}).find("writes the outputs of " + d.string() + "/raw.h5") !=
        std::string::npos);  // another scan's output directory
  // End to end: the scan in out/summary.json was reconstructed and then
  // replaced by the summary (exit 0); now one line, exit 2, the file kept.
  synth(out / "summary.json", "--spokes 8");
  const auto before = fs::file_size(out / "summary.json");
  const BatchRun r = cli("--quiet batch " + o + "/summary.json --out " + o + " --device cpu");
  CHECK(r.code == 2);
  CHECK(r.out.find("writes its summary.json") != std::string::npos);
  CHECK(fs::file_size(out / "summary.json") == before);
}

TEST_CASE("--files-from a directory says so", "[batch]") {
  const fs::path d = batch_dir("list-dir");
  CHECK_THROWS_WITH(fhd::app::read_file_list(d.string()),
                    "--files-from " + d.string() + ": is a directory (expected a text list of scan paths, one per line)");
}

TEST_CASE("coils: root sum of squares; k uploaded, Q and the DCF computed once for all coils, in memory",
          "[batch][coils]") {
  using namespace fhd;
  app::SourceOptions so;
  so.phantom = "shepp2d";
  so.matrix = 24;
  so.spokes = 24;
  app::Source src = app::make_source(so);
  // Constant sensitivities 0.6 and 0.8: a linear recon gives 0.6 I and 0.8 I,
  // whose root sum of squares is |I| again (0.36 + 0.64 = 1).
  Scan c0 = src.scan, c1 = src.scan;
  for (cfloat& d : c0.data) d *= 0.6f;
  for (cfloat& d : c1.data) d *= 0.8f;
  ReconOptions ro;
  ro.iters = 6;
  ro.truth = app::truth_of(*src.phantom);
  ro.q_cache_dir.clear();  // no disk cache: "once" must hold in memory
  ro.coil_combine = "rss";
  auto dev = make_cpu_device();
  Device& be = *dev;
  ReconResult one = reconstruct_coils(be, {&src.scan}, ro);
  CHECK(one.plan.q_computed == 1);
  CHECK(one.plan.uploads == 1);
  Scan c2 = c0;
  ReconResult two = reconstruct_coils(be, {&c0, &c1, &c2}, ro);  // once, not three times
  CHECK(two.plan.uploads == 1);
  CHECK(two.plan.q_computed == 1);
  CHECK(two.plan.q_loaded == 0);
  CHECK(two.plan.dcf_computed == 1);
  two = reconstruct_coils(be, {&c0, &c1}, ro);
  REQUIRE(two.methods.size() == one.methods.size());
  for (std::size_t i = 0; i < one.methods.size(); ++i) {
    INFO(one.methods[i].name);
    CHECK(two.methods[i].name == one.methods[i].name);
    // The ceiling comes from the phantom, not the coils: computed once, as is.
    const bool ceiling = one.methods[i].name == "band-limited ceiling";
    std::vector<cfloat> mag(one.methods[i].image.size());
    for (std::size_t v = 0; v < mag.size(); ++v)
      mag[v] = ceiling ? one.methods[i].image[v] : std::abs(one.methods[i].image[v]);
    // Linear and scale-invariant in exact arithmetic; float rounding (the
    // preconditioner's FFT pair per CG iteration included) leaves ~4e-5.
    CHECK(relative_error(two.methods[i].image, mag) < 2e-4);
    REQUIRE(two.methods[i].psnr.has_value());
    CHECK(std::abs(*two.methods[i].psnr - *one.methods[i].psnr) < 1e-3);
  }
  Scan other = c1;
  other.traj.kx[0] += 0.25f;
  CHECK_THROWS_AS(reconstruct_coils(be, {&c0, &other}, ro), InputError);
}

TEST_CASE("batch: the child process gets every solver option the parent was given", "[batch]") {
  using namespace fhd::app;
  ScanJob job;
  job.file = "scan.h5";
  job.output = "out/scan";
  job.fingerprint = "f";
  job.device = "cpu";
  SolverOptions& s = job.solver;
  s.reg = "tv";
  s.fhd = "nufft";
  s.nufft_tol = 1e-4;
  s.no_precond = true;
  s.coil_combine = "rss";
  s.maps = "espirit";
  s.calibration = 20;
  s.maps_crop = 0.2;
  s.field_comp = "segmented";
  s.segments = 6;
  s.iters = 17;
  s.admm_rho = 0.25;
  s.admm_inner = 7;
  set_lambda(s, "0.3");
  // The child parses what the parent passes with the same solver options.
  const std::vector<std::string> args = scan_child_args(job, "row.json", true);
  CLI::App app;
  ScanJob parsed;
  std::string row;
  CLI::App* sub = app.add_subcommand("batch-scan");
  sub->add_option("file", parsed.file);
  sub->add_option("--scan-out", parsed.output);
  sub->add_option("--row-out", row);
  sub->add_option("--fingerprint", parsed.fingerprint);
  sub->add_option("--device", parsed.device);
  sub->add_option("--q-cache", parsed.q_cache);
  add_solver_options(*sub, parsed.solver);
  std::vector<std::string> rest(args.begin() + 1, args.end());  // after --quiet, a global option
  std::vector<std::string> argv = rest;
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
  app.parse(argv);
  const SolverOptions& c = parsed.solver;
  CHECK(c.reg == "tv");
  CHECK(c.fhd == "nufft");
  CHECK(c.nufft_tol == 1e-4);
  CHECK(c.no_precond);
  CHECK(c.coil_combine == "rss");
  CHECK(c.maps == "espirit");
  CHECK(c.calibration == 20);
  CHECK(c.maps_crop == 0.2);
  CHECK(c.field_comp == "segmented");
  CHECK(c.segments == 6);
  CHECK(c.iters == 17);
  CHECK(c.admm_rho == 0.25);
  CHECK(c.admm_inner == 7);
  CHECK(c.lambda == 0.3);
  CHECK(c.lambda_given);
  CHECK(!c.given.count("--trig"));  // not given to the parent: the child keeps the default
  CHECK(options_fingerprint(c, "cpu") == options_fingerprint(s, "cpu"));
}
