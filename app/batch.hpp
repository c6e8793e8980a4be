#pragma once
// The batch job (docs/batch.md, docs/cluster.md): planning in batch_plan, one
// scan in batch_scan, run by warm workers (batch_pool: the batch's side,
// batch_worker: the worker's) or one child process per scan (batch_workers),
// rows and summaries in batch_summary. Coils are combined in recon
// (reconstruct_coils, through batch_warm's reconstruct_for_batch).
#include <string>
#include <vector>

#include "app/batch_plan.hpp"
#include "app/batch_summary.hpp"
#include "app/batch_workers.hpp"
#include "app/recon_options.hpp"
#include "app/source.hpp"
#include "recon/device/device.hpp"
#include "recon/pipeline/pipeline.hpp"

namespace fhd::app {

// Every coil of a source: scan, then more_coils.
std::vector<const Scan*> coil_list(const Source& src);

struct BatchOptions {
  std::vector<std::string> files;
  std::string files_from;  // --files-from: more scans, one path per line
  std::string out;
  SolverOptions solver;
  std::string device = "auto";
  bool force = false;
  bool progress = false;       // let a lone child draw its progress line (main's --quiet turns it off)
  std::string shard;           // --shard I/N ("" = every file, in the order given)
  std::string gpus;            // --gpus all|N|LIST ("" = all where the host has several, else one worker)
  int jobs = 0;                // --jobs N: CPU workers (without --gpus); 0 = not given (one)
  bool process_per_scan = false;  // a fresh child process per scan instead of warm workers
  double scan_timeout = 3600;  // seconds per scan, 0 = no limit
  std::string exe;             // the fhdrecon the children run ("" = this executable)
  std::string server;          // --server PATH: a resident server's workers (app/batch_server.hpp) run the scans
};

struct BatchResult {
  std::vector<BatchRow> rows;
  bool interrupted = false;  // SIGINT/SIGTERM: rows not run say so
  std::string written;       // the summary or shard file written
};

// Runs every scan (a shard's share with --shard) on warm workers, or each in a
// child process of its own, with a time limit; a failure, crash or timeout is
// recorded in its row and the batch goes on. Writes DIR/summary.csv and
// DIR/summary.json, or with --shard the shard file merge reads, always, also
// when interrupted. Refuses before any work: a second batch into DIR,
// --device gpu without a usable GPU, a file list that is not one.
BatchResult run_batch(const BatchOptions& o);

// The workers these options ask for (--gpus, --jobs, --device; the batch's and
// the server's): one per GPU where the host has several, unless told otherwise.
std::vector<Worker> batch_workers(const BatchOptions& o);

// Refuses --device gpu up front where no GPU can be used, naming `command`.
void check_batch_device(const BatchOptions& o, const std::string& command = "batch");

}  // namespace fhd::app
