#pragma once
// Timed stages. Each tells the front end's observer, runs, and is recorded.
// A stage's time runs from the end of the stage before it to the moment its
// own work is done: on a GPU that is when the device has finished it, not
// when the host has enqueued it (a stage that only enqueues would otherwise
// read short, and its time land in the next stage that waits). A StageClock
// takes those times from marks on the device's timeline, so the host never
// stops between stages (stopping cost the 128^3 case 16 ms of overlap between
// one stage's GPU work and the next one's host work); the times are filled in
// when the clock resolves, after the last stage.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "recon/device/device.hpp"
#include "recon/eval/result.hpp"
#include "recon/problem/options.hpp"

namespace fhd {

class StageClock {
 public:
  // Waits for the device's queue once: the marks' common origin.
  explicit StageClock(Device& dev);
  // A stage (log[index]) whose work ends at `end`.
  void add(std::vector<StageTime>& log, std::size_t index, std::unique_ptr<TimeMark> end);
  // Seconds to take off the last stage added (work inside it that is not its
  // own, such as scoring each iterate).
  void deduct_last(double seconds);
  Device& device() { return dev_; }
  // Each stage's time: from the previous one's end (or the origin) to its own
  // end, whichever of the host's return and the device's mark came later.
  // Returns the seconds from the origin to the last end.
  double resolve();

 private:
  struct Pending {
    std::vector<StageTime>* log;
    std::size_t index;
    double host_end;  // seconds since the origin
    std::unique_ptr<TimeMark> end;
    double deduct = 0;
  };
  double now() const;
  Device& dev_;
  std::chrono::steady_clock::time_point origin_;
  std::unique_ptr<TimeMark> origin_mark_;
  std::vector<Pending> pending_;
};

class StageRunner {
 public:
  // With a clock, stage times come from it (StageClock::resolve fills them);
  // without, they are the host's (work that ends on the host: gridding, files).
  StageRunner(const StageObserver& obs, std::vector<StageTime>& log, StageClock* clock = nullptr)
      : obs_(obs), log_(log), clock_(clock) {}

  template <class F>
  double run(const std::string& name, F&& work, const std::string& note = "") {
    if (obs_.begin) obs_.begin(name);
    const auto t0 = std::chrono::steady_clock::now();
    work();
    const double s = seconds_since(t0);
    if (obs_.end) obs_.end(name, s, clock_ && clock_->device().is_gpu());
    log_.push_back({name, s, note});
    if (clock_) clock_->add(log_, log_.size() - 1, clock_->device().mark());
    return s;
  }
  StageTime& last() { return log_.back(); }
  // Takes seconds off the last stage run (e.g. the PSNR record inside a solver's stage).
  void deduct_last(double seconds) {
    if (clock_)
      clock_->deduct_last(seconds);
    else
      log_.back().seconds -= seconds;
  }
  // A stage timed by the caller (work that may or may not have run).
  void record(const std::string& name, double seconds, const std::string& note) {
    if (obs_.begin) obs_.begin(name);
    if (obs_.end) obs_.end(name, seconds, false);
    log_.push_back({name, seconds, note});
  }

 private:
  const StageObserver& obs_;
  std::vector<StageTime>& log_;
  StageClock* clock_;
};

double sum_stages(const std::vector<StageTime>& log, std::size_t from);

}  // namespace fhd
