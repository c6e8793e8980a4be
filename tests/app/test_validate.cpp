// fhdrecon validate: the tiny preset runs end to end on the CPU and its checks
// hold; the checks fail when the numbers are wrong (they are not decoration).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "app/validate.hpp"
#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::app::ValidateRow;

namespace {

using Run = fhd::test::CliRun;

Run fhdrecon(const std::string& args) { return fhd::test::run_cli(args); }

fs::path fresh_dir(const std::string& name) { return fhd::test::fresh_temp_dir("validate", name); }

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

const nlohmann::json* find(const nlohmann::json& arr, const std::string& key, const std::string& value,
                           const std::string& key2 = "", const std::string& value2 = "") {
  for (const auto& e : arr)
    if (e.at(key) == value && (key2.empty() || e.at(key2) == value2)) return &e;
  return nullptr;
}

ValidateRow row(const std::string& method, const std::string& precision, const std::string& device, double psnr,
                const std::string& data = "d") {
  ValidateRow r{method, precision, device, data, true};
  r.psnr = psnr;
  return r;
}

const fhd::app::ValidateCheck& check_named(const std::vector<fhd::app::ValidateCheck>& cs, const std::string& n) {
  for (const auto& c : cs)
    if (c.name == n) return c;
  FAIL("no check named " << n);
  return cs.front();
}

}  // namespace

TEST_CASE("validate: tiny preset on the CPU, every check that runs holds", "[validate]") {
  fs::path dir = fresh_dir("tiny");
  Run r = fhdrecon("--quiet validate --preset tiny --no-gpu --out " + dir.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("not run") != std::string::npos);  // the GPU rows say why
  nlohmann::json j = read_json(dir / "validate.json");
  CHECK(j.at("all_hold") == true);
  const auto& rows = j.at("rows");
  for (const char* m : {"gridding-trilinear", "gridding-kb", "band-limited ceiling"}) {
    const auto* g = find(rows, "method", m);
    REQUIRE(g != nullptr);
    CHECK(g->at("ran") == true);
    CHECK(g->at("psnr_db").is_number());
  }
  for (const char* p : {"double", "single"}) {
    const auto* it = find(rows, "precision", p, "device", "cpu");
    REQUIRE(it != nullptr);
    CHECK(it->at("ran") == true);
    // FhD against the float64 direct sum: float accuracy, not garbage.
    CHECK(it->at("fhd_relerr").get<double>() < 1e-4);
  }
  const auto* gpu = find(rows, "device", "gpu");
  REQUIRE(gpu != nullptr);
  CHECK(gpu->at("ran") == false);
  const auto& checks = j.at("checks");
  CHECK(find(checks, "name", "single = double (CPU)")->at("result") == "holds");
  CHECK(find(checks, "name", "iterative > trilinear gridding")->at("result") == "holds");
  CHECK(find(checks, "name", "sfu ~ single (GPU)")->at("result") == "not run");
  // The NUFFT's row on the CPU, within 0.05 dB of the exact single row.
  const auto* nufft = find(rows, "precision", "nufft", "device", "cpu");
  REQUIRE(nufft != nullptr);
  CHECK(nufft->at("fhd_relerr").get<double>() < 1e-4);
  CHECK(find(checks, "name", "nufft = exact single (CPU)")->at("result") == "holds");
  std::ifstream md(dir / "validate.md");
  CHECK(md.good());
}

TEST_CASE("validate: an impossible margin fails the run, and the evidence is still written", "[validate]") {
  fs::path dir = fresh_dir("fail");
  Run r = fhdrecon("--quiet validate --preset tiny --no-gpu --min-gain-db 1000 --out " + dir.string());
  INFO(r.out);
  CHECK(r.code != 0);
  CHECK(r.out.find("FAILS") != std::string::npos);
  nlohmann::json j = read_json(dir / "validate.json");
  CHECK(j.at("all_hold") == false);
  CHECK(find(j.at("checks"), "name", "iterative > trilinear gridding")->at("result") == "FAILS");
}

TEST_CASE("validate: checks fail on perturbed rows and skip missing ones", "[validate]") {
  using fhd::app::evaluate_checks;
  fhd::app::CheckThresholds t;
  std::vector<ValidateRow> rows = {row("iterative", "double", "cpu", 30.00), row("iterative", "single", "cpu", 30.01),
                                   row("iterative", "single", "gpu", 30.00), row("iterative", "sfu", "gpu", 29.90),
                                   row("iterative", "tf32", "gpu", 29.85), row("gridding-trilinear", "single", "gpu", 20.0),
                                   row("iterative", "nufft", "cpu", 30.05), row("iterative", "nufft", "gpu", 29.96)};
  auto ok = evaluate_checks(rows, t);
  for (const auto& c : ok) {
    INFO(c.name << ": " << c.detail);
    CHECK(c.ran);
    CHECK(c.holds);
  }
  CHECK(fhd::app::checks_pass(ok));

  rows[1].psnr = 30.06;  // single drifts 0.06 dB from double
  rows[3].psnr = 29.75;  // sfu 0.25 dB below single
  rows[4].psnr = 30.21;  // above is as wrong as below
  rows[5].psnr = 28.0;   // gridding within the margin of iterative
  rows[6].psnr = 30.12;  // nufft 0.06 dB above the CPU single row
  rows[7].psnr = 29.94;  // nufft 0.06 dB below the GPU single row
  auto bad = evaluate_checks(rows, t);
  for (const auto& c : bad) {
    INFO(c.name << ": " << c.detail);
    CHECK(c.ran);
    CHECK_FALSE(c.holds);
  }
  CHECK_FALSE(fhd::app::checks_pass(bad));

  // Gridding on another data set than the iterative row: no comparison.
  rows[5].data = "other";
  CHECK_FALSE(check_named(evaluate_checks(rows, t), "iterative > trilinear gridding").ran);
  // No GPU rows: those checks do not run, and a run without them passes.
  std::vector<ValidateRow> cpu_only = {row("iterative", "double", "cpu", 25.0), row("iterative", "single", "cpu", 25.0),
                                       row("gridding-trilinear", "single", "cpu", 15.0)};
  auto c = evaluate_checks(cpu_only, t);
  CHECK_FALSE(check_named(c, "sfu ~ single (GPU)").ran);
  CHECK(check_named(c, "iterative > trilinear gridding").holds);
  CHECK(fhd::app::checks_pass(c));
}

namespace {

// Refused before any row: exit 2, the error alone (no row's log before it), no
// validate.json or validate.md.
void refused(const Run& r, const fs::path& dir, const std::string& must_contain) {
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(fhd::test::line_count(r.out) == 1);
  CHECK(r.out.find(must_contain) != std::string::npos);
  CHECK(!fs::exists(dir / "validate.json"));
  CHECK(!fs::exists(dir / "validate.md"));
}

}  // namespace

// Each row reconstructed coil 0 alone and scored it against the bare phantom,
// while the data line said "N coils" (hunt19 finding 2).
TEST_CASE("validate: several coils are refused, by option or by file", "[validate]") {
  fs::path dir = fresh_dir("coils");
  refused(fhdrecon("validate --preset tiny --no-gpu --coils 4 --out " + dir.string()), dir,
          "validate: --coils = 4: validate checks one coil's reconstruction; use fhdrecon --coils 4 for SENSE");
  CHECK(!fs::exists(dir));  // refused before the output directory was made
  refused(fhdrecon("validate --preset tiny --no-gpu --virtual-coils 1 --out " + dir.string()), dir,
          "validate: --virtual-coils = 1: validate checks one coil's reconstruction");
  fs::path files = fresh_dir("coils-file");
  fs::create_directories(files);
  const std::string f = (files / "two.h5").string();
  REQUIRE(fhdrecon("--quiet synth --phantom shepp2d --matrix 16 --spokes 16 --coils 2 -o " + f).code == 0);
  refused(fhdrecon("validate --no-gpu --input " + f + " --out " + dir.string()), dir,
          "validate: --input = " + f + ": has 2 coils; validate checks one coil's reconstruction");
  CHECK(!fs::exists(dir));  // refused after the read: nothing made either
  fs::remove_all(files);
  fs::remove_all(dir);
}

// --dcf radial on a spiral failed in the first row's gridding, after the rows
// before it had run (and logged).
TEST_CASE("validate: --dcf radial on a non-radial trajectory is refused before the first row", "[validate]") {
  fs::path dir = fresh_dir("dcf");
  refused(fhdrecon("validate --preset tiny --no-gpu --traj spiral2d --dcf radial --out " + dir.string()), dir,
          "validate: --dcf = radial: radial weights need a radial3d, radial2d or stack-of-stars trajectory; "
          "this one is spiral2d");
  CHECK(!fs::exists(dir));  // no empty --out left behind
  fs::remove_all(dir);
}

// A stack's --spokes are per partition and the partitions scale with the
// matrix: r^2 on the spokes gave the CPU copy r^4 the samples, half the
// density at r = 1/2 (hunt19 finding 3). The copy has r^3 the samples.
TEST_CASE("validate --cpu-matrix: a stack's copy keeps the sample density", "[validate]") {
  struct Case {
    const char* traj;
    const char* counts;
    const char* copy;  // 1/8 of the main data's samples
  };
  for (const Case& k : {Case{"stack-of-stars", "--spokes 20 --readout 16", "8^3, 640 samples"},     // 20*16*16 = 5120
                        Case{"stack-of-spirals", "--spokes 4 --readout 64", "8^3, 512 samples"}}) {  // 4*64*16 = 4096
    INFO(k.traj);
    fs::path dir = fresh_dir(std::string("stack-") + k.traj);
    Run r = fhdrecon(std::string("--quiet validate --preset tiny --no-gpu --phantom shepp3d --matrix 16 --cpu-matrix 8 "
                                 "--iters 2 --traj ") +
                     k.traj + " " + k.counts + " --out " + dir.string());
    INFO(r.out);
    nlohmann::json j = read_json(dir / "validate.json");
    const auto* cpu = find(j.at("rows"), "precision", "double", "device", "cpu");
    REQUIRE(cpu != nullptr);
    CHECK(cpu->at("data") == k.copy);
    fs::remove_all(dir);
  }
}

// "sfu, default kernel" (19 characters) overflowed the 9-wide precision
// column and shifted its row (hunt19 finding 11).
TEST_CASE("validate: the table's columns line up, the longest precision included", "[validate]") {
  fhd::app::ValidateReport rep;
  rep.preset = "tiny";
  rep.rows = {row("iterative", "double", "cpu", 25.0, "32^2, 1664 samples"),
              row("iterative", "sfu, default kernel", "gpu", 25.0, "128^3, 1048576 samples"),
              row("band-limited ceiling", "double", "cpu", 27.0, "128^3, 1048576 samples")};
  ValidateRow skipped{"iterative", "sfu, default kernel", "gpu", "not made (no GPU)", false};
  skipped.not_run = "GPU rows disabled";
  rep.rows.push_back(skipped);
  const std::string table = fhd::app::validate_table(rep);
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; (nl = table.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(table.substr(at, nl - at));
  std::size_t head = 0;
  while (head < lines.size() && lines[head].rfind("method", 0) != 0) ++head;
  REQUIRE(head + 2 + rep.rows.size() <= lines.size());
  const std::size_t device = lines[head].find("device"), data = lines[head].find("data");
  REQUIRE(device != std::string::npos);
  REQUIRE(data != std::string::npos);
  for (std::size_t i = 0; i < rep.rows.size(); ++i) {
    const std::string& line = lines[head + 2 + i];
    INFO(table);
    CHECK(line.substr(device, 3) == rep.rows[i].device);
    CHECK(line.substr(data, rep.rows[i].data.size()) == rep.rows[i].data);
    CHECK(line[device - 1] == ' ');  // the precision ends before the device begins
  }
}
