// fhdrecon batch FILES... --out DIR: reconstruct many scans (docs/batch.md).
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "app/option_checks.hpp"
#include "app/batch.hpp"
#include "app/commands.hpp"
#include "app/device.hpp"
#include "recon/error.hpp"

namespace fhd::app {
namespace {

// One line per scan on stdout, like recon's table: scripts read the CSV.
void print_rows(const std::vector<BatchRow>& rows) {
  std::printf("%-40s %-8s %-9s %10s %10s\n", "file", "status", "Q", "PSNR (dB)", "time (s)");
  for (const BatchRow& r : rows) {
    std::string psnr = r.iter_psnr ? fmt::format("{:.2f}", *r.iter_psnr) : "-";
    std::printf("%-40s %-8s %-9s %10s %10.3f\n", r.file.c_str(), r.status.c_str(),
                r.q_source.empty() ? "-" : r.q_source.c_str(), psnr.c_str(), r.t_total);
    if (r.status == "failed") std::printf("  reason: %s\n", r.reason.c_str());
  }
  std::fflush(stdout);
}

void run(BatchOptions o) {
  o.progress = !global_options().quiet;
  std::unique_ptr<Backend> be = select_backend(o.device);
  std::vector<BatchRow> rows = run_batch(o, *be);
  print_rows(rows);
  std::size_t failed = 0;
  for (const BatchRow& r : rows) failed += r.status == "failed";
  spdlog::info("wrote {0}/summary.csv and {0}/summary.json", o.out);
  if (failed)  // exit 2, as for any bad input
    throw InputError("batch: " + std::to_string(failed) + " of " + std::to_string(rows.size()) +
                     " scans failed (see " + o.out + "/summary.csv)");
}

}  // namespace

void add_batch_command(CLI::App& app) {
  auto o = std::make_shared<BatchOptions>();
  CLI::App* sub = app.add_subcommand("batch", "reconstruct many scan files into DIR/<scan>/ with a summary");
  sub->add_option("files", o->files, "scan files (fhdrecon HDF5, ISMRMRD, BART x.cfl with x_traj.cfl)")
      ->required()
      ->check(non_empty_path());
  sub->add_option("--out", o->out, "output directory: DIR/<scan>/ per scan, DIR/summary.csv and .json")
      ->required();
  add_solver_options(*sub, o->solver);
  sub->add_option("--device", o->device, "where to compute: auto | cpu | gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  sub->add_flag("--force", o->force, "reconstruct even scans whose outputs are up to date");
  sub->callback([o] { run(*o); });
}

}  // namespace fhd::app
