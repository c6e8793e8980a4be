#pragma once
// Where the k-space comes from: an analytic phantom on a synthesized
// trajectory, or a scan file. Shared by recon, synth and validate.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "phantom/phantom.hpp"
#include "recon/coils/coil_noise.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::app {

struct SourceOptions {
  std::string phantom = "shepp3d";
  std::string input;     // scan file; overrides the phantom
  std::string traj_file; // BART trajectory (.cfl base) for a BART k-space input
  std::string traj_units;  // ISMRMRD input's trajectory: "" (as the file says) | cycles | normalized
  int matrix = 0;        // 0: 64 for 3D, 128 for 2D
  std::optional<ImageGrid> dims;  // --matrix NX,NY[,NZ]: a BART k-space's own grid
  std::string traj;      // "": radial3d for 3D, radial2d for 2D
  int readout = 0;
  int spokes = 0;
  std::size_t samples = 0;  // 0: the default for the matrix (docs/usage.md)
  double noise = 0;
  std::uint64_t seed = 1;
  int coils = 1;                     // > 1: a receive array (phantom/coils.hpp, docs/coils.md)
  std::size_t noise_samples = 4096;  // per coil, the noise calibration written with --coils and --noise
  bool prewhiten = true;             // prewhiten the coils with their noise samples, when they have some
  int virtual_coils = 0;             // > 0: compress the coils to this many (after prewhitening)
  // Off-resonance of a synthesized scan (phantom/offresonance.hpp, docs/field-maps.md).
  double off_resonance_hz = 0;       // largest |f| in the object; 0 = none
  double readout_ms = 10;            // each readout's duration (first to last sample)
  double te_ms = 1;                  // the first sample's time after excitation
  std::string field_map;             // HDF5 file whose /field_map replaces the source's map
  std::set<std::string> given;       // the options above given on the command line (add_source_options)
};

void add_source_options(CLI::App& cmd, SourceOptions& o);

struct Source {
  Scan scan;                         // the first (or only) coil
  std::vector<Scan> more_coils;      // further coils of a multi-coil file
  int readout = 0;                   // samples per readout, when known (for writers)
  std::unique_ptr<Phantom> phantom;  // null when the data's phantom is unknown
  // Synthesized coils only: the true maps after prewhitening and compression
  // (M s_c, M the coil mixing applied), normalized by their root sum of squares
  // `array_gain`, what the phantom is scored against is phantom * array_gain:
  // the object as the array sees it, what both RSS and SENSE with normalized
  // maps reconstruct (docs/coils.md).
  CoilData true_maps;
  std::vector<float> array_gain;
  std::string description;           // one line for the log and report
};

// Throws InputError for bad combinations (naming the option and value):
// options that only a synthesized scan uses, given with --input (they would be
// ignored), --traj-file without a BART --input, --matrix with an HDF5 --input,
// --traj-units without an --input or normalized with a BART one,
// --virtual-coils beyond the scan's coils; then the memory a synthesized scan
// claims (--matrix, --samples or --spokes, --coils, --noise-samples).
Source make_source(const SourceOptions& o);

// The option checks of make_source that need no file: refuse before any work.
void check_source_options(const SourceOptions& o);

// Default sample count of a synthesized 3D/2D problem (docs/usage.md).
std::size_t default_samples(int matrix, bool is3d);

}  // namespace fhd::app
