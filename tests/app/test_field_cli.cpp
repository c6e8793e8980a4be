// Off-resonance on the command line (docs/field-maps.md): bad values and
// combinations are one line with exit 2; a synthesized spiral with +-150 Hz
// loses dB uncompensated and gets them back compensated; synth writes the
// field map and times, and --field-map reads a map back.
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <cmath>

#include "catch.hpp"
#include "test_util.hpp"

using fhd::test::run_cli;

namespace {

void require_one_line(const fhd::test::CliRun& r, const std::string& text) {
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find(text) != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
}

nlohmann::json report(const std::filesystem::path& dir) {
  std::ifstream f(dir / "report.json");
  return nlohmann::json::parse(f);
}

double iterative_psnr(const nlohmann::json& r) {
  for (const auto& m : r["methods"])
    if (m["name"] == "iterative") return m["psnr_db"].get<double>();
  return -1;
}

}  // namespace

TEST_CASE("field cli: bad values and combinations are one line", "[cli][field]") {
  require_one_line(run_cli("--off-resonance -5"), "--off-resonance");
  require_one_line(run_cli("--off-resonance nan"), "--off-resonance");
  require_one_line(run_cli("--readout-ms 0"), "--readout-ms");
  require_one_line(run_cli("--field-comp fast"), "--field-comp");
  require_one_line(run_cli("--segments 0"), "--segments");
  const std::string small = "--phantom shepp2d --matrix 16 --traj spiral2d --iters 2 --no-cache --save none ";
  require_one_line(run_cli(small + "--field-comp exact"), "no field map");
  require_one_line(run_cli(small + "--segments 4"), "--segments");
  require_one_line(run_cli(small + "--field-map /nonexistent/map.h5"), "map.h5");
}

TEST_CASE("field cli: segments far off their accuracy target are warned of", "[cli][field]") {
  // 1 segment at 150 Hz over 20 ms: 5.4 dB against 14.3 uncompensated, said only in report.json.
  const std::filesystem::path out = fhd::test::fresh_temp_dir("field", "segments-warned");
  const std::string run = "--quiet --phantom shepp2d --matrix 16 --traj spiral2d --off-resonance 150 --readout-ms 20 "
                          "--iters 2 --no-cache --no-gridding --no-images --out " + out.string() + " --segments ";
  const fhd::test::CliRun one = run_cli(run + "1"), rule = run_cli(run.substr(0, run.size() - 11));
  INFO(one.out << "\n" << rule.out);
  REQUIRE(one.code == 0);
  CHECK(one.out.find("warning: --segments 1: the interpolators err by") != std::string::npos);
  REQUIRE(rule.code == 0);
  CHECK(rule.out.find("warning") == std::string::npos);  // the rule's count meets the target
}

TEST_CASE("field cli: several coils and TV run with a field map (refused before the operator layer)", "[cli][field]") {
  const std::filesystem::path out = fhd::test::fresh_temp_dir("field", "combinations");
  const std::string small = "--phantom shepp2d --matrix 16 --traj spiral2d --iters 3 --no-cache --no-gridding "
                            "--off-resonance 100 --out " + out.string() + " ";
  for (const char* extra : {"--coils 4", "--reg tv", "--coils 2 --reg tv"}) {
    const fhd::test::CliRun r = run_cli(small + extra);
    INFO(extra << ": " << r.out);
    REQUIRE(r.code == 0);
    const nlohmann::json rep = report(out);
    CHECK(rep["field"]["method"] == "segmented");
    CHECK(std::isfinite(iterative_psnr(rep)));
  }
}

TEST_CASE("field cli: compensation gets back what +-150 Hz over 20 ms costs", "[cli][field]") {
  const std::filesystem::path out = fhd::test::fresh_temp_dir("field", "cli");
  const std::string base = "--phantom shepp2d --matrix 32 --traj spiral2d --iters 15 --fhd nufft --no-cache "
                           "--no-gridding --save none --out " + out.string();
  REQUIRE(run_cli(base + " --off-resonance 0").code == 0);
  const double clean = iterative_psnr(report(out));
  REQUIRE(run_cli(base + " --off-resonance 150 --readout-ms 20 --field-comp none").code == 0);
  const double none = iterative_psnr(report(out));
  const fhd::test::CliRun seg = run_cli(base + " --off-resonance 150 --readout-ms 20");
  REQUIRE(seg.code == 0);
  const nlohmann::json r = report(out);
  CHECK(r["field"]["method"] == "segmented");
  CHECK(r["field"]["segments"].get<int>() > 1);
  CHECK(r["field"]["max_hz"].get<double>() == Approx(150.0));
  CHECK(r["field"]["readout_s"].get<double>() == Approx(0.02).epsilon(1e-4));
  const double segmented = iterative_psnr(r);
  INFO("no off-resonance " << clean << " dB, uncompensated " << none << ", segmented " << segmented);
  CHECK(none < clean - 1.0);
  CHECK(std::abs(segmented - clean) < 0.3);
  std::filesystem::remove_all(out);
}

TEST_CASE("field cli: synth writes the map and times; --field-map reads a map", "[cli][field]") {
  const std::filesystem::path dir = fhd::test::fresh_temp_dir("field", "synth");
  std::filesystem::create_directories(dir);
  const std::string scan = (dir / "scan.h5").string();
  REQUIRE(run_cli("synth --phantom shepp2d --matrix 16 --traj spiral2d --off-resonance 80 -o " + scan).code == 0);
  const std::string common = " --iters 3 --no-cache --save none --out " + (dir / "out").string();
  REQUIRE(run_cli("--input " + scan + common).code == 0);
  CHECK(report(dir / "out")["field"]["method"] == "segmented");
  // The same file as its own --field-map, and a map for another grid refused.
  REQUIRE(run_cli("--input " + scan + " --field-map " + scan + " --field-comp exact" + common).code == 0);
  CHECK(report(dir / "out")["field"]["method"] == "exact");
  const std::string other = (dir / "other.h5").string();
  REQUIRE(run_cli("synth --phantom shepp2d --matrix 20 --traj spiral2d --off-resonance 80 -o " + other).code == 0);
  require_one_line(run_cli("--input " + scan + " --field-map " + other + common), "/field_map shape");
#ifdef FHD_HAVE_ISMRMRD
  // ISMRMRD keeps the times, not the map: uncompensated unless --field-map gives one.
  const std::string mrd = (dir / "scan.mrd").string();
  REQUIRE(run_cli("synth --phantom shepp2d --matrix 16 --traj spiral2d --off-resonance 80 -o " + mrd).code == 0);
  REQUIRE(run_cli("--input " + mrd + common).code == 0);
  CHECK(report(dir / "out")["field"]["method"] == "none");
  REQUIRE(run_cli("--input " + mrd + " --field-map " + scan + common).code == 0);
  CHECK(report(dir / "out")["field"]["method"] == "segmented");
#endif
  std::filesystem::remove_all(dir);
}
