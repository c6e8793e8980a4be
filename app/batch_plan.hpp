#pragma once
// Batch planning: the file list, output names, shards, and whether a scan's
// outputs are up to date (docs/batch.md). No reconstruction here.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/recon_options.hpp"

namespace fhd::app {

// The git revision this build was made from (`fhdrecon --version`'s), "unknown"
// outside a git checkout.
std::string build_revision();

// Hash of everything that changes the images: solver options, device,
// version and the build's git revision (not the cache location). Stored in
// each report as batch.options_fingerprint.
std::string options_fingerprint(const SolverOptions& o, const std::string& device,
                                const std::string& revision = build_revision());

// FNV-1a 64 of `s` as 16 hex digits: stable across runs, builds and machines.
std::string fnv1a_hex(const std::string& s);

// DIR/<stem> per input; a stem seen before gets its extension too (a.h5, a.mrd
// -> a, a_mrd), so no two scans share a directory.
std::vector<std::string> output_names(const std::vector<std::string>& files);

// Refuses, before any work, a scan file in --out DIR that the batch would
// overwrite or replace: DIR's summary.csv, summary.json, overview.png, lock
// file, shards/, a scan's output directory DIR/<name> (swapped in whole) or a
// temporary being written (`files` and `names` as output_names has them).
// Links count where they point as well. Throws one InputError naming the file.
void check_inputs_outside_outputs(const std::vector<std::string>& files, const std::vector<std::string>& names,
                                  const std::string& out);

// BART k-space x.cfl reads its trajectory from x_traj.cfl (synth's naming);
// "" for other formats, told apart as recon tells them (an HDF5 file without
// extension is HDF5).
std::string bart_traj_for(const std::string& file);

// Empty when DIR's outputs are complete, made from this input (its report's
// batch.input the same file) with `fingerprint`, and no older than the input
// (as make decides); else why the scan must be reconstructed.
std::string why_not_up_to_date(const std::string& input, const std::string& dir, const std::string& fingerprint);
// Why a parsed report.json is not of the shape batch writes ("" when it is);
// why_not_up_to_date gives "report.json <why>" and the scan is reconstructed.
std::string report_shape_problem(const nlohmann::json& report);

// The scans of --files-from FILE: one path per line, blank lines and lines
// starting with '#' ignored. Throws InputError naming the file when unreadable
// or not a list of paths: a NUL byte, a line longer than kMaxPathChars, more
// than kMaxFileListEntries lines or kMaxFileListBytes (`--files-from
// /dev/zero` read 16.8 GB before).
std::vector<std::string> read_file_list(const std::string& path);
constexpr std::size_t kMaxPathChars = 4096;                      // PATH_MAX on Linux
constexpr std::size_t kMaxFileListEntries = 1'000'000;             // 10 times issue 26's 100,000 scans
constexpr std::size_t kMaxFileListBytes = std::size_t(256) << 20;  // 256 MiB
// The most scans one batch can list (a full --files-from and as many on the
// command line), the bound on what a shard file may claim.
constexpr std::size_t kMaxBatchFiles = 2 * kMaxFileListEntries;

// --shard I/N: task I (0-based) of N.
struct Shard {
  std::size_t index = 0, count = 1;
};
// Parses "I/N" (0 <= I < N); throws InputError naming the value.
Shard parse_shard(const std::string& s);

// The positions in the sorted file list that shard `s` owns: I, I+N, I+2N, ...
// (round robin, so scans that sort together, often one study or one protocol,
// spread over the tasks). Every position belongs to exactly one shard.
std::vector<std::size_t> shard_positions(std::size_t files, Shard s);

// Identifies a sorted file list, so merge can tell shards of one batch from another's.
std::string list_hash(const std::vector<std::string>& sorted_files);

// One batch into one --out at a time (docs/batch.md, "Two batches, one
// directory"): an unsharded batch (and a merge) holds DIR/.fhdrecon-batch.lock
// exclusively; a shard task holds it shared and DIR/shards/.shard-I-of-N.lock
// exclusively, so the tasks of one array run side by side but no task twice.
// flock locks, held until this object or the process goes (a killed batch
// leaves none); close-on-exec, so no child holds them. Throws InputError
// naming DIR when it is taken. `made_dir`: this run made DIR; if the batch
// then fails before writing anything there (a server's refusal), DIR and its
// lock file go again, so a refused batch leaves no directory behind.
class BatchLock {
 public:
  BatchLock(const std::string& dir, const Shard* shard, bool made_dir = false);
  ~BatchLock();
  BatchLock(const BatchLock&) = delete;
  BatchLock& operator=(const BatchLock&) = delete;

 private:
  void remove_if_untouched() const;
  std::string dir_;
  bool made_dir_ = false;
  int fd_ = -1, shard_fd_ = -1;
};

// A fresh directory in the system's temporary directory (fhdrecon-PREFIX-RANDOM),
// removed with everything in it when this object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace fhd::app
