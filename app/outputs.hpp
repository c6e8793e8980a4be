#pragma once
// Output files of a reconstruction: images, figures and the JSON report, as
// one output set (io/atomic_file.hpp OutputSet): written into a staging
// directory and swapped into place whole, so a failed or interrupted run
// leaves the previous set as it was, and a second writer is refused.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <vector>
#include <set>
#include <filesystem>
#include <string>

#include "io/atomic_file.hpp"
#include "io/figures.hpp"
#include "recon/pipeline/pipeline.hpp"

namespace fhd::app {

struct OutputOptions {
  std::string dir = "fhdrecon-out";
  std::string json;  // "" = DIR/report.json
  bool no_images = false;
  std::string save = "h5,nii,png";  // formats beside the report: h5, nii, cfl, png (or none)
};

struct OutputPlan {
  std::shared_ptr<OutputSet> set;  // DIR, locked from planning until the set is written
  std::string json;                // an explicit --json path; "" = report.json in the set
  std::set<std::string> formats;   // h5, nii, cfl, png
};

void add_output_options(CLI::App& cmd, OutputOptions& o);
// Before any work: parses --save, refuses --out "" and unwritable places,
// creates and locks DIR (or throws InputError naming it).
OutputPlan plan_outputs(const OutputOptions& o);
// The entry of `dir` that `path` is or lies under ("." for `dir` itself; ""
// when outside), both resolved as far as they exist.
std::string entry_within(const std::string& path, const std::string& dir);
// The same for paths already resolved: the first component of `place` below
// `dir`, "" when `place` is not strictly below it.
std::string entry_in(const std::filesystem::path& place, const std::filesystem::path& dir);
// Before any work: refuses a --cache-dir in or under the output directory
// `dir` (`dir_what` names it, e.g. "--out out"), which each run replaces as a
// whole: the cache's q/ folder made during the run lost the run at the swap
// and broke the directory for every later run.
void check_cache_outside(const std::string& cache_dir, const std::string& dir, const std::string& dir_what);
// Writes the set and swaps it into place (then the --json file, if separate).
// `geometry` (the scan's, when its file states one) places the NIfTI and
// sizes the voxels of images.h5; none = default_geometry (core/geometry.hpp).
void write_outputs(const OutputPlan& plan, const ReconResult& res, const nlohmann::json& report,
                   const std::optional<ScanGeometry>& geometry = std::nullopt);
// After a failed run: drops the staging files and DIR if planning made it.
void discard_outputs(OutputPlan& plan) noexcept;

void write_convergence(const std::string& path, const ReconResult& res);

// The central axial slice (z = nz/2) of OUTPUT_DIR/images.h5's "iterative",
// as a tile of the batch overview; no slice when it cannot be read.
SheetTile scan_thumbnail(const std::string& output_dir);

// One scan of a batch for its overview sheet.
struct SheetEntry {
  std::string file, status, reason;      // status: ok | skipped | failed
  std::string output_dir;                // holds images.h5 when the scan ran
  std::optional<double> psnr;            // iterative, when known
  const SheetTile* thumbnail = nullptr;  // read already (scan_thumbnail), else read here
};
// The batch overview: each scan's central axial slice of the iterative image
// (read back from its images.h5) captioned with its PSNR or why it failed.
void write_batch_sheet(const std::string& path, const std::vector<SheetEntry>& scans);

}  // namespace fhd::app
