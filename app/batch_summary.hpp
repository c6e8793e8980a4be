#pragma once
// Batch summary rows: built from a reconstruction's results (in memory) or, for
// a skipped scan, from the report it kept; the CSV and JSON summaries; shard
// files and merging them (docs/batch.md, docs/cluster.md).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "io/figures.hpp"
#include "recon/pipeline/pipeline.hpp"

namespace fhd::app {

// One row of the summary.
struct BatchRow {
  std::string file, output;  // input path; output directory
  std::string status;        // ok | failed | skipped (| missing, only in a merged summary)
  std::string reason;        // failed: the one-line error, "crashed: ..." or "timed out ..."; skipped: why
  std::string q_source;      // computed | cache | "" (no Q this run)
  int coils = 0;
  std::optional<double> iter_psnr, iter_nrmse, grid_psnr, grid_nrmse;  // gridding = gridding-kb
  double t_mu = 0, t_fhd = 0, t_q = 0, t_cg = 0, t_gridding = 0, t_total = 0;
};

// Metrics, stage times and Q's source of a finished reconstruction (status ok).
void fill_from_result(BatchRow& row, const ReconResult& res, int coils);

// The same from a report.json a previous run wrote (for skipped scans). Throws
// InputError when the report has the wrong shape.
void fill_from_report(BatchRow& row, const nlohmann::json& report);

// One row as JSON (summary.json's "scans" entries) and back. row_from_json
// throws InputError on a row of the wrong shape.
nlohmann::json row_json(const BatchRow& r);
BatchRow row_from_json(const nlohmann::json& j);

std::string summary_csv(const std::vector<BatchRow>& rows);
nlohmann::json summary_json(const std::vector<BatchRow>& rows);

// Writes DIR/summary.csv and DIR/summary.json (`extra` keys are added to the
// JSON), and the overview picture, whose tile of rows[k] is thumbnails[k]
// where that has a slice (read as the row came; otherwise read here).
void write_summary(const std::string& dir, const std::vector<BatchRow>& rows,
                   const nlohmann::json& extra = nlohmann::json::object(),
                   const std::vector<SheetTile>& thumbnails = {});

// ---------------------------------------------------------------- shards

// What one `batch --shard I/N` task writes: DIR/shards/shard-I-of-N.json,
// rewritten after every scan so a killed task leaves the rows it finished.
struct ShardFile {
  std::size_t index = 0, count = 1;
  std::size_t files_total = 0;  // scans in the whole (sorted) list
  std::string list_hash, options_fingerprint;
  std::string state;  // running | done | interrupted
  std::vector<std::size_t> positions;  // in the sorted list, one per row
  std::vector<BatchRow> rows;          // status "pending" until the scan finished
};

std::string shard_path(const std::string& dir, std::size_t index, std::size_t count);
void write_shard(const std::string& dir, const ShardFile& s);
ShardFile read_shard(const std::string& path);

struct MergeResult {
  std::vector<BatchRow> rows;  // in sorted-list order, then one "missing" row per missing shard
  std::vector<std::size_t> missing, unfinished;  // shard numbers
  nlohmann::json shards;                          // summary.json's "shards" block
};

// Merges every DIR/shards/shard-*.json (or shard files given directly) of one
// batch. Throws InputError when there are none or they come from different
// batches (file list, N or options differ).
MergeResult merge_shards(const std::vector<std::string>& dirs_or_files);

}  // namespace fhd::app
