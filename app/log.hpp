#pragma once
// Logging (spdlog, stderr) and the terminal progress line.
#include <chrono>
#include <string>

namespace fhd::app {

// --quiet: warnings and errors only; --verbose: debug.
void setup_logging(bool quiet, bool verbose);

// One line on a terminal, redrawn in place: "  cmpFhD  45%  ETA 3 s".
// Silent when stderr is not a terminal or under --quiet, so scripts stay clean.
class Progress {
 public:
  explicit Progress(bool enabled);
  void begin(const std::string& stage);
  void update(double fraction);  // 0..1, throttled to a few redraws a second
  void end(const std::string& stage, double seconds, bool queued = false);

 private:
  void clear();
  bool enabled_;
  bool drawn_ = false;
  std::string stage_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

bool stderr_is_terminal();

}  // namespace fhd::app
