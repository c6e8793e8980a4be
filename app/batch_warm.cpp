#include "app/batch_warm.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "io/scan_checks.hpp"

namespace fhd::app {

namespace {
std::size_t bytes_of(const SharedQ& q) { return q ? q->size() * sizeof(cfloat) : 0; }
}  // namespace

SharedQ QMemoryCache::find(const std::string& key) {
  std::lock_guard<std::mutex> g(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().second;  // shared, read-only: the plan uploads from it
    }
  return nullptr;
}

void QMemoryCache::keep(const std::string& key, SharedQ q) {
  if (!q) return;
  const std::size_t size = bytes_of(q);
  std::lock_guard<std::mutex> g(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == key) {
      bytes_ -= bytes_of(it->second);
      entries_.erase(it);
      break;
    }
  if (size > max_bytes_) return;
  while (bytes_ + size > max_bytes_) {
    bytes_ -= bytes_of(entries_.back().second);
    entries_.pop_back();
  }
  entries_.emplace_front(key, std::move(q));
  bytes_ += size;
}

std::size_t QMemoryCache::entries() const {
  std::lock_guard<std::mutex> g(mutex_);
  return entries_.size();
}

std::size_t QMemoryCache::bytes() const {
  std::lock_guard<std::mutex> g(mutex_);
  return bytes_;
}

std::size_t q_memory_budget(std::size_t workers) {
  const std::size_t cap = std::size_t(4) << 30;
  const std::size_t available = available_host_bytes();
  if (available == 0) return cap / 4;  // unknown: 1 GiB
  return std::min(cap, available / (4 * std::max<std::size_t>(1, workers)));
}

WarmState::WarmState(std::string device, DeviceOptions options, std::size_t q_memory_bytes)
    : device_(std::move(device)), options_(std::move(options)), gpu_(device_ == "gpu"), q_(q_memory_bytes) {
  set_q_memory(&q_);
}

WarmState::~WarmState() {
  set_q_memory(nullptr);
  if (devices_) release_devices(std::move(*devices_), options_).get();
}

Devices& WarmState::devices() {
  if (!devices_) {
    devices_ = select_devices(device_, options_);
    gpu_ = devices_->is_gpu();
  }
  return *devices_;
}

ReconResult reconstruct_for_batch(WarmState& warm, const std::vector<const Scan*>& coils,
                                  const ReconOptions& options, HostWork host) {
  Devices& devs = warm.devices();
  return reconstruct_coils(devs.main(), coils, options, std::move(host), devs.others());
}

}  // namespace fhd::app
