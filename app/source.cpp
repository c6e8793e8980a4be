#include "app/option_checks.hpp"
#include "app/source.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <vector>

#include "app/memory_check.hpp"
#include "phantom/coils.hpp"
#include "phantom/offresonance.hpp"
#include "recon/field/field.hpp"
#include "io/scan_file.hpp"
#include "recon/coils/coil_compress.hpp"
#include "recon/coils/coil_noise.hpp"
#include "app/scan_input.hpp"
#include "core/error.hpp"

namespace fhd::app {

namespace {

// The integers of "N" or "NX,NY[,NZ]", each written in full; empty when the
// text is not of that form.
std::vector<int> matrix_numbers(const std::string& v) {
  std::vector<int> out;
  std::size_t at = 0;
  for (;;) {
    const std::size_t end = std::min(v.find(',', at), v.size());
    int n = 0;
    const auto [p, ec] = std::from_chars(v.data() + at, v.data() + end, n);
    if (ec != std::errc() || p != v.data() + end || at == end) return {};
    out.push_back(n);
    if (end == v.size()) return out;
    at = end + 1;
  }
}

// --matrix: N in 4..1024 (a cubic or square grid), or a BART k-space's own
// grid NX,NY[,NZ] (NZ 1 when left out), each axis in 1..1024: BART files carry
// no matrix, and their unitary k-space is scaled by sqrt(NX NY NZ) of the grid
// read on, so an odd or non-cubic scan read on another grid came out 0.66-0.86
// of its intensity (hunt20).
const CLI::Validator& matrix_text() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        const std::vector<int> n = matrix_numbers(s);
        if (n.size() == 1 && n[0] >= 4 && n[0] <= 1024) return "";
        if ((n.size() == 2 || n.size() == 3) && std::all_of(n.begin(), n.end(), [](int a) { return a >= 1 && a <= 1024; }))
          return "";
        return "--matrix = " + s + ": expected N (4..1024) or NX,NY[,NZ] (each 1..1024)";
      },
      "N|NX,NY[,NZ]");
  return v;
}

void set_matrix(SourceOptions& o, const std::string& v) {
  const std::vector<int> n = matrix_numbers(v);
  o.matrix = n.size() == 1 ? n[0] : 0;
  o.dims.reset();
  if (n.size() > 1) o.dims = ImageGrid{n[0], n[1], n.size() == 3 ? n[2] : 1};
}

std::string grid_text(const ImageGrid& g) {
  return std::to_string(g.nx) + "," + std::to_string(g.ny) + "," + std::to_string(g.nz);
}

constexpr const char* phantom_grid_rule =
    "NX,NY,NZ is a BART k-space --input's own grid; a phantom's is N^3 (N^2 in 2D): give --matrix N";

}  // namespace

void add_source_options(CLI::App& cmd, SourceOptions& o) {
  cmd.add_option("--phantom", o.phantom, "analytic phantom: shepp3d | shepp2d")
      ->check(CLI::IsMember(phantom_names()))
      ->capture_default_str();
  cmd.add_option("--input", o.input, "scan file (fhdrecon HDF5, ISMRMRD .h5/.mrd, BART k-space .cfl)")
      ->check(non_empty_path());
  cmd.add_option("--traj-file", o.traj_file, "BART trajectory .cfl for a BART k-space --input")
      ->check(non_empty_path());
  cmd.add_option("--traj-units", o.traj_units,
                 "an ISMRMRD --input's trajectory units: cycles (cycles/FOV) | normalized ([-0.5, 0.5], Gadgetron's); "
                 "default: the file's fhdrecon_traj_units, else cycles")
      ->check(CLI::IsMember({"cycles", "normalized"}));
  cmd.add_option_function<std::string>(
         "--matrix", [&o](const std::string& v) { set_matrix(o, v); },
         "image matrix N (N^3 in 3D, N^2 in 2D), or NX,NY[,NZ]: a BART k-space's own grid; default 64 (3D), 128 (2D)")
      ->type_name("N|NX,NY[,NZ]")
      ->check(matrix_text());
  cmd.add_option("--traj", o.traj, "trajectory: radial3d | stack-of-stars | stack-of-spirals | radial2d | "
                                   "spiral2d | random; default radial3d (3D), radial2d (2D)")
      ->check(CLI::IsMember(trajectory_kinds()));
  cmd.add_option("--readout", o.readout, "samples per readout (spoke or interleave)")->check(CLI::Range(2, 65535));
  cmd.add_option("--spokes", o.spokes, "spokes or interleaves (per partition for stacks)")
      ->check(CLI::Range(1, 10000000));
  cmd.add_option("--samples", o.samples, "total samples (sets the spoke count when --spokes is not given)")
      ->check(CLI::Range(std::size_t(1), std::size_t(1) << 32));
  cmd.add_option("--noise", o.noise, "complex Gaussian noise, sigma relative to the RMS of |D|")
      ->check(finite_number())
      ->check(number_in(0.0, 10.0));
  cmd.add_option("--seed", o.seed, "seed for noise and random trajectories (0 .. 2^64-1)")
      ->check(seed_value())
      ->capture_default_str();
  cmd.add_option("--coils", o.coils, "receive coils of a synthesized scan (smooth analytic maps, correlated noise)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd.add_option("--noise-samples", o.noise_samples, "noise-calibration samples per coil (with --coils and --noise)")
      ->check(CLI::Range(std::size_t(16), std::size_t(1) << 24))
      ->capture_default_str();
  cmd.add_flag("!--no-prewhiten", o.prewhiten, "keep the coils' noise as it is (default: prewhiten with the noise samples)");
  cmd.add_option("--virtual-coils", o.virtual_coils, "compress the coils to K virtual coils (SVD of the data)")
      ->check(CLI::Range(1, 1024));
  cmd.add_option("--off-resonance", o.off_resonance_hz,
                 "synthesized off-resonance: largest |field| in Hz (a gradient and two constant regions; 0 = none)")
      ->check(finite_number())
      ->check(number_in(0.0, 5000.0))
      ->capture_default_str();
  cmd.add_option("--readout-ms", o.readout_ms, "duration of each synthesized readout, ms (sample times)")
      ->check(finite_number())
      ->check(number_in(0.01, 1000.0))
      ->capture_default_str();
  cmd.add_option("--te-ms", o.te_ms, "time of each readout's first sample after excitation, ms")
      ->check(finite_number())
      ->check(number_in(0.0, 1000.0))
      ->capture_default_str();
  cmd.add_option("--field-map", o.field_map, "HDF5 file whose /field_map (Hz, the image grid) is the scan's field map")
      ->check(CLI::ExistingFile);
  // Which of them were given: with --input most would be ignored (check_source_options).
  for (const char* name : {"--phantom", "--traj-file", "--traj-units", "--matrix", "--traj", "--readout", "--spokes",
                           "--samples", "--noise", "--seed", "--coils", "--noise-samples", "--off-resonance",
                           "--readout-ms", "--te-ms", "--no-prewhiten"})
    cmd.get_option(name)->each([&o, name](const std::string&) { o.given.insert(name); });
}

std::size_t default_samples(int matrix, bool is3d) {
  // 3D: 0.4 N^3 samples (radial at N=64: 819 spokes of 128, an eighth of
  // Nyquist's pi/2 N^2 spokes), so the default run fits well inside a minute
  // on two cores. 2D: about pi/2 N spokes of 2N samples (Nyquist for radial).
  double n = matrix;
  return is3d ? std::size_t(0.4 * n * n * n) : std::size_t(3.2 * n * n);
}

namespace {

// What a synthesized scan claims, as the options that claim it (memory errors name them).
std::string claimed_by(const SourceOptions& o, int matrix) {
  std::string s = "--matrix " + std::to_string(matrix);
  if (o.samples) s += " --samples " + std::to_string(o.samples);
  if (o.spokes) s += " --spokes " + std::to_string(o.spokes);
  if (o.readout) s += " --readout " + std::to_string(o.readout);
  if (o.coils > 1) s += " --coils " + std::to_string(o.coils);
  if (o.coils > 1 && o.noise > 0) s += " --noise-samples " + std::to_string(o.noise_samples);
  return s;
}

// The synthetic field of the phantom (phantom/offresonance.hpp) and every
// sample's time: the scan carries the field map at the voxels and the times.
PhantomField synthetic_field(Source& src, const SourceOptions& o, int readout) {
  Scan& s = src.scan;
  FieldSpec spec;
  spec.max_hz = o.off_resonance_hz;
  spec.readout_s = o.readout_ms * 1e-3;
  spec.te_s = o.te_ms * 1e-3;
  try {
    const PhantomField field = phantom_field(*src.phantom, spec);
    s.field.times = sample_times(s.traj.size(), readout, spec);
    s.field.hz = field_at_voxels(*src.phantom, field, s.grid.nx, s.grid.ny, s.grid.nz);
    return field;
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--off-resonance: ") + e.what());
  }
}

// The phantom seen by o.coils coils (exact k-space per coil, in the synthetic
// field when off-resonance is asked for) with correlated noise and, when
// noisy, a noise calibration: src.scan is coil 0.
void synthesize_coil_scans(Source& src, const SourceOptions& o, int readout) {
  Scan& s = src.scan;
  CoilSpec spec;
  spec.coils = o.coils;
  spec.dims = src.phantom->dims();
  spec.seed = o.seed;
  const CoilArray array = make_coil_array(spec);
  CoilData data;
  if (o.off_resonance_hz > 0) {
    const PhantomField field = synthetic_field(src, o, readout);
    data = synthesize_offresonance_coils(*src.phantom, array, s.traj, s.field.times, field, s.grid.nx, s.grid.ny,
                                         s.grid.nz);
  } else {
    data = synthesize_coils(*src.phantom, array, s.traj, s.grid.nx, s.grid.ny, s.grid.nz);
  }
  src.true_maps = coil_maps(array, s.grid.nx, s.grid.ny, s.grid.nz);  // mixed and normalized in process_coils
  CoilData noise(o.coils);
  if (o.noise > 0) {
    // Distinct streams for the noise model, the data's noise and the calibration.
    const NoiseModel model = make_noise_model(o.coils, o.seed + 1);
    const double sigma = add_coil_noise(data, model, o.noise, o.seed);
    noise = noise_scan(model, sigma, o.noise_samples, o.seed + 2);
  }
  src.more_coils.assign(o.coils - 1, s);
  for (int c = 0; c < o.coils; ++c) {
    Scan& coil = c == 0 ? s : src.more_coils[c - 1];
    coil.data = std::move(data[c]);
    coil.noise = std::move(noise[c]);
  }
}

int layout_readout(const TrajectorySpec& spec) { return trajectory_layout(spec).readout; }

// Exact single-coil data of the phantom in the synthetic field.
void synthesize_off_resonance(Source& src, const SourceOptions& o, int readout) {
  Scan& s = src.scan;
  const PhantomField field = synthetic_field(src, o, readout);
  try {
    s.data = synthesize_offresonance(*src.phantom, s.traj, s.field.times, field, s.grid.nx, s.grid.ny, s.grid.nz);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--off-resonance: ") + e.what());
  }
}

Source from_phantom(const SourceOptions& o) {
  Source src;
  src.phantom = make_phantom(o.phantom);
  bool is3d = src.phantom->dims() == 3;
  int n = o.matrix > 0 ? o.matrix : is3d ? 64 : 128;
  TrajectorySpec spec;
  spec.kind = o.traj.empty() ? (is3d ? "radial3d" : "radial2d") : o.traj;
  if (!is3d && spec.kind.rfind("stack-of-", 0) == 0)  // one partition: it ran as radial2d or spiral2d, unsaid
    throw InputError("--traj", "with --phantom " + o.phantom, spec.kind,
                     "stacks partitions along z, and a 2D phantom has one slice: use radial2d or spiral2d");
  if (!is3d && spec.kind == "radial3d")
    throw InputError("--traj", "with --phantom " + o.phantom, spec.kind,
                     "is 3D, and a 2D phantom has one slice: use radial2d, spiral2d or random");
  if (is3d && (spec.kind == "radial2d" || spec.kind == "spiral2d"))
    throw InputError("--traj", "with --phantom " + o.phantom, spec.kind,
                     "is 2D, and a 3D phantom has many slices: use radial3d, a stack-of-* or random");
  // The spoke count wins over --samples in every trajectory: given both, the
  // samples were dropped unsaid (640 samples for --spokes 10 --samples 50000).
  if (o.given.count("--spokes") && o.given.count("--samples"))
    throw InputError("--samples", "with --spokes", std::to_string(o.spokes),
                     "the spokes (times the readout) set the samples: give one of them");
  spec.nx = spec.ny = n;
  spec.nz = is3d ? n : 1;
  spec.readout = o.readout;
  spec.spokes = o.spokes;
  spec.total = o.samples;
  if (spec.spokes == 0 && spec.total == 0) spec.total = default_samples(n, is3d);
  spec.seed = o.seed;
  Scan& s = src.scan;
  s.grid = {spec.nx, spec.ny, spec.nz};
  try {
    TrajectoryLayout layout = trajectory_layout(spec);
    // Every coil's samples and noise samples are synthesized before anything is written or reconstructed.
    check_host_memory(s.grid, layout.samples(), std::size_t(o.coils), claimed_by(o, n),
                      o.coils > 1 && o.noise > 0 ? o.noise_samples : 0);
    s.traj = make_trajectory(spec);
    src.readout = layout.readout;
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  if (o.coils > 1) {
    synthesize_coil_scans(src, o, layout_readout(spec));
  } else if (o.off_resonance_hz > 0) {
    synthesize_off_resonance(src, o, layout_readout(spec));
  } else {
    s.data = synthesize(*src.phantom, s.traj, s.grid.nx, s.grid.ny, s.grid.nz);
    if (o.noise > 0) add_noise(s.data, o.noise, o.seed);
  }
  if (o.off_resonance_hz > 0 && o.coils == 1 && o.noise > 0) add_noise(s.data, o.noise, o.seed);
  s.provenance = {{"phantom", o.phantom},
                  {"trajectory", spec.kind},
                  {"matrix", std::to_string(n)},
                  {"samples", std::to_string(s.traj.size())},
                  {"noise", std::to_string(o.noise)},
                  {"seed", std::to_string(o.seed)}};
  if (o.off_resonance_hz > 0) {
    s.provenance["off_resonance_hz"] = std::to_string(o.off_resonance_hz);
    s.provenance["readout_ms"] = std::to_string(o.readout_ms);
    s.provenance["te_ms"] = std::to_string(o.te_ms);
  }
  if (o.coils > 1) {
    s.provenance["coils"] = std::to_string(o.coils);
    s.provenance["coil_maps"] = "bumps";  // make_coil_array's default spec with seed: regenerable
    for (Scan& c : src.more_coils) c.provenance = s.provenance;
  }
  src.description = fmt::format("{} {}^{} | {} | {} samples | noise {}{}{}", o.phantom, n, is3d ? 3 : 2,
                                 spec.kind, s.traj.size(), o.noise,
                                 o.coils > 1 ? fmt::format(" | {} coils", o.coils) : "",
                                 o.off_resonance_hz > 0 ? fmt::format(" | off-resonance {} Hz over {} ms readouts",
                                                                      o.off_resonance_hz, o.readout_ms)
                                                        : "");
  return src;
}

// A file that synth wrote from coils of ours (provenance coils, coil_maps
// "bumps", seed; coils as synthesized, not yet mixed) gets the same true maps
// as the run that synthesized it in memory, so its PSNR is scored against the
// same reference, the phantom as the array sees it. Without them the file's
// run scored the same image against the bare phantom (2D 16^2, 2 coils: 12.3
// dB from the file, 18.6 dB in memory).
// A multi-coil file whose maps cannot be made again (written prewhitened or
// compressed: the mixing is not in the file; other maps; no seed) has no
// reference: scored against the bare phantom, the same image read 7.95 dB
// from a `synth --prewhitened` file against 21.21 dB from the plain one
// (hunt20). Such a file gets no PSNR, as a file without a phantom.
void regenerate_true_maps(Source& src, const std::string& file) {
  const auto& p = src.scan.provenance;
  auto get = [&p](const char* key) { auto it = p.find(key); return it == p.end() ? std::string() : it->second; };
  const std::size_t coils = 1 + src.more_coils.size();
  if (!src.phantom || coils == 1) return;
  auto no_reference = [&](const std::string& why) {
    spdlog::info("{}: {}: its coils' maps cannot be made again, so no PSNR", printable(file), why);
    src.phantom.reset();
  };
  if (!get("prewhitened").empty() || !get("virtual_coils").empty())
    return no_reference("written prewhitened or compressed");
  if (get("coil_maps") != "bumps" || get("coils") != std::to_string(coils))
    return no_reference("its provenance names no synthesized coil maps of " + std::to_string(coils) + " coils");
  CoilSpec spec;
  spec.coils = int(coils);
  spec.dims = src.phantom->dims();
  try {
    spec.seed = std::stoull(get("seed"));
  } catch (const std::exception&) {
    return no_reference("no seed in its provenance");
  }
  const ImageGrid& g = src.scan.grid;
  src.true_maps = coil_maps(make_coil_array(spec), g.nx, g.ny, g.nz);  // mixed and normalized in make_source
}

Source from_file(const SourceOptions& o) {
  Source src;
  std::vector<Scan> coils = read_scans_any(o.input, o.traj_file, o.matrix, traj_units_named(o.traj_units), o.dims);
  src.scan = std::move(coils.front());
  src.more_coils.assign(std::make_move_iterator(coils.begin() + 1), std::make_move_iterator(coils.end()));
  auto it = src.scan.provenance.find("phantom");
  if (it != src.scan.provenance.end()) {
    try {
      src.phantom = make_phantom(it->second);
    } catch (const std::invalid_argument&) {
      spdlog::warn("{}: provenance phantom = {} is unknown: no PSNR", printable(o.input), printable(it->second));
    }
  }
  regenerate_true_maps(src, o.input);
  const ImageGrid& g = src.scan.grid;  // memory checked by the reader, before the samples were read
  src.description = fmt::format("{} | {}x{}x{} | {} samples | {} coil(s)", o.input, g.nx, g.ny, g.nz,
                                src.scan.traj.size(), 1 + src.more_coils.size());
  return src;
}

// The array's gain ||M s(x)|| (M s: the maps mixed by process_coils) and the
// mixed maps normalized by it (zero where the gain is).
void normalize_maps(Source& src) {
  CoilData& maps = src.true_maps;
  src.array_gain.assign(maps[0].size(), 0.f);
  for (const auto& m : maps)
    for (std::size_t i = 0; i < m.size(); ++i) src.array_gain[i] += std::norm(m[i]);
  for (float& g : src.array_gain) g = std::sqrt(g);
  for (auto& m : maps)
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = src.array_gain[i] > 0 ? m[i] / src.array_gain[i] : cfloat(0.f);
}

// Prewhitening (before anything else: the noise as received), then compression.
void process_coils(Source& src, const SourceOptions& o) {
  const int have = 1 + int(src.more_coils.size());
  if (o.virtual_coils > have)
    throw InputError("--virtual-coils", "value", std::to_string(o.virtual_coils),
                     "the scan has only " + std::to_string(have) + " coil(s): compress to fewer");
  if (src.more_coils.empty() || (!o.prewhiten && o.virtual_coils == 0)) return;
  std::vector<Scan> coils;
  coils.push_back(std::move(src.scan));
  for (Scan& c : src.more_coils) coils.push_back(std::move(c));
  src.more_coils.clear();
  auto put_back = [&] {
    src.scan = std::move(coils[0]);
    src.more_coils.assign(std::make_move_iterator(coils.begin() + 1), std::make_move_iterator(coils.end()));
  };
  CMatrix mixing = CMatrix::identity(int(coils.size()));
  try {
    if (o.prewhiten && prewhiten(coils, &mixing)) {
      spdlog::info("{} coils prewhitened with {} noise samples each", coils.size(), coils[0].noise.size());
      for (Scan& c : coils) c.provenance["prewhitened"] = "yes";
    }
    if (o.virtual_coils > 0 && o.virtual_coils < int(coils.size())) {
      const std::size_t from = coils.size();
      const Compression c = compress_coils(coils, o.virtual_coils);
      mixing = multiply(c.matrix, mixing);
      spdlog::info("{} coils compressed to {} virtual coils ({:.2f}% of the energy)", from, coils.size(), 100 * c.kept());
      for (Scan& s : coils) s.provenance["virtual_coils"] = std::to_string(coils.size()) + " of " + std::to_string(from);
    }
  } catch (...) {
    put_back();  // the steps check before they change anything
    throw;
  }
  put_back();
  if (!src.true_maps.empty()) src.true_maps = mix_maps(src.true_maps, mixing);
}

}  // namespace

// --field-map: the file's map replaces the source's, for every coil; the
// sample times must come from the source (a synthesized scan, or the file).
void use_field_map(Source& src, const SourceOptions& o) {
  if (o.field_map.empty()) return;
  const std::vector<float> hz = read_field_map_any(o.field_map, src.scan.grid);
  if (src.scan.field.times.empty())
    throw InputError("--field-map", "sample times", "(none)",
                     "the scan has no sample times (fhdrecon HDF5 /sample_times, ISMRMRD sample_time_us)");
  src.scan.field.hz = hz;
  for (Scan& c : src.more_coils) c.field.hz = hz;
}

void check_source_options(const SourceOptions& o) {
  auto given = [&o](const char* opt) { return o.given.count(opt) > 0; };
  if (o.input.empty()) {
    if (o.dims) throw InputError("--matrix", "value", grid_text(*o.dims), phantom_grid_rule);
    if (given("--traj-file"))
      throw InputError("--traj-file", "value", o.traj_file, "is the trajectory of a BART k-space --input; there is no --input");
    if (given("--traj-units"))
      throw InputError("--traj-units", "value", o.traj_units, "states an ISMRMRD --input's units; there is no --input");
    if (o.virtual_coils > o.coils)
      throw InputError("--virtual-coils", "value", std::to_string(o.virtual_coils),
                       "the scan has only " + std::to_string(o.coils) + " coil(s) (--coils): compress to fewer");
    return;
  }
  // A file brings its own trajectory, samples, coils and noise: these would be ignored.
  for (const char* opt : {"--phantom", "--traj", "--readout", "--spokes", "--samples", "--noise", "--seed", "--coils",
                          "--noise-samples", "--off-resonance", "--readout-ms", "--te-ms"})
    if (given(opt))
      throw InputError(opt, "with --input", o.input,
                       "sets up a synthesized scan; a file brings its own, so it would be ignored (leave it out)");
  if (o.traj_units == "normalized" && is_bart_input(o.input, o.traj_file))
    throw InputError("--traj-units", "with --input", o.input,
                     "normalized is for ISMRMRD input; a BART trajectory is in cycles/FOV (leave the option out)");
  if (given("--matrix") && !is_bart_input(o.input, o.traj_file))
    throw InputError("--matrix", "with --input", o.input,
                     "the file holds its own matrix; --matrix sets the grid of a BART k-space (or of a synthesized scan)");
}

Source make_source(const SourceOptions& o) {
  check_source_options(o);
  Source src = o.input.empty() ? from_phantom(o) : from_file(o);
  use_field_map(src, o);
  if (!src.scan.field.hz.empty()) check_field(src.scan.field, src.scan.grid, src.scan.traj.size(),
                                           o.field_map.empty() ? (o.input.empty() ? "--off-resonance" : o.input) : o.field_map);
  process_coils(src, o);
  if (!src.true_maps.empty()) normalize_maps(src);
  return src;
}

}  // namespace fhd::app
