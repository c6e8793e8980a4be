// bench-nufft --device cpu: every row of one op transforms the same input, so
// rows with the same settings give the same error (hunt19 finding 4).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

// Type 2 wrote its output into type 1's strengths: from the second tolerance
// on, and in every --transforms row, type 1 transformed type 2's last output
// (relerr 1.50e-3, then 1.42e-3 at the same tol and sigma).
TEST_CASE("bench-nufft cpu: rows with the same settings transform the same input", "[bench-nufft]") {
  const fs::path dir = fhd::test::fresh_temp_dir("bench-nufft", "same-input");
  const fs::path json = dir / "b.json";
  const auto r = fhd::test::run_cli("--quiet bench-nufft --device cpu --matrix 16 --samples 2000 --reps 1 "
                                    "--tols 1e-3,1e-3 --no-q --transforms 2 --json " + json.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::ifstream f(json);
  REQUIRE(f.good());
  const nlohmann::json j = nlohmann::json::parse(f);
  for (const char* op : {"type1", "type2"}) {
    INFO(op);
    std::vector<double> errs;
    for (const auto& row : j.at("rows"))
      if (row.at("op").get<std::string>().rfind(op, 0) == 0) errs.push_back(row.at("relerr").get<double>());
    REQUIRE(errs.size() == 6);  // default, batched x2, 2 single calls; at each of the two tolerances
    for (double e : errs) CHECK(e == Approx(errs.front()).epsilon(1e-3));
  }
  fs::remove_all(dir);
}
