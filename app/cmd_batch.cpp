// fhdrecon batch FILES... --out DIR: reconstruct many scans (docs/batch.md);
// --shard I/N and --merge DIR... for clusters (docs/cluster.md). Two hidden
// subcommands are the processes batch starts: `batch-worker`, a warm worker
// that reconstructs scan after scan, and `batch-scan`, a child for one scan
// (--process-per-scan).
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <memory>

#include "app/batch.hpp"
#include "app/batch_scan.hpp"
#include "app/batch_server.hpp"
#include "app/batch_worker.hpp"
#include "io/atomic_file.hpp"
#include "app/commands.hpp"
#include "app/option_checks.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

// One line per scan on stdout, like recon's table: scripts read the CSV.
void print_rows(const std::vector<BatchRow>& rows) {
  std::printf("%-40s %-8s %-9s %10s %10s\n", "file", "status", "Q", "PSNR (dB)", "time (s)");
  for (const BatchRow& r : rows) {
    std::string psnr = r.iter_psnr ? fmt::format("{:.2f}", *r.iter_psnr) : "-";
    std::printf("%-40s %-8s %-9s %10s %10.3f\n", r.file.c_str(), r.status.c_str(),
                r.q_source.empty() ? "-" : r.q_source.c_str(), psnr.c_str(), r.t_total);
    if (!r.reason.empty() && r.status != "ok" && r.status != "skipped") std::printf("  reason: %s\n", r.reason.c_str());
  }
  std::fflush(stdout);
}

std::size_t count_not_ok(const std::vector<BatchRow>& rows) {
  std::size_t n = 0;
  for (const BatchRow& r : rows) n += r.status != "ok" && r.status != "skipped";
  return n;
}

void run_merge(const std::vector<std::string>& dirs, std::string out) {
  if (out.empty()) out = dirs.front();
  MergeResult m = merge_shards(dirs);
  make_output_dir(out);
  BatchLock lock(out, nullptr);
  write_summary(out, m.rows, {{"shards", m.shards}});
  print_rows(m.rows);
  spdlog::info("merged {} shard files into {}/summary.csv and summary.json", m.shards["merged_from"].get<int>(), out);
  std::string problems;
  if (!m.missing.empty()) problems += std::to_string(m.missing.size()) + " shards missing, ";
  if (!m.unfinished.empty()) problems += std::to_string(m.unfinished.size()) + " shards unfinished, ";
  std::size_t bad = count_not_ok(m.rows) - m.missing.size();
  if (bad) problems += std::to_string(bad) + " scans failed, ";
  if (!problems.empty())
    throw InputError("batch --merge: " + problems.substr(0, problems.size() - 2) + " (see " + out + "/summary.csv)");
}

// `batch ... 2>&1 | head -1` (or a tee that went) killed the batch at its
// next log line: no scans, no summary. A log whose reader has gone loses
// lines, not scans (as serve does).
void ignore_sigpipe() { ::signal(SIGPIPE, SIG_IGN); }

// A batch's child: what ends it is its batch or server (a time limit, a stop); its
// line sits in the batch's log, where "interrupted" read as if someone had.
void as_batch_child() {
  ignore_sigpipe();  // its own call: it does not rely on how its parent left SIGPIPE
  set_interrupt_label("fhdrecon batch worker: ended by its batch or server");
}

void run(BatchOptions o, const std::vector<std::string>& merge) {
  if (!merge.empty()) {
    if (!o.files.empty() || !o.files_from.empty() || !o.shard.empty())
      throw InputError("batch --merge takes shard directories only (no FILES, --files-from or --shard)");
    return run_merge(merge, o.out);
  }
  if (o.out.empty()) throw InputError("batch: --out DIR is required");
  ignore_sigpipe();
  warn_ignored_options(o.solver, 0);  // once here, not per scan
  o.progress = !global_options().quiet;
  BatchResult res = run_batch(o);
  print_rows(res.rows);
  spdlog::info("wrote {}", res.written);
  if (res.interrupted) throw std::runtime_error("batch: interrupted; wrote " + res.written);
  if (std::size_t failed = count_not_ok(res.rows))  // exit 2, as for any bad input
    throw InputError("batch: " + std::to_string(failed) + " of " + std::to_string(res.rows.size()) +
                     " scans failed (see " + res.written + ")");
}

// The options every hidden subcommand shares: those of job_option_args.
void add_job_options(CLI::App& sub, ScanJob& job) {
  sub.add_option("--fingerprint", job.fingerprint)->required();
  sub.add_option("--device", job.device);
  sub.add_option("--q-cache", job.q_cache);
  sub.add_option("--run-id", job.run_id);
  add_solver_options(sub, job.solver);
}

void add_batch_scan_command(CLI::App& app) {
  auto job = std::make_shared<ScanJob>();
  auto row_out = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("batch-scan", "one scan of a batch, in a child process (internal)");
  sub->group("");  // hidden: batch starts it
  sub->add_option("file", job->file)->required();
  sub->add_option("--scan-out", job->output)->required();
  sub->add_option("--row-out", *row_out)->required();
  add_job_options(*sub, *job);
  sub->callback([job, row_out] {
    as_batch_child();
    job->progress = !global_options().quiet;
    if (int code = run_scan_child(*job, *row_out)) std::exit(code);
  });
}

void add_batch_worker_command(CLI::App& app) {
  auto setup = std::make_shared<WorkerSetup>();
  CLI::App* sub = app.add_subcommand("batch-worker", "a warm worker of a batch (internal)");
  sub->group("");  // hidden: batch starts it
  sub->add_option("--fd", setup->fd)->required();
  sub->add_option("--q-memory", setup->q_memory_bytes)->required();
  add_job_options(*sub, setup->base);
  sub->callback([setup] {
    as_batch_child();
    setup->base.progress = !global_options().quiet;
    if (int code = run_batch_worker(*setup)) std::exit(code);
  });
}

// `serve`: warm workers that outlive batches (app/batch_server.hpp).
void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServerOptions>();
  CLI::App* sub = app.add_subcommand(
      "serve", "keep warm batch workers running and serve `fhdrecon batch --server PATH` until SIGINT or SIGTERM");
  sub->add_option("--socket", o->socket, "the Unix socket path to listen on (made readable by this user only)")
      ->required()
      ->check(non_empty_path());
  sub->add_option("--gpus", o->gpus,
                  "one worker per GPU: all | N (the first N) | LIST (e.g. 0,2); default all where the host has "
                  "several");
  sub->add_option("--jobs", o->jobs, "CPU workers running scans side by side (default 1)")->check(CLI::Range(1, 1024));
  sub->add_option("--device", o->device, "the workers: auto | cpu | gpu (as batch's --device)")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  sub->callback([o] { run_batch_server(*o); });
}

}  // namespace

void add_batch_command(CLI::App& app) {
  auto o = std::make_shared<BatchOptions>();
  auto merge = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("batch", "reconstruct many scan files into DIR/<scan>/ with a summary");
  sub->add_option("files", o->files, "scan files (fhdrecon HDF5, ISMRMRD, BART x.cfl with x_traj.cfl)")
      ->check(non_empty_path());
  sub->add_option("--files-from", o->files_from, "more scan files, one path per line")->check(non_empty_path());
  sub->add_option("--out", o->out, "output directory: DIR/<scan>/ per scan, DIR/summary.csv and .json")
      ->check(non_empty_path());
  add_solver_options(*sub, o->solver);
  sub->add_option("--device", o->device, "where to compute: auto | cpu | gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  sub->add_flag("--force", o->force, "reconstruct even scans whose outputs are up to date");
  sub->add_option("--scan-timeout", o->scan_timeout, "seconds one scan may take before it is killed (0 = no limit)")
      ->check(finite_number())
      ->check(number_in(0.0, 1e7))
      ->capture_default_str();
  sub->add_option("--gpus", o->gpus,
                  "one worker per GPU: all | N (the first N) | LIST (e.g. 0,2); default all where the host has "
                  "several");
  sub->add_option("--jobs", o->jobs, "CPU workers running scans side by side (default 1)")
      ->check(CLI::Range(1, 1024));
  sub->add_flag("--process-per-scan", o->process_per_scan,
                "a fresh process for every scan instead of warm workers (slower; nothing a scan leaves behind "
                "reaches the next)");
  sub->add_option("--server", o->server,
                  "hand the scans to the warm workers of `fhdrecon serve --socket PATH` instead of starting workers")
      ->check(non_empty_path());
  sub->add_option("--shard", o->shard, "I/N: only this task's share of the sorted file list (Slurm arrays)");
  sub->add_option("--merge", *merge, "build DIR/summary.* from the shard files in these directories")
      ->expected(1, -1)
      ->check(non_empty_path());
  sub->callback([o, merge] { run(*o, *merge); });
  add_batch_scan_command(app);
  add_batch_worker_command(app);
  add_serve_command(app);
}

}  // namespace fhd::app
