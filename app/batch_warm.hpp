#pragma once
// A warm batch worker's long-lived state (docs/batch.md, "Warm workers"): the
// devices (on a GPU its context, cuFFT plans' work areas and handles), made
// once and kept, and each trajectory's Q in memory by its content key, so
// scan after scan pays neither again. And the one call by which batch
// reconstructs a scan, warm or in a process of its own (reconstruct_for_batch).
#include <atomic>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/device.hpp"
#include "recon/pipeline/pipeline.hpp"
#include "recon/plan/qcache.hpp"

namespace fhd::app {

// Q by its cache key (recon/qcache.hpp q_key: a hash of every k value, the
// weights, the grid, the trig mode and the method), least recently used out
// past `max_bytes`. An entry larger than the budget is not kept. It shares the
// values with the plans that use them (SharedQ): keep and find copy nothing,
// where copying 134 MB each way cost ~65 ms apiece at 128^3 (issue 26).
// `bytes` counts what it holds; an entry it dropped lives on while a plan uses it.
class QMemoryCache : public QMemory {
 public:
  explicit QMemoryCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}
  SharedQ find(const std::string& key) override;
  void keep(const std::string& key, SharedQ q) override;
  std::size_t entries() const;
  std::size_t bytes() const;

 private:
  mutable std::mutex mutex_;
  std::list<std::pair<std::string, SharedQ>> entries_;  // most recent first
  std::size_t bytes_ = 0, max_bytes_;
};

// The memory a worker may give Q: a quarter of the memory available now,
// shared by `workers`, at most 4 GiB (16 entries at 128^3, 4 at 256^3).
std::size_t q_memory_budget(std::size_t workers);

// What a worker keeps between scans. Installs its Q memory for this process
// (recon's load_q/store_q consult it) while it lives.
class WarmState {
 public:
  WarmState(std::string device, DeviceOptions options, std::size_t q_memory_bytes);
  ~WarmState();
  WarmState(const WarmState&) = delete;
  WarmState& operator=(const WarmState&) = delete;

  // The devices, made at the first call (select_devices, --device). When that
  // fails the error reaches the scan that asked, and the next call tries again.
  Devices& devices();
  // Whether its scans run on a GPU: the devices' answer once made, until then
  // whether --device gpu was asked (auto finds out at the first scan). Any thread.
  bool expects_gpu() const { return gpu_; }
  const QMemoryCache& q_memory() const { return q_; }

 private:
  std::string device_;
  DeviceOptions options_;
  std::optional<Devices> devices_;
  std::atomic<bool> gpu_;
  QMemoryCache q_;
};

// How batch reconstructs one scan's coils: recon's reconstruct_coils on the
// worker's devices with the host work done while the scan was read, the call
// the recon command makes (app/cmd_recon.cpp). When the pipeline takes a plan
// cache (issue 23's operator layer), this one function is where batch hands it
// the worker's per-trajectory plans.
ReconResult reconstruct_for_batch(WarmState& warm, const std::vector<const Scan*>& coils,
                                  const ReconOptions& options, HostWork host);

}  // namespace fhd::app
