// fhdrecon batch through the CLI: a folder of small 2D scans, two sharing a
// trajectory, one truncated. Checks the summary, the Q-cache column, the exit
// code, skipping up-to-date scans and --force.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "app/batch.hpp"
#include "catch.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct BatchRun {
  int code = -1;
  std::string out;
};

BatchRun cli(const std::string& args) {
  std::string cmd = std::string(FHDRECON_EXE) + " " + args + " 2>&1";
  BatchRun r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

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

TEST_CASE("batch: output names stay distinct and the fingerprint follows the options", "[batch]") {
  using namespace fhd::app;
  auto names = output_names({"x/a.h5", "y/a.mrd", "z/a.mrd", "b"});
  REQUIRE(names.size() == 4);
  CHECK(names[0] == "a");
  CHECK(names[1] == "a_mrd");
  CHECK(names[2] == "a_mrd_2");
  CHECK(names[3] == "b");
  SolverOptions s;
  std::string fp = options_fingerprint(s, "cpu");
  CHECK(fp == options_fingerprint(s, "cpu"));
  CHECK(fp != options_fingerprint(s, "gpu"));
  s.iters = 31;
  CHECK(fp != options_fingerprint(s, "cpu"));
  s.iters = 30;
  s.cache_dir = "/elsewhere";  // where Q is cached does not change the images
  CHECK(fp == options_fingerprint(s, "cpu"));
  CHECK(bart_traj_for("d/k.cfl") == "d/k_traj");
  CHECK(bart_traj_for("d/k.h5").empty());
}

TEST_CASE("batch: a missing file is reported in its row, not a crash", "[batch]") {
  const fs::path out = batch_dir("missing");
  BatchRun r = cli("--quiet batch /nonexistent/scan.h5 --out " + out.string());
  INFO(r.out);
  CHECK(r.code == 2);
  auto rows = summary_rows(out);
  REQUIRE(rows.size() == 1);
  CHECK(rows["scan.h5"]["status"] == "failed");
  CHECK(rows["scan.h5"]["reason"].get<std::string>().find("no such file") != std::string::npos);
}
