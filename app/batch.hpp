#pragma once
// Multi-coil combination and the batch job (docs/batch.md).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/recon_options.hpp"
#include "app/source.hpp"
#include "recon/backend.hpp"
#include "recon/pipeline.hpp"

namespace fhd::app {

// Reconstructs every coil (they share one trajectory) and combines each
// method's image by root sum of squares, sqrt(sum_c |img_c|^2). Q is computed
// once: coils after the first load it from the Q cache (a private temporary
// cache when opt.q_cache_dir is empty). PSNR/NRMSE only when opt.phantom is
// set. One coil: exactly run_reconstruction. Throws InputError when the coils
// differ in grid or trajectory.
ReconResult reconstruct_coils(Backend& be, const std::vector<const Scan*>& coils, const ReconOptions& opt);

// Every coil of a source: scan, then more_coils.
std::vector<const Scan*> coil_list(const Source& src);

struct BatchOptions {
  std::vector<std::string> files;
  std::string out;
  SolverOptions solver;
  std::string device = "auto";
  bool force = false;
  bool progress = false;  // draw the progress line (main's --quiet turns it off)
};

// One row of the summary.
struct BatchRow {
  std::string file, output;  // input path; output directory
  std::string status;        // ok | failed | skipped
  std::string reason;        // failed: the one-line error; skipped: why
  std::string q_source;      // computed | cache | "" (no Q this run)
  int coils = 0;
  std::optional<double> iter_psnr, iter_nrmse, grid_psnr, grid_nrmse;  // gridding = gridding-kb
  double t_mu = 0, t_fhd = 0, t_q = 0, t_cg = 0, t_gridding = 0, t_total = 0;
};

// Hash of everything that changes the images: solver options, device and
// version (not the cache location). Stored in each report as batch.options_fingerprint.
std::string options_fingerprint(const SolverOptions& o, const std::string& device);

// DIR/<stem> per input; a stem seen before gets its extension too (a.h5, a.mrd
// -> a, a_mrd), so no two scans share a directory.
std::vector<std::string> output_names(const std::vector<std::string>& files);

// BART k-space x.cfl reads its trajectory from x_traj.cfl (synth's naming);
// "" for other formats.
std::string bart_traj_for(const std::string& file);

// Empty when DIR's outputs are complete, made with `fingerprint` and no older
// than the input (as make decides); else why the scan must be reconstructed.
std::string why_not_up_to_date(const std::string& input, const std::string& dir, const std::string& fingerprint);
// Why a parsed report.json is not of the shape batch writes ("" when it is);
// why_not_up_to_date gives "report.json <why>" and the scan is reconstructed.
std::string report_shape_problem(const nlohmann::json& report);

// Fills metrics and stage times from a report.json's content.
void fill_from_report(BatchRow& row, const nlohmann::json& report);

// Runs every scan (a failure is recorded in its row; the batch goes on) and
// writes DIR/summary.csv and DIR/summary.json.
std::vector<BatchRow> run_batch(const BatchOptions& o, Backend& be);

std::string summary_csv(const std::vector<BatchRow>& rows);
nlohmann::json summary_json(const std::vector<BatchRow>& rows);

}  // namespace fhd::app
