#pragma once
// One scan of a batch in three steps (read, reconstruct, write: a warm worker
// overlaps them across scans, app/batch_worker.hpp), all three in one call for
// a process of its own (the child's side), and the command lines that start a
// child or a worker (docs/batch.md).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/batch_summary.hpp"
#include "app/batch_warm.hpp"
#include "app/outputs.hpp"
#include "app/recon_options.hpp"
#include "app/source.hpp"

namespace fhd::app {

struct ScanJob {
  std::string file, output;  // input scan; its output directory
  std::string fingerprint;   // options_fingerprint, stored in the report
  std::string q_cache;       // overrides the Q cache directory ("" = the solver options')
  SolverOptions solver;
  std::string device = "auto";
  std::string run_id;        // this batch run's, stored in the report (outputs_of_run)
  bool progress = false;
};

// A scan read and validated, its output directory planned and locked
// (read_batch_scan), then the reconstruction's host work done (prepare_batch_scan:
// recon's prepare_host_work, the phantom's reference image and the density
// weights, with beside_gpu the band-limited ceiling begun), so a warm worker
// does all of it while the previous scan is reconstructed.
struct ReadScan {
  std::string file;                    // the scan file, named by its errors
  std::unique_ptr<Source> source;      // the options' truth points into it: it never moves
  OutputPlan plan;
  std::unique_ptr<Progress> progress;  // the options' observer draws on it
  ReconOptions options;
  std::vector<const Scan*> coils;
  HostWork host;
  SharedQ q;  // its Q, read from the cache beside the previous scan (null: a miss)
};
ReadScan read_batch_scan(const ScanJob& job);
void prepare_batch_scan(ReadScan& scan, bool beside_gpu);

// Its reconstruction (taking the host work) and the report that goes with it.
struct ScanResult {
  ReconResult result;
  nlohmann::json report;
  int coils = 1;
};
ScanResult reconstruct_batch_scan(WarmState& warm, ReadScan& scan, const ScanJob& job);

// Writes the output set (swapped into place whole) and returns the row (status
// ok), built from the results in memory.
BatchRow write_batch_scan(const ReadScan& scan, const ScanResult& result, const ScanJob& job);

// The three steps in this process with a fresh WarmState. Throws on any
// failure (the earlier outputs are then left as they were).
BatchRow reconstruct_scan(const ScanJob& job);

// The row of a scan whose outputs this run (`run_id`) swapped into place, built
// from their report.json; nothing when DIR holds no such set. For a scan whose
// process ended before its row reached the batch: the row then says what the
// outputs are.
std::optional<BatchRow> outputs_of_run(const std::string& file, const std::string& output, const std::string& run_id);

// The child's side of `batch`: reconstruct_scan, with any error turned into a
// failed row; the row is written to `row_out` (JSON). Returns the exit status
// (0 ok, 2 the scan failed).
int run_scan_child(const ScanJob& job, const std::string& row_out);

// A child's log options: --verbose where this process logs debug lines (the
// batch's --verbose reaches every worker and scan process), else --quiet when
// `quiet`.
std::vector<std::string> log_args(bool quiet);

// The hidden subcommand's arguments that make a child run `job` (after the
// program name): [--verbose | --quiet] batch-scan FILE --scan-out DIR ...
std::vector<std::string> scan_child_args(const ScanJob& job, const std::string& row_out, bool quiet);

// Every option of `job` but its file and output, as the hidden subcommands take
// them: --fingerprint ... --device ... and the solver options.
std::vector<std::string> job_option_args(const ScanJob& job);

// Test-only fault injection (docs/batch.md): FHDRECON_TEST_SCAN_FAULT="abort:NAME"
// or "hang:NAME" (comma-separated) makes the process reconstructing a file whose
// name contains NAME abort or sleep forever, as a crash or hang inside a library
// would; "interrupt:NAME" makes it send SIGINT to the batch right after NAME's
// outputs are swapped in, then wait, as an interrupt at that moment would.
void test_fault_for(const std::string& file);
void test_fault_after_write(const std::string& file);

}  // namespace fhd::app
