#include "app/option_checks.hpp"
#include "app/recon_options.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>

#include "core/error.hpp"
#include "recon/plan/qcache.hpp"
#include "recon/solvers/regularizer.hpp"

namespace fhd::app {

void set_lambda(SolverOptions& o, const std::string& v) {
  o.lambda_given = true;
  o.lambda_auto = v == "auto";
  // lambda_value() checked it; strtod, not stod, which throws "stod" for a
  // subnormal such as 1e-310 (taken as the tiny number it is).
  if (!o.lambda_auto) o.lambda = std::strtod(v.c_str(), nullptr);
}

namespace {

// "regularizer: l2 (first differences, CG) | tv (...) | ...", from recon's table.
std::string regularizer_help() {
  std::string h = "regularizer: l2 (first differences, CG)";
  for (const std::string& name : regularizer_names())
    if (const Regularizer* r = find_regularizer(name)) h += " | " + name + " (" + r->help + ")";
  return h;
}

// "--a", "--a and --b", "--a, --b and --c".
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

}  // namespace

void warn_ignored_options(const SolverOptions& o, std::size_t coils) {
  std::set<std::string> given;  // the library's field names: --maps-crop -> maps_crop
  for (std::string flag : o.given) {
    std::replace(flag.begin(), flag.end(), '-', '_');
    given.insert(flag.substr(2));
  }
  for (const IgnoredOptions& g : ignored_options(given, coils, o.coil_combine, o.reg, o.fhd == "nufft")) {
    std::vector<std::string> flags;
    for (std::string f : g.fields) {
      std::replace(f.begin(), f.end(), '_', '-');
      flags.push_back("--" + f);
    }
    spdlog::warn("{}: ignored ({})", listed(flags), g.why);
  }
}

void add_solver_options(CLI::App& cmd, SolverOptions& o) {
  cmd.add_option("--trig", o.trig, "sine/cosine in FhD and Q: double | single | sfu")
      ->check(CLI::IsMember({"double", "single", "sfu"}))
      ->capture_default_str();
  cmd.add_option("--fhd", o.fhd, "how FhD and Q are computed: exact (every sample-voxel pair) | nufft (--nufft-tol)")
      ->check(CLI::IsMember({"exact", "nufft"}))
      ->capture_default_str();
  cmd.add_option("--nufft-tol", o.nufft_tol, "relative accuracy of the NUFFT (with --fhd nufft)")
      ->check(finite_number())
      ->check(number_in(1e-7, 1e-1))
      ->capture_default_str();
  cmd.add_option("--kernel", o.kernel, "FhD/Q kernel variant (default: the backend's fastest accurate one)");
  cmd.add_option("--iters", o.iters, "CG iterations (at most)")->check(CLI::Range(0, 100000))->capture_default_str();
  cmd.add_option("--tol", o.tol, "CG stops when the relative residual falls below")
      ->check(finite_number())
      ->check(number_in(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option_function<std::string>(
         "--lambda", [&o](const std::string& v) { set_lambda(o, v); },
         "regularization weight: a number (l2: relative to Q(0), 0 = none, default 0.03; tv: relative to Q(0) "
         "times the image scale), or auto, chosen from the data's noise (l2: by a risk estimate; tv: its default, "
         "the noise rule, at least 0.03); without a noise estimate auto takes 0.03")
      ->check(lambda_value());
  cmd.add_option("--reg", o.reg, regularizer_help())
      ->check(CLI::IsMember(regularizer_names()))
      ->capture_default_str();
  cmd.add_flag("--no-precond", o.no_precond, "plain CG (no circulant preconditioner)");
  cmd.add_option("--admm-rho", o.admm_rho, "a sparse prior's ADMM penalty, relative to Q(0)")
      ->check(finite_number())
      ->check(number_in(1e-6, 1e3))
      ->capture_default_str();
  cmd.add_option("--admm-inner", o.admm_inner, "a sparse prior's CG steps per ADMM iteration")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd.add_option("--dcf", o.dcf,
                 "density compensation of the gridding baselines and of SENSE's calibration: "
                 "auto | radial | pipe-menon")
      ->check(CLI::IsMember({"auto", "radial", "pipe-menon"}))
      ->capture_default_str();
  cmd.add_option("--coil-combine", o.coil_combine,
                 "several coils: sense (one image from all coils, plain CG) | rss (each coil, root sum of squares)")
      ->check(CLI::IsMember({"rss", "sense"}))
      ->capture_default_str();
  cmd.add_option("--maps", o.maps,
                 "coil maps for sense: lowres | espirit (from the calibration region) | true (synthesized coils' own)")
      ->check(CLI::IsMember({"lowres", "espirit", "true"}))
      ->capture_default_str();
  cmd.add_option("--calibration", o.calibration, "calibration region for sense's maps, samples per axis")
      ->check(CLI::Range(4, 256))
      ->capture_default_str();
  cmd.add_option("--field-comp", o.field_comp,
                 "off-resonance compensation: none | exact | segmented; default segmented when the scan has a "
                 "field map, else none")
      ->check(CLI::IsMember({"auto", "none", "exact", "segmented"}));
  cmd.add_option("--segments", o.segments,
                 "time segments L of --field-comp segmented; default: the fewest whose interpolators err by "
                 "at most 0.2% over the field map's range and the readout")
      ->check(CLI::Range(1, 256));
  cmd.add_option("--maps-crop", o.maps_crop,
                 "sense's maps (lowres, espirit, true) are zero where the low-resolution root sum of squares is below this "
                 "fraction of its peak (outside the object; 0 = nowhere)")
      ->check(finite_number())
      ->check(number_in(0.0, 0.9))
      ->capture_default_str();
  cmd.add_flag("--no-gridding", o.no_gridding, "skip the gridding baselines");
  cmd.add_option("--cache-dir", o.cache_dir, "where Q is cached per trajectory (default ~/.cache/fhdrecon)")
      ->check(non_empty_path());
  cmd.add_flag("--no-cache", o.no_cache, "neither read nor write the Q cache");
  // Which of them were given (warn_ignored_options): each applies to some scans or models only.
  for (const char* name : {"--nufft-tol", "--admm-rho", "--admm-inner", "--coil-combine", "--maps", "--calibration",
                           "--maps-crop", "--trig", "--kernel"})
    cmd.get_option(name)->each([&o, name](const std::string&) { o.given.insert(name); });
}

std::shared_ptr<const Truth> truth_of(const Phantom& p, const std::vector<float>* gain) {
  auto t = std::make_shared<Truth>();
  const Phantom* ph = &p;
  t->image = [ph, gain](const ImageGrid& g) {
    std::vector<float> v = voxel_image(*ph, g.nx, g.ny, g.nz);
    if (gain && gain->size() == v.size())
      for (std::size_t i = 0; i < v.size(); ++i) v[i] *= (*gain)[i];
    return v;
  };
  // The band-limited ceiling is the phantom's alone: no ceiling for an array's view.
  if (!gain) t->kspace = [ph](double kx, double ky, double kz) { return ph->kspace(kx, ky, kz); };
  return t;
}

ReconOptions make_recon_options(const SolverOptions& o, const Source* src, Progress& progress) {
  const Phantom* phantom = src ? src->phantom.get() : nullptr;
  ReconOptions r;
  r.fhd.trig = parse_trig(o.trig);
  r.fhd.kernel = o.kernel;
  r.fhd.method = o.fhd == "nufft" ? FhdMethod::Nufft : FhdMethod::Exact;
  r.fhd.nufft_tol = o.nufft_tol;
  r.iters = o.iters;
  r.tol = o.tol;
  r.reg = o.reg;
  // l2 always has a number (auto's fallback); a sparse prior without one
  // (its default, or auto) takes its noise rule (recon/problem/lambda_auto.hpp).
  const bool sparse_rule = o.reg != "l2" && (!o.lambda_given || o.lambda_auto);
  if (!sparse_rule) r.lambda = o.lambda;
  r.lambda_auto = o.lambda_auto;
  r.precondition = !o.no_precond;
  r.admm_rho = o.admm_rho;
  r.admm_inner = o.admm_inner;
  r.dcf = o.dcf;
  r.coil_combine = o.coil_combine;
  r.maps = o.maps;
  if (o.maps == "true") {  // the synthesized coils' own maps, for comparison
    if (!src || src->true_maps.empty())
      throw InputError("--maps", "value", "true", "needs coils synthesized here (--phantom with --coils)");
    r.maps = "given";
    r.given_maps = std::make_shared<const CoilData>(src->true_maps);
  }
  r.calibration = o.calibration;
  r.field_comp = o.field_comp;
  r.segments = o.segments;
  r.maps_crop = o.maps_crop;
  r.gridding = !o.no_gridding;
  if (!o.no_cache) r.q_cache_dir = o.cache_dir.empty() ? default_q_cache_dir() : o.cache_dir + "/q";
  if (phantom) r.truth = truth_of(*phantom, src->array_gain.empty() ? nullptr : &src->array_gain);
  r.observer.begin = [&progress](const std::string& s) { progress.begin(s); };
  r.observer.progress = [&progress](double f) { progress.update(f); };
  r.observer.end = [&progress](const std::string& s, double t, bool queued) { progress.end(s, t, queued); };
  return r;
}

void check_field_options(const SourceOptions& src, const SolverOptions& o) {
  const bool map = src.off_resonance_hz > 0 || !src.field_map.empty();
  const std::string& m = o.field_comp;
  if (src.input.empty() && !map && (m == "exact" || m == "segmented"))
    throw InputError("--field-comp", "value", m,
                     "the scan has no field map (synthesize with --off-resonance, or give --field-map FILE)");
  if (o.segments > 0 && (m == "none" || m == "exact" || (m == "auto" && src.input.empty() && !map)))
    throw InputError("--segments", "value", std::to_string(o.segments), "needs --field-comp segmented");
}

DeviceOptions make_device_options(const SolverOptions& o) {
  DeviceOptions d;
  d.tune_dir = o.cache_dir;  // tuned launch profiles live beside Q ("" = the default root)
  return d;
}

namespace {
std::string& cmdline_storage() {
  static std::string s;
  return s;
}
}  // namespace

std::string command_line() { return cmdline_storage(); }

void set_command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  cmdline_storage() = s;
}

}  // namespace fhd::app
