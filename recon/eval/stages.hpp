#pragma once
// Timed stages: each tells the front end's observer, runs, and is recorded
// with its time taken when the device has finished it (a GPU stage that only
// enqueues work would otherwise read short, and its time land in the next
// stage that waits).
#include <chrono>
#include <string>
#include <vector>

#include "recon/device/device.hpp"
#include "recon/eval/result.hpp"
#include "recon/problem/options.hpp"

namespace fhd {

class StageRunner {
 public:
  StageRunner(const StageObserver& obs, std::vector<StageTime>& log, Device* dev = nullptr)
      : obs_(obs), log_(log), dev_(dev) {}

  template <class F>
  double run(const std::string& name, F&& work, const std::string& note = "") {
    if (obs_.begin) obs_.begin(name);
    const auto t0 = std::chrono::steady_clock::now();
    work();
    if (dev_) dev_->synchronize();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (obs_.end) obs_.end(name, s);
    log_.push_back({name, s, note});
    return s;
  }
  StageTime& last() { return log_.back(); }
  // A stage timed by the caller (work that may or may not have run).
  void record(const std::string& name, double seconds, const std::string& note) {
    if (obs_.begin) obs_.begin(name);
    if (obs_.end) obs_.end(name, seconds);
    log_.push_back({name, seconds, note});
  }

 private:
  const StageObserver& obs_;
  std::vector<StageTime>& log_;
  Device* dev_;
};

double sum_stages(const std::vector<StageTime>& log, std::size_t from);

}  // namespace fhd
