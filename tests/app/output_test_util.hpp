#pragma once
// What the output tests share (tests/app/test_outputs.cpp: all-or-nothing
// output sets; test_output_formats.cpp: the outputs other tools and people
// read): a tiny run's options and scratch directories per process.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "test_util.hpp"

namespace fhd::test::outputs {

namespace fs = std::filesystem;

inline const std::string kTiny = "--phantom shepp2d --matrix 16 --spokes 16 --iters 3 --no-cache --quiet";

// Per process: test runs of several checkouts at once never share a directory.
// Removed when the test program ends.
struct Scratch {
  std::string prefix = "fhdrecon-out" + std::to_string(::getpid()) + "-";
  ~Scratch() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(e.path(), ec);
  }
};
inline Scratch g_scratch;

inline fs::path fresh(const std::string& name) {
  return fhd::test::fresh_temp_dir("out" + std::to_string(::getpid()), name);
}

}  // namespace fhd::test::outputs
