#include "app/batch.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>

#include "app/batch_pool.hpp"
#include "app/batch_scan.hpp"
#include "app/batch_server.hpp"
#include "app/batch_warm.hpp"
#include "app/batch_worker.hpp"
#include "app/batch_workers.hpp"
#include "app/device.hpp"
#include "app/outputs.hpp"
#include "core/clock.hpp"
#include "core/utf8.hpp"
#include "io/atomic_file.hpp"
#include "io/figures.hpp"
#include "core/error.hpp"

using nlohmann::json;

namespace fhd::app {
namespace {

// The scans this run is responsible for, with their output directories (the
// batch's share of the file list; not a recon Plan).
struct ScanList {
  std::vector<std::string> files, outputs;  // this run's scans
  std::vector<std::size_t> positions;       // in the (sorted, with --shard) full list
  std::optional<Shard> shard;
  std::size_t files_total = 0;
  std::string list_hash;
};

// A --cache-dir in a scan's DIR/<name> lost that scan at its swap (and the
// directory for every later run): refused before any work.
void check_cache_outside_scans(const BatchOptions& o, const std::vector<std::string>& files,
                               const std::vector<std::string>& names) {
  if (o.solver.no_cache || o.solver.cache_dir.empty()) return;
  const std::string entry = entry_within(o.solver.cache_dir, o.out);
  if (entry.empty() || entry == ".") return;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == entry)
      check_cache_outside(o.solver.cache_dir, o.out + "/" + entry,
                          o.out + "/" + entry + ", the output directory of " + files[i]);
}

ScanList make_scan_list(const BatchOptions& o) {
  std::vector<std::string> all = o.files;
  if (!o.files_from.empty())
    for (std::string& f : read_file_list(o.files_from)) all.push_back(std::move(f));
  if (all.empty()) throw InputError("batch: no scan files (give FILES or --files-from)");
  ScanList p;
  if (!o.shard.empty()) {
    p.shard = parse_shard(o.shard);
    std::sort(all.begin(), all.end());  // every task sorts the same list the same way
    p.list_hash = list_hash(all);
  }
  p.files_total = all.size();
  const std::vector<std::string> names = output_names(all);
  check_inputs_outside_outputs(all, names, o.out);  // before any work: an input there would be overwritten
  check_cache_outside_scans(o, all, names);
  p.positions = shard_positions(all.size(), p.shard.value_or(Shard{}));
  for (std::size_t i : p.positions) {
    p.files.push_back(all[i]);
    p.outputs.push_back(o.out + "/" + names[i]);
  }
  return p;
}

// A skipped row when the scan's outputs are up to date (and their report
// reads), else nothing: the scan must be reconstructed.
std::optional<BatchRow> up_to_date_row(const BatchOptions& o, const BatchRow& base, const std::string& fp) {
  if (o.force) return std::nullopt;
  std::string why = why_not_up_to_date(base.file, base.output, fp);
  if (!why.empty()) {
    spdlog::info("{}: reconstructing ({})", base.file, why);
    return std::nullopt;
  }
  BatchRow row = base;
  try {
    std::ifstream f(base.output + "/report.json");
    fill_from_report(row, json::parse(f));
  } catch (const std::exception& e) {
    spdlog::info("{}: reconstructing ({})", base.file, e.what());
    return std::nullopt;
  }
  row.status = "skipped";
  row.reason = "outputs up to date";
  return row;
}

}  // namespace

std::vector<Worker> batch_workers(const BatchOptions& o) {
  if (o.gpus.empty()) {
    // A host with several GPUs: one worker on each unless told otherwise.
    if (o.jobs == 0 && o.device != "cpu" && cuda_built() && visible_gpu_count() > 1) {
      spdlog::info("batch: {} GPUs visible: one worker on each (--gpus all; --gpus 1 for one)", visible_gpu_count());
      return gpu_workers("all");
    }
    return cpu_workers(std::max(1, o.jobs));
  }
  if (o.device == "cpu") throw InputError("--gpus " + o.gpus + " with --device cpu: choose one");
  if (o.jobs != 0) throw InputError("--jobs with --gpus: --gpus runs one worker per GPU");
  return gpu_workers(o.gpus);
}

// Refuses --device gpu up front where no GPU can be used (each scan failed
// with the same line before). Without a context: this process computes nothing
// on the GPU, and making one cost the batch 0.33-0.46 s before its workers
// started and 0.1 s at its exit (docs/batch.md); the workers' own devices run
// the full probe.
void check_batch_device(const BatchOptions& o, const std::string& command) {
  std::string why;
  if (o.device == "gpu" && !gpu_available(&why, /*without_context=*/true))
    throw DeviceError(command + " --device gpu: no usable GPU: " + why);
}

namespace {

// Names this run in the reports it writes (report.json's batch.run_id).
std::string new_run_id() {
  std::random_device rd;
  return fnv1a_hex(std::to_string(rd()) + "." + std::to_string(rd()) + "." + std::to_string(::getpid()));
}

// The row of a scan whose process ended: the row it sent, when it did; else,
// when this run's outputs are in place (it ended after swapping them in), the
// row their report gives, so the row and the outputs agree; else why it ended.
BatchRow ended_row(const BatchRow& base, const std::optional<BatchRow>& sent, const ChildEnd& end, bool started,
                   const std::string& run_id, double timeout_s) {
  if (sent) return *sent;
  if (std::optional<BatchRow> kept = outputs_of_run(base.file, base.output, run_id)) return *kept;
  BatchRow row = base;
  row.status = "failed";
  if (end.interrupted)
    row.reason = started ? "not finished: batch interrupted" : "not run: batch interrupted";
  else
    row.reason = describe_end(end, timeout_s);
  return row;
}

// The row a child process wrote, if it got that far.
std::optional<BatchRow> child_row(const std::string& row_file) {
  std::optional<BatchRow> row;
  try {
    std::ifstream f(row_file);
    if (f) row = row_from_json(json::parse(f));
  } catch (const std::exception&) {
  }
  std::error_code ec;
  std::filesystem::remove(row_file, ec);
  return row;
}

void log_row(const BatchRow& r, std::size_t done, std::size_t total, const Worker& w) {
  if (r.status == "failed") {
    // A reader's reason starts with the file already ("a.h5: does not exist").
    const bool named = r.reason.rfind(r.file + ": ", 0) == 0;
    spdlog::error("[{}/{}] {}", done, total, named ? r.reason : r.file + ": " + r.reason);
  }
  else
    spdlog::info("[{}/{}] {} {} on {} ({:.2f} s)", done, total, r.file, r.status, w.label, r.t_total);
}

// The scans to reconstruct, as indices into the rows.
using Todo = std::vector<std::size_t>;
using OnEnd = std::function<void(std::size_t k, std::size_t worker, const BatchRow& row, bool interrupted)>;

// A fresh child process per scan (--process-per-scan).
bool run_process_per_scan(const BatchOptions& o, const ScanJob& base, const std::vector<BatchRow>& rows,
                          const Todo& todo, const std::vector<Worker>& workers, const OnEnd& on_end) {
  TempDir row_dir("rows");
  auto row_file = [&](std::size_t k) { return row_dir.path() + "/" + std::to_string(k) + ".json"; };
  std::vector<ChildTask> tasks;
  for (std::size_t k : todo) {
    ScanJob job = base;
    job.file = rows[k].file;
    job.output = rows[k].output;
    tasks.push_back({k, scan_child_args(job, row_file(k), !job.progress)});
  }
  const std::string exe = o.exe.empty() ? self_exe() : o.exe;
  return run_children(exe, tasks, workers, o.scan_timeout, [&](std::size_t k, std::size_t w, const ChildEnd& e) {
    on_end(k, w, ended_row(rows[k], child_row(row_file(k)), e, true, base.run_id, o.scan_timeout), e.interrupted);
  });
}

// A server's "ok" counts only when this run's outputs are in DIR/<name>: a
// server that sees another filesystem (systemd's PrivateTmp, a container)
// wrote them elsewhere, and a peer that is not fhdrecon wrote none.
BatchRow checked_served_row(const BatchRow& base, const BatchRow& row, const std::string& run_id) {
  if (row.status != "ok" || outputs_of_run(base.file, base.output, run_id)) return row;
  BatchRow failed = base;
  failed.status = "failed";
  failed.reason = "the server reported outputs that are not in " + base.output +
                  " (does the server see the same filesystem?)";
  return failed;
}

// How a warm worker's scan ended (its own, or its server's: `served`), as its row.
WorkerPool::Done row_of_outcome(const BatchOptions& o, const ScanJob& base, const std::vector<BatchRow>& rows,
                                const OnEnd& on_end, bool served = false) {
  return [&o, &base, &rows, &on_end, served](std::size_t k, std::size_t w, const ScanOutcome& out) {
    BatchRow row = ended_row(rows[k], out.row, out.end, out.started, base.run_id, o.scan_timeout);
    if (served) row = checked_served_row(rows[k], row, base.run_id);
    on_end(k, w, row, out.end.interrupted);
  };
}

// Warm workers: one process per worker slot, scan after scan.
bool run_warm(const BatchOptions& o, const ScanJob& base, const std::vector<BatchRow>& rows, const Todo& todo,
              const std::vector<Worker>& workers, const OnEnd& on_end) {
  std::vector<PoolTask> tasks;
  for (std::size_t k : todo) tasks.push_back({k, rows[k].file, rows[k].output, "", ""});
  WorkerSetup setup{base, q_memory_budget(workers.size()), 3};
  const std::string exe = o.exe.empty() ? self_exe() : o.exe;
  return run_warm_workers(exe, worker_args(setup, !base.progress), tasks, workers, o.scan_timeout,
                          row_of_outcome(o, base, rows, on_end));
}

// A resident server's workers (--server): the same tasks, sent to them.
bool run_served(ServerLink& link, const BatchOptions& o, const ScanJob& base, const std::vector<BatchRow>& rows,
                const Todo& todo, std::vector<Worker>& workers, const OnEnd& on_end) {
  std::vector<PoolTask> tasks;
  for (std::size_t k : todo) tasks.push_back({k, rows[k].file, rows[k].output, base.run_id, base.q_cache});
  ScanJob options = base;  // the workers' options: what every batch with these options shares
  options.run_id.clear();
  options.q_cache.clear();
  // The server's working directory is not ours (the link sends the tasks' paths absolute too).
  if (!options.solver.cache_dir.empty())
    options.solver.cache_dir = std::filesystem::absolute(options.solver.cache_dir).string();
  return link.run(job_option_args(options), tasks, o.scan_timeout, workers,
                  row_of_outcome(o, base, rows, on_end, /*served=*/true));
}

// --server: the server runs the workers and owns their device.
void check_server_options(const BatchOptions& o) {
  if (o.server.empty()) return;
  if (!o.gpus.empty() || o.jobs != 0)
    throw InputError("batch --server runs on the server's workers: give --gpus or --jobs to fhdrecon serve instead");
  if (o.process_per_scan) throw InputError("batch --server with --process-per-scan: choose one");
}

// The files the batch writes at its end, checked before any scan runs: a
// directory at DIR/summary.json was found after every scan, and left
// summary.csv and summary.json disagreeing.
void check_summary_writable(const std::string& out, const std::optional<Shard>& shard) {
  if (shard) return check_writable_file(shard_path(out, shard->index, shard->count), "shard file");
  for (const char* name : {"summary.csv", "summary.json", "overview.png"})
    check_writable_file(out + "/" + name, "batch summary");
}

}  // namespace

BatchResult run_batch(const BatchOptions& o) {
  const ScanList list = make_scan_list(o);
  check_server_options(o);
  std::optional<ServerLink> server;
  if (!o.server.empty()) server.emplace(o.server);  // before anything is written: nothing there, one line
  std::vector<Worker> workers = server ? std::vector<Worker>{} : batch_workers(o);
  const auto t0 = std::chrono::steady_clock::now();
  if (!server) check_batch_device(o);
  spdlog::debug("batch: device checked in {:.3f} s", seconds_since(t0));
  const bool made_out = !std::filesystem::exists(o.out);
  make_output_dir(o.out);
  BatchLock lock(o.out, list.shard ? &*list.shard : nullptr, made_out);
  check_summary_writable(o.out, list.shard);
  const std::string fp = options_fingerprint(o.solver, o.device);
  std::optional<TempDir> private_cache;
  if (o.solver.no_cache) private_cache.emplace("q");
  ScanJob base{"", "", fp, private_cache ? private_cache->path() : "", o.solver, o.device, new_run_id(),
               o.progress && workers.size() == 1};

  BatchResult res;
  Todo todo;
  for (std::size_t k = 0; k < list.files.size(); ++k) {
    BatchRow row;
    row.file = list.files[k];
    row.output = list.outputs[k];
    row.status = "pending";
    if (!is_utf8(row.file) || !is_utf8(row.output)) {  // a worker gets its name in JSON and must open exactly it
      row.status = "failed";
      row.reason = "the file name is not UTF-8: the workers' messages and the reports are JSON text; rename it";
      res.rows.push_back(row);
      continue;
    }
    std::optional<BatchRow> kept = up_to_date_row(o, row, fp);
    res.rows.push_back(kept ? *kept : row);
    if (!kept) todo.push_back(k);
  }

  ShardFile shard;
  if (list.shard) {
    shard = {list.shard->index, list.shard->count, list.files_total, list.list_hash, fp, "running",
             list.positions, res.rows};
    write_shard(o.out, shard);
  }
  std::size_t finished = res.rows.size() - todo.size();
  // Each scan's overview tile is read as its row comes, while the others run:
  // read after the last row, eight of them took 0.03 s of the batch's end.
  std::vector<SheetTile> thumbnails(res.rows.size());
  const OnEnd on_end = [&](std::size_t k, std::size_t w, const BatchRow& row, bool interrupted) {
    res.rows[k] = row;
    log_row(row, ++finished, res.rows.size(), workers[w]);
    // Only the tiles the overview draws: 64 KB each at 128^3, kept to the end.
    if (row.status == "ok" && !list.shard && k < kSheetMaxTiles && figures_available())
      thumbnails[k] = scan_thumbnail(row.output);
    if (list.shard && !(interrupted && row.status == "failed")) {  // a scan the stop cut short stays pending
      shard.rows[k] = row;
      write_shard(o.out, shard);
    }
  };
  const bool complete = o.process_per_scan ? run_process_per_scan(o, base, res.rows, todo, workers, on_end)
                        : server           ? run_served(*server, o, base, res.rows, todo, workers, on_end)
                                           : run_warm(o, base, res.rows, todo, workers, on_end);
  res.interrupted = !complete;
  if (list.shard) {
    shard.state = complete ? "done" : "interrupted";
    write_shard(o.out, shard);
    res.written = shard_path(o.out, shard.index, shard.count);
  } else {
    for (BatchRow& r : res.rows)
      if (r.status == "pending") r.status = "failed", r.reason = "not run: batch interrupted";
    write_summary(o.out, res.rows, nlohmann::json::object(), thumbnails);
    res.written = o.out + "/summary.csv";
  }
  return res;
}

}  // namespace fhd::app
