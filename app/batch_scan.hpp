#pragma once
// One scan of a batch: reconstructed in this process (the child's side), and
// the command line that asks a child fhdrecon to do it (docs/batch.md).
#include <string>
#include <vector>

#include "app/batch_summary.hpp"
#include "app/recon_options.hpp"

namespace fhd::app {

struct ScanJob {
  std::string file, output;  // input scan; its output directory
  std::string fingerprint;   // options_fingerprint, stored in the report
  std::string q_cache;       // overrides the Q cache directory ("" = the solver options')
  SolverOptions solver;
  std::string device = "auto";
  bool progress = false;
};

// Reads, reconstructs and writes one scan in this process; the row comes from
// the results in memory (status ok). Throws on any failure.
BatchRow reconstruct_scan(const ScanJob& job);

// The child's side of `batch`: reconstruct_scan, with any error turned into a
// failed row; the row is written to `row_out` (JSON). Returns the exit status
// (0 ok, 2 the scan failed).
int run_scan_child(const ScanJob& job, const std::string& row_out);

// The hidden subcommand's arguments that make a child run `job` (after the
// program name): [--quiet] batch-scan FILE --scan-out DIR ...
std::vector<std::string> scan_child_args(const ScanJob& job, const std::string& row_out, bool quiet);

// Test-only fault injection (docs/batch.md): FHDRECON_TEST_SCAN_FAULT="abort:NAME"
// or "hang:NAME" (comma-separated) makes the child reconstructing a file whose
// name contains NAME abort or sleep forever, as a crash or hang inside a library would.
void test_fault_for(const std::string& file);

}  // namespace fhd::app
