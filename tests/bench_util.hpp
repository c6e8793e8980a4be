#pragma once
// What the hidden [.…-bench] cases share: sizes from the environment and a
// wall clock. They print figures beside goals and never fail on a clock.
#include <chrono>
#include <cstdlib>

namespace fhd::bench {

// The integer in environment variable `name`, or `fallback` where unset or empty.
inline long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atol(v) : fallback;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace fhd::bench
