#pragma once
// Each subcommand lives in its own app/cmd_*.cpp and registers itself here.
// A callback reports failure by throwing: fhd::InputError (bad input, exit 2),
// fhd::DeviceError (GPU/CUDA problem, exit 3), anything else (exit 1). main()
// prints the message once, on one line.
#include <CLI/CLI.hpp>

namespace fhd::app {

// Options every command understands (set by main before callbacks run).
struct GlobalOptions {
  bool quiet = false;    // --quiet: no progress, warnings and errors only
  bool verbose = false;  // --verbose: debug log
};
const GlobalOptions& global_options();

void add_recon_options(CLI::App& app);  // the default command: fhdrecon [options]
void add_synth_command(CLI::App& app);
void add_batch_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_bench_nufft_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_validate_command(CLI::App& app);

}  // namespace fhd::app
