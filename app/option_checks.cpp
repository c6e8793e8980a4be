#include "app/option_checks.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "recon/gridding/dcf.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

// s read by strtod into x. `number`: s is one number (else the option's own
// type check speaks). Returns why a number is refused: hexadecimal ("0x10"
// was taken as 16) or too small for a double ("1e-400" was taken as 0; a
// subnormal such as 1e-310 is the tiny number it is; too large is not finite).
std::string read_number(const std::string& s, double& x, bool& number) {
  char* end = nullptr;
  errno = 0;
  x = std::strtod(s.c_str(), &end);
  number = end != s.c_str() && *end == '\0';
  if (!number) return "";
  if (s.find_first_of("xX") != std::string::npos) return "must be a decimal number, not " + s;
  if (errno == ERANGE && x == 0) return "is too small for a double (it would be read as 0): " + s;
  return "";
}

}  // namespace

const CLI::Validator& finite_number() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        if (s.empty()) return "must be a number, not empty";  // CLI11 read "" as the default, silently
        double x = 0;
        bool number = false;
        if (std::string bad = read_number(s, x, number); !bad.empty() || !number) return bad;
        return std::isfinite(x) ? "" : "must be a finite number, not " + s;
      },
      "FINITE");
  return v;
}

CLI::Validator number_in(double lo, double hi) {
  char range[64];
  std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
  return CLI::Validator(
      [lo, hi, r = std::string(range)](std::string& s) -> std::string {
        double x = 0;
        bool number = false;
        if (std::string bad = read_number(s, x, number); !bad.empty() || !number) return bad;
        return x >= lo && x <= hi ? "" : "must be in " + r + ", not " + s;
      },
      "NUMBER in " + std::string(range));
}

const CLI::Validator& lambda_value() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        if (s == "auto") return "";
        double x = 0;
        bool number = false;
        if (std::string bad = read_number(s, x, number); !bad.empty()) return bad;
        if (!number) return "must be auto or a number, not " + s;
        if (!std::isfinite(x)) return "must be a finite number, not " + s;
        return x >= 0 && x <= 1e6 ? "" : "must be auto or a number in [0, 1e6], not " + s;
      },
      "auto|NUMBER");
  return v;
}

const CLI::Validator& seed_value() {
  static const CLI::Validator v(
      [](std::string& s) -> std::string {
        const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) return "must be a whole number 0 .. 18446744073709551615, not " + s;
        errno = 0;
        std::strtoull(s.c_str(), nullptr, 10);
        return errno == ERANGE ? "must be at most 18446744073709551615 (2^64-1), not " + s : "";
      },
      "0..2^64-1");
  return v;
}

const CLI::Validator& non_empty_path() {
  static const CLI::Validator v([](std::string& s) -> std::string { return s.empty() ? "must not be empty" : ""; },
                                "PATH");
  return v;
}

void check_dcf_option(const std::string& dcf, bool gridding, const Scan& scan, const std::string& source,
                      bool skip_gridding) {
  // The file's weights win (docs/conventions.md, "Gridding baseline"); "auto"
  // is the default and asks for nothing the file's weights do not give.
  if (!scan.dcf.empty() && dcf != "auto")
    spdlog::warn("--dcf {}: ignored ({} has its own density weights, /dcf, and they are used)", dcf, source);
  if (!gridding || dcf != "radial" || !scan.dcf.empty()) return;
  auto it = scan.provenance.find("trajectory");
  const std::string kind = it == scan.provenance.end() ? "" : it->second;
  if (is_radial_kind(kind)) return;
  throw InputError(source, "--dcf", "radial",
                   "radial weights need a radial3d, radial2d or stack-of-stars trajectory; this one is " +
                       (kind.empty() ? std::string("of unknown kind (imported)") : kind) +
                       ": use --dcf pipe-menon or auto" + (skip_gridding ? " (or --no-gridding)" : ""));
}

HostWork host_work_for(const std::string& source, const std::vector<const Scan*>& coils, const ReconOptions& ro,
                       bool beside_gpu) {
  // The NUFFT transforms two axes or three (an axis of one voxel is idle);
  // the exact gather takes a 1D scan too.
  const ImageGrid& g = coils.at(0)->grid;
  if (ro.fhd.method == FhdMethod::Nufft && (g.nx > 1) + (g.ny > 1) + (g.nz > 1) < 2)
    throw InputError(source, "matrix", dims_string(g),
                     "--fhd nufft needs two axes of 2 or more voxels (this scan is 1D); use --fhd exact");
  try {
    return prepare_host_work(coils, ro, beside_gpu);
  } catch (const DcfError& e) {
    // The weights serve the gridding baselines and SENSE's calibration: name
    // the way out that this run has (--no-gridding does not help SENSE).
    const bool sense = uses_sense(coils.size(), ro);
    const std::string also = sense ? (ro.gridding ? " (SENSE's coil maps weigh their calibration by it too)"
                                                  : " (SENSE's coil maps weigh their calibration by it)")
                                   : " (or --no-gridding)";
    throw InputError(source, "--dcf", ro.dcf,
                     "radial weights for this " + e.kind() + " trajectory: " + e.problem() +
                         "; use --dcf pipe-menon" + also);
  }
}

std::string flag_of(const std::string& field) {
  std::string flag = "--" + field;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

}  // namespace fhd::app
