#include "app/batch.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <optional>

#include "app/batch_scan.hpp"
#include "app/batch_workers.hpp"
#include "io/atomic_file.hpp"
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

std::vector<Worker> workers_for(const BatchOptions& o) {
  if (o.gpus.empty()) return cpu_workers(o.jobs);
  if (o.device == "cpu") throw InputError("--gpus " + o.gpus + " with --device cpu: choose one");
  if (o.jobs != 1) throw InputError("--jobs with --gpus: --gpus runs one worker per GPU");
  return gpu_workers(o.gpus);
}

// The row of a child that ended: the one it wrote, or why there is none.
BatchRow child_row(const BatchRow& base, const std::string& row_file, const ChildEnd& end, double timeout_s) {
  BatchRow row = base;
  row.status = "failed";
  if (end.interrupted) {
    row.reason = "not finished: batch interrupted";
  } else if (end.timed_out || end.signal) {
    row.reason = describe_end(end, timeout_s);
  } else {
    try {
      std::ifstream f(row_file);
      row = row_from_json(json::parse(f));
    } catch (const std::exception&) {
      row.reason = describe_end(end, timeout_s);
    }
  }
  std::error_code ec;
  std::filesystem::remove(row_file, ec);
  return row;
}

void log_row(const BatchRow& r, std::size_t done, std::size_t total, const Worker& w) {
  if (r.status == "failed")
    spdlog::error("[{}/{}] {}: {}", done, total, r.file, r.reason);
  else
    spdlog::info("[{}/{}] {} {} on {} ({:.2f} s)", done, total, r.file, r.status, w.label, r.t_total);
}

}  // namespace

BatchResult run_batch(const BatchOptions& o) {
  const ScanList list = make_scan_list(o);
  const std::vector<Worker> workers = workers_for(o);
  make_output_dir(o.out);
  const std::string fp = options_fingerprint(o.solver, o.device);
  const std::string exe = o.exe.empty() ? self_exe() : o.exe;
  std::optional<TempDir> private_cache;
  if (o.solver.no_cache) private_cache.emplace("q");
  TempDir row_dir("rows");

  BatchResult res;
  std::vector<ChildTask> tasks;
  std::vector<ScanJob> jobs;
  for (std::size_t k = 0; k < list.files.size(); ++k) {
    BatchRow base;
    base.file = list.files[k];
    base.output = list.outputs[k];
    base.status = "pending";
    std::optional<BatchRow> kept = up_to_date_row(o, base, fp);
    res.rows.push_back(kept ? *kept : base);
    if (kept) continue;
    ScanJob job{base.file, base.output, fp, private_cache ? private_cache->path() : "", o.solver, o.device,
                o.progress && workers.size() == 1};
    std::string row_file = row_dir.path() + "/" + std::to_string(k) + ".json";
    tasks.push_back({k, scan_child_args(job, row_file, !job.progress)});
  }

  ShardFile shard;
  if (list.shard) {
    shard = {list.shard->index, list.shard->count, list.files_total, list.list_hash, fp, "running",
             list.positions, res.rows};
    write_shard(o.out, shard);
  }
  std::size_t finished = res.rows.size() - tasks.size();
  bool complete = run_children(exe, tasks, workers, o.scan_timeout, [&](std::size_t k, std::size_t w, const ChildEnd& e) {
    res.rows[k] = child_row(res.rows[k], row_dir.path() + "/" + std::to_string(k) + ".json", e, o.scan_timeout);
    log_row(res.rows[k], ++finished, res.rows.size(), workers[w]);
    if (list.shard && !e.interrupted) {  // a scan the stop cut short stays pending
      shard.rows[k] = res.rows[k];
      write_shard(o.out, shard);
    }
  });
  res.interrupted = !complete;
  if (list.shard) {
    shard.state = complete ? "done" : "interrupted";
    write_shard(o.out, shard);
    res.written = shard_path(o.out, shard.index, shard.count);
  } else {
    for (BatchRow& r : res.rows)
      if (r.status == "pending") r.status = "failed", r.reason = "not run: batch interrupted";
    write_summary(o.out, res.rows);
    res.written = o.out + "/summary.csv";
  }
  return res;
}

}  // namespace fhd::app
