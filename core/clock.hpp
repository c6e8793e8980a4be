#pragma once
// Seconds of the host's steady clock since a time point: stage logs, host-side
// timings (GPU stages are timed on the device: recon/eval/stages.hpp).
#include <chrono>

namespace fhd {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace fhd
