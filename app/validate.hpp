#pragma once
// fhdrecon validate: one synthesized data set through every precision, device
// and baseline (the book's accuracy table), then checks that each holds or fails
// with its numbers. The command line is in cmd_validate.cpp; this is the part
// the tests call directly.
#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/recon_options.hpp"
#include "app/source.hpp"

namespace fhd::app {

// One line of the accuracy table.
struct ValidateRow {
  std::string method;     // iterative, gridding-trilinear, gridding-kb, band-limited ceiling
  std::string precision;  // double, single, sfu, tf32, nufft
  std::string device;     // cpu, gpu
  std::string data;       // which data set: "128^3, 1048576 samples"
  bool ran = false;
  std::string not_run;  // the reason, when !ran
  std::optional<double> psnr, nrmse;
  std::optional<double> fhd_relerr;  // vs the float64 direct sum (iterative rows only)
  double seconds = 0;
};

// One check: holds when |value| (or value for a margin) meets the threshold.
struct ValidateCheck {
  std::string name;
  bool ran = false;  // false when a row it needs did not run
  bool holds = false;
  double value = 0, threshold = 0;
  std::string detail;  // the numbers, in words
};

struct CheckThresholds {
  double single_vs_double_db = 0.05;
  double sfu_vs_single_db = 0.2;
  double tf32_vs_single_db = 0.2;
  double nufft_vs_single_db = 0.05;  // --fhd nufft (tol 1e-6) against the exact single row, same device
  double min_gain_over_trilinear_db = 3.0;  // iterative single minus trilinear gridding
};

struct ValidateConfig {
  std::string preset = "small";
  SourceOptions source;
  SolverOptions solver;     // iters, lambda, tol, dcf are used; trig/kernel are per row
  int cpu_matrix = 0;       // CPU rows on a smaller copy of the problem (0: same data)
  int ref_voxels = 2048;    // voxels where FhD is checked against the direct sum (0: all)
  bool gpu = true;          // false: GPU rows are "not run"
  CheckThresholds thresholds;
};

struct ValidateReport {
  std::string preset;
  std::vector<std::string> data_sets;  // descriptions, main first
  std::vector<ValidateRow> rows;
  std::vector<ValidateCheck> checks;
};

// Fills the fields of `c` the user left at their defaults from the preset.
// `given(option)` says whether an option such as "--matrix" was on the command line.
// Throws InputError for an unknown preset.
void apply_preset(ValidateConfig& c, const std::function<bool(const std::string&)>& given);
const std::vector<std::string>& preset_names();

ValidateReport run_validate(const ValidateConfig& c, bool show_progress);
// validate scores one coil's reconstruction against the phantom: InputError
// for --coils N, --virtual-coils, or a file of `file_coils` > 1 coils (a
// receive array ran coil 0 alone against the bare phantom, labelled "N coils").
void check_one_coil(const SourceOptions& o, std::size_t file_coils = 1);

// Pure: the checks over rows (tests feed perturbed rows to prove they can fail).
std::vector<ValidateCheck> evaluate_checks(const std::vector<ValidateRow>& rows, const CheckThresholds& t);
// True when no check that ran failed.
bool checks_pass(const std::vector<ValidateCheck>& checks);

std::string validate_table(const ValidateReport& r);
std::string validate_markdown(const ValidateReport& r, const std::string& command);
nlohmann::json validate_json(const ValidateReport& r, const std::string& command);

}  // namespace fhd::app
