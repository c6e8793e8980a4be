#include "recon/eval/stages.hpp"

#include <algorithm>

namespace fhd {

StageClock::StageClock(Device& dev) : dev_(dev) {
  dev_.synchronize();
  origin_ = std::chrono::steady_clock::now();
  origin_mark_ = dev_.mark();
}

double StageClock::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void StageClock::add(std::vector<StageTime>& log, std::size_t index, std::unique_ptr<TimeMark> end) {
  pending_.push_back({&log, index, now(), std::move(end)});
}

void StageClock::deduct_last(double seconds) {
  if (!pending_.empty()) pending_.back().deduct += seconds;
}

double StageClock::resolve() {
  double previous = 0.0;
  for (Pending& p : pending_) {
    const double end = std::max({p.host_end, p.end->since(*origin_mark_), previous});
    (*p.log)[p.index].seconds = end - previous - p.deduct;
    previous = end;
  }
  pending_.clear();
  return previous;
}

double sum_stages(const std::vector<StageTime>& log, std::size_t from) {
  double s = 0;
  for (std::size_t i = from; i < log.size(); ++i) s += log[i].seconds;
  return s;
}

}  // namespace fhd
