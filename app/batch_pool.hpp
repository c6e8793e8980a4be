#pragma once
// The batch's side of warm workers (docs/batch.md, "Warm workers"): one
// persistent worker process per GPU or CPU slot (app/batch_worker.hpp), fed
// scans over a socket, up to three at a time (one being read, one
// reconstructed, one written). Isolation stays that of a process per scan:
// - a worker past the time limit on its oldest scan is killed (SIGTERM, then
//   SIGKILL), that scan is `timed out`, the scans it held go to a new worker;
// - a worker that dies holding one scan costs that scan (`crashed: signal N`);
//   holding several, each of them is run again alone in a fresh worker, so the
//   one that crashes again costs its own row and the others finish.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/batch_summary.hpp"
#include "app/batch_workers.hpp"

namespace fhd::app {

struct PoolTask {
  std::size_t id;
  std::string file, output;
};

// How a scan ended: the worker's row, or how its worker ended without one.
struct ScanOutcome {
  std::optional<BatchRow> row;
  ChildEnd end;          // without a row
  bool started = false;  // its reconstruction had begun (an interrupt: "not finished" rather than "not run")
};

// Runs every task on `workers` (each started as `exe worker_args(fd 3)...` with
// the worker's environment) and calls `done` as each scan ends, in this thread.
// A scan's time limit (timeout_s, 0 = none) runs from the moment it is its
// worker's oldest: everything sent before it has come back, so its worker is
// busy with it alone. SIGINT/SIGTERM stop it: the workers are ended, their
// scans reported with end.interrupted, and it returns false; true when every
// task ran.
bool run_warm_workers(const std::string& exe, const std::vector<std::string>& worker_args,
                      const std::vector<PoolTask>& tasks, const std::vector<Worker>& workers, double timeout_s,
                      const std::function<void(std::size_t id, std::size_t worker, const ScanOutcome&)>& done);

// Scans a worker holds at once: one per stage (read, reconstruct, write).
constexpr std::size_t kWorkerDepth = 3;

}  // namespace fhd::app
