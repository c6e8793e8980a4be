// synth --coils: every format holds the coils and (fhdrecon, ISMRMRD) the
// noise calibration; reading a file back prewhitens its coils.
#include <filesystem>

#include "app/scan_input.hpp"
#include "app/source.hpp"
#include "catch.hpp"
#include "recon/coils/coil_noise.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace fhd;

namespace {

app::SourceOptions coil_source(const std::string& input = "") {
  app::SourceOptions so;
  so.phantom = "shepp2d";
  so.matrix = 32;
  so.spokes = 16;
  so.coils = 4;
  so.noise = 0.01;
  so.noise_samples = 300;
  so.input = input;
  return so;
}

double off_diagonal(const CMatrix& psi) {
  double m = 0;
  for (int i = 0; i < psi.rows; ++i)
    for (int j = 0; j < psi.cols; ++j)
      if (i != j) m = std::max(m, std::abs(psi(i, j)) / std::sqrt(psi(i, i).real() * psi(j, j).real()));
  return m;
}

}  // namespace

TEST_CASE("synth --coils writes coils and noise calibration; reading prewhitens", "[app][coils]") {
  const fs::path dir = test::fresh_temp_dir("coils", "synth");
  fs::create_directories(dir);
  app::SourceOptions raw_options = coil_source();
  raw_options.prewhiten = false;  // as synth makes them
  app::Source src = app::make_source(raw_options);
  REQUIRE(src.more_coils.size() == 3);
  REQUIRE(src.scan.noise.size() == 300);
  CHECK(src.scan.provenance.at("coils") == "4");
  CHECK(src.scan.data != src.more_coils[0].data);
  CoilData noise = {src.scan.noise};
  for (const Scan& c : src.more_coils) noise.push_back(c.noise);
  CHECK(off_diagonal(noise_covariance(noise)) > 0.05);  // correlated as written
  std::vector<std::string> files = {"scan.h5"};
#ifdef FHD_HAVE_ISMRMRD
  files.push_back("scan.mrd");
#endif
  for (const std::string& name : files) {
    INFO(name);
    const std::string path = (dir / name).string();
    test::CliRun r = test::run_cli("synth --phantom shepp2d --matrix 32 --spokes 16 --coils 4 --noise 0.01 "
                                   "--noise-samples 300 -o " + path);
    REQUIRE(r.code == 0);
    std::vector<Scan> raw = app::read_scans_any(path, "", 0);
    REQUIRE(raw.size() == 4);
    CHECK(raw[3].data == src.more_coils[2].data);  // the CLI wrote what make_source makes
    CHECK(raw[3].noise == src.more_coils[2].noise);
    app::SourceOptions so = coil_source(path);
    app::Source white = app::make_source(so);
    CHECK(white.scan.provenance.at("prewhitened") == "yes");
    CoilData wn = {white.scan.noise};
    for (const Scan& c : white.more_coils) wn.push_back(c.noise);
    CHECK(off_diagonal(noise_covariance(wn)) < 1e-4);
    // The coils' true maps made again from the provenance: the file's PSNR is
    // scored against the reference an in-memory run uses (it was the bare
    // phantom: 12.3 dB against 18.6 dB for the same image).
    const app::Source mem = app::make_source(coil_source());
    REQUIRE(white.array_gain.size() == mem.array_gain.size());
    REQUIRE(!mem.array_gain.empty());
    double worst = 0;
    for (std::size_t i = 0; i < mem.array_gain.size(); ++i)
      worst = std::max(worst, double(std::abs(white.array_gain[i] - mem.array_gain[i])));
    CHECK(worst < 1e-5);
    so.prewhiten = false;
    CHECK(app::make_source(so).scan.data == raw[0].data);
    so.prewhiten = true;
    so.virtual_coils = 2;
    app::Source virt = app::make_source(so);
    CHECK(virt.more_coils.size() == 1);
    CHECK(virt.scan.provenance.at("virtual_coils") == "2 of 4");
  }
  CHECK(test::run_cli("synth --coils 4 --virtual-coils 2 -o " + (dir / "x.h5").string()).code != 0);
  fs::remove_all(dir);
}

TEST_CASE("a coil file written prewhitened has no reference for its PSNR: none is reported", "[app][coils]") {
  // Its mixing is not in the file, so the array's gain cannot be made again;
  // scored against the bare phantom, the same image read 13 dB lower.
  const fs::path dir = test::fresh_temp_dir("coils", "prewhitened");
  fs::create_directories(dir);
  const std::string plain = (dir / "plain.h5").string(), white = (dir / "white.h5").string();
  const std::string synth = "synth --phantom shepp2d --matrix 32 --spokes 16 --coils 4 --noise 0.01 --noise-samples 300 -o ";
  REQUIRE(test::run_cli(synth + plain).code == 0);
  REQUIRE(test::run_cli(synth + white + " --prewhitened").code == 0);
  const app::Source a = app::make_source(coil_source(plain)), b = app::make_source(coil_source(white));
  CHECK(a.phantom);  // scored against the phantom as the array sees it
  CHECK(!a.array_gain.empty());
  CHECK(!b.phantom);  // no reference: no PSNR
  CHECK(b.array_gain.empty());
  fs::remove_all(dir);
}
