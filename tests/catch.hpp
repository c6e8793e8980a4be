#pragma once
// Builds with Catch2 v3 (the GPU machine) and v2.13 (Debian 12).
#if defined(FHD_CATCH3)
#include <catch2/catch_all.hpp>
#include <string>
#define FHD_SKIP(msg) SKIP(msg)
// v2's names, so one test source builds with both.
using Catch::Approx;
namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& s) { return Matchers::ContainsSubstring(s); }
}  // namespace Catch
#else
#include <catch2/catch.hpp>
// v2 has no SKIP: report and leave the test case.
#define FHD_SKIP(msg) \
  do {                \
    WARN(msg);        \
    return;           \
  } while (0)
#endif
