#include "app/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace fhd::app {

void setup_logging(bool quiet, bool verbose) {
  auto logger = spdlog::stderr_color_mt("fhdrecon");
  // The debug log carries milliseconds: its lines time the phases outside the
  // stage table (start-up, synthesis, outputs) for wall-time work.
  logger->set_pattern(verbose ? "[%H:%M:%S.%e] %^%l%$: %v" : "[%H:%M:%S] %^%l%$: %v");
  logger->set_level(quiet ? spdlog::level::warn : verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

bool stderr_is_terminal() { return isatty(fileno(stderr)) != 0; }

Progress::Progress(bool enabled) : enabled_(enabled && stderr_is_terminal()) {}

void Progress::begin(const std::string& stage) {
  stage_ = stage;
  start_ = last_draw_ = std::chrono::steady_clock::now();
  spdlog::debug("{} ...", stage);
}

void Progress::update(double fraction) {
  if (!enabled_ || fraction <= 0) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200) && fraction < 1) return;
  last_draw_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double eta = elapsed * (1 - fraction) / fraction;
  std::fprintf(stderr, "\r  %-22s %3.0f%%  ETA %5.1f s ", stage_.c_str(), 100 * fraction, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r%60s\r", "");
  drawn_ = false;
}

void Progress::end(const std::string& stage, double seconds, bool queued) {
  clear();
  // A stage queued on the GPU is not done yet: its own time is in the table.
  if (queued)
    spdlog::info("{:<22} queued in {:.3f} s", stage, seconds);
  else
    spdlog::info("{:<22} {:8.3f} s", stage, seconds);
}

}  // namespace fhd::app
