#pragma once
// Helpers of the batch tests (test_batch_scale.cpp, test_batch_workers.cpp):
// small scans made by the CLI, summaries read back.
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_util.hpp"

namespace fhd::test {

// A fresh, existing directory fhdrecon-AREA-NAME in the temporary directory.
inline std::filesystem::path fresh_dir(const std::string& area, const std::string& name) {
  std::filesystem::path d = fresh_temp_dir(area, name);
  std::filesystem::create_directories(d);
  return d;
}

// A 16 x 16 2D Shepp-Logan scan synthesized by the CLI.
inline void synth_scan(const std::filesystem::path& file, const std::string& args) {
  auto r = run_cli("--quiet synth --phantom shepp2d --matrix 16 " + args + " -o " + file.string());
  INFO(r.out);
  REQUIRE(r.code == 0);
}

inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

// file name -> row of a summary.json
inline std::map<std::string, nlohmann::json> rows_by_name(const nlohmann::json& summary) {
  std::map<std::string, nlohmann::json> rows;
  for (const nlohmann::json& s : summary["scans"])
    rows[std::filesystem::path(s["file"].get<std::string>()).filename().string()] = s;
  return rows;
}

// " DIR/a DIR/b ...": files of DIR for a command line.
inline std::string file_args(const std::filesystem::path& dir, std::initializer_list<const char*> names) {
  std::string args;
  for (const char* n : names) args += " " + (dir / n).string();
  return args;
}

}  // namespace fhd::test
