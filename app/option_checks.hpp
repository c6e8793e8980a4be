#pragma once
// Option checks CLI11 does not make by itself, and checks of options against
// the scan they will meet, run before any expensive stage.
#include <CLI/CLI.hpp>
#include <string>

#include <vector>

#include "recon/pipeline/pipeline.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::app {

// Refuses NaN, +-Inf and "" by name. CLI::Range alone lets NaN through (every
// comparison with NaN is false): put this check before the Range. CLI11 reads
// "" as the option's default.
const CLI::Validator& finite_number();
// A number in [lo, hi], the bounds written as %g: CLI::Range writes them with
// six decimals, so "--nufft-tol 1e-8" read "not in range 0.000000 to 0.100000".
CLI::Validator number_in(double lo, double hi);
// --lambda: "auto" or a finite number in [0, 1e6].
const CLI::Validator& lambda_value();

// --seed: a whole number 0 .. 2^64-1 as written. CLI11 reads "-1" as 2^64-1 and
// 2^64 as 2^64-1 (saturated); both are refused by value.
const CLI::Validator& seed_value();

// Refuses an empty string: "" as a path would mean the current directory or
// the filesystem root, never what the user meant.
const CLI::Validator& non_empty_path();

// --dcf radial on a scan whose trajectory kind (provenance "trajectory") is not
// radial, or unknown (an imported file), is refused naming the option, the
// value and the source, before FhD and Q are computed. A scan with its own
// density weights ignores --dcf: a --dcf other than auto is warned of, once.
// `skip_gridding`: whether "(or --no-gridding)" is a way out the command has.
void check_dcf_option(const std::string& dcf, bool gridding, const Scan& scan, const std::string& source,
                      bool skip_gridding = true);

// recon's host work (prepare_host_work: density weights, calibration samples)
// for the scan read from `source`. A trajectory the radial weights cannot take
// (DcfError: one radius, samples that share no radii) is one line naming the
// source and --dcf like every other scan error; the library knows no file names.
// A 1D scan (one axis of 2 or more voxels) with --fhd nufft is refused first,
// naming the source and its matrix: the NUFFT needs two such axes.
HostWork host_work_for(const std::string& source, const std::vector<const Scan*>& coils, const ReconOptions& ro,
                       bool beside_gpu);

// The command-line flag of a library option's field (recon/problem/options.hpp):
// "maps_crop" -> "--maps-crop".
std::string flag_of(const std::string& field);

}  // namespace fhd::app
