#pragma once
// The warm worker's side of batch (docs/batch.md, "Warm workers"): one process
// that keeps its WarmState (backend, Q in memory) and reconstructs scan after
// scan as the batch sends them (app/batch_protocol.hpp), in three stages on
// three threads: reading the next scan overlaps the current reconstruction,
// and writing overlaps the next. Rows go back in the order the scans came.
#include <cstddef>
#include <string>
#include <vector>

#include "app/batch_scan.hpp"

namespace fhd::app {

struct WorkerSetup {
  ScanJob base;                    // every option of a scan but its file and output
  std::size_t q_memory_bytes = 0;  // the budget of its Q memory (q_memory_budget)
  int fd = 3;                      // its end of the socket pair
};

// Serves scans until the batch says quit or goes away; returns the exit status.
int run_batch_worker(const WorkerSetup& setup);

// The hidden subcommand's arguments that start a worker (after the program
// name): [--quiet] batch-worker --fd N --q-memory BYTES [the job's options].
std::vector<std::string> worker_args(const WorkerSetup& setup, bool quiet);

}  // namespace fhd::app
