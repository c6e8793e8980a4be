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
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/batch_summary.hpp"
#include "app/batch_workers.hpp"

namespace fhd::app {

struct PoolTask {
  std::size_t id;
  std::string file, output;
  // This batch's own, where they differ from the worker's start options (a
  // server's workers outlive batches): the run's id and its private Q cache.
  std::string run_id, q_cache;
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

// The workers themselves. With `keep`, for workers that outlive one batch (the
// server, app/batch_server.hpp): each run() feeds them a batch's tasks as
// run_warm_workers does and leaves them running, idle, when it is done.
// Without, a worker is told to quit once nothing is left for it. A run that
// is stopped (a signal, or `stop` saying so) ends them; the next run starts
// new ones. close(), and the destructor, tell them to quit and wait.
class WorkerPool {
 public:
  using Done = std::function<void(std::size_t id, std::size_t worker, const ScanOutcome&)>;
  WorkerPool(std::string exe, std::vector<std::string> worker_args, std::vector<Worker> workers, bool keep = true);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  bool run(const std::vector<PoolTask>& tasks, double timeout_s, const Done& done,
           const std::function<bool()>& stop = {});
  void close();
  const std::vector<std::string>& worker_args() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Scans a worker holds at once: one per stage (read, reconstruct, write).
constexpr std::size_t kWorkerDepth = 3;

}  // namespace fhd::app
