// JSON report and the atomic-output helper.
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "catch.hpp"
#include "io/atomic_file.hpp"
#include "io/text_outputs.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

TEST_CASE("json report round trip, NaN becomes null", "[io][report]") {
  TempDir dir;
  nlohmann::json j = {{"psnr_db", 31.5}, {"iterations", 30}, {"device", "cpu"},
                      {"bad", std::numeric_limits<double>::quiet_NaN()}};
  const std::string path = dir.file("sub/report.json");
  make_parent_dir(path);
  write_json(path, j);
  std::ifstream in(path);
  nlohmann::json back = nlohmann::json::parse(in);
  CHECK(back["psnr_db"].get<double>() == 31.5);
  CHECK(back["iterations"].get<int>() == 30);
  CHECK(back["bad"].is_null());
  if (on_path("python3")) {  // a third-party JSON parser agrees
    std::string out;
    CHECK(run("python3 -c \"import json; print(json.load(open('" + path + "'))['device'])\"", &out) == 0);
    CHECK(out == "cpu\n");
  }
}

TEST_CASE("json writer writes bytes that are not UTF-8 as U+FFFD, a valid report", "[io][report]") {
  // A Latin-1 file name in a report: refusing it threw a finished
  // reconstruction away (the writer threw before any file existed).
  TempDir dir;
  const std::string path = dir.file("r.json");
  write_json(path, {{"a", 1}});
  std::string e = error_of([&] { write_json(path, {{"a", std::string("in\xff\xfe.h5")}}); });
  CHECK(e == "no error");
  std::ifstream in(path);
  CHECK(nlohmann::json::parse(in)["a"].get<std::string>() == "in\xef\xbf\xbd\xef\xbf\xbd.h5");
  CHECK(dir.entries() == 1);
}

TEST_CASE("atomic output: nothing appears until commit", "[io][atomic]") {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  {
    AtomicOutput out(path);
    std::ofstream(out.tmp()) << "half";
    CHECK(!std::filesystem::exists(path));
    CHECK(out.tmp() != path);
    CHECK(std::filesystem::path(out.tmp()).parent_path() == std::filesystem::path(path).parent_path());
  }  // dropped without commit
  CHECK(dir.entries() == 0);
  {
    AtomicOutput out(path);
    std::ofstream(out.tmp()) << "whole";
    out.commit();
  }
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  CHECK(s.str() == "whole");
  CHECK(dir.entries() == 1);
}

TEST_CASE("output directory: created, or one error naming it", "[io][atomic]") {
  TempDir dir;
  make_output_dir(dir.file("a/b/c"));
  CHECK(std::filesystem::is_directory(dir.file("a/b/c")));
  std::ofstream(dir.file("plain")) << "x";
  std::string e = error_of([&] { make_output_dir(dir.file("plain/sub")); });
  CHECK(contains(e, dir.file("plain/sub") + ": output directory = "));
  e = error_of([&] { make_output_dir(dir.file("plain")); });
  INFO(e);
  CHECK(contains(e, "is not a directory"));
}
