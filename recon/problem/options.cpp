#include "recon/problem/options.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "recon/solvers/regularizer.hpp"

namespace fhd {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void one_of(const std::string& field, const std::string& value, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw OptionError(field, value, "must be one of " + list);
}

void finite_in(const std::string& field, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi)
    throw OptionError(field, num(v), "must be a finite number in [" + num(lo) + ", " + num(hi) + "]");
}

}  // namespace

void validate(const ReconOptions& o) {
  one_of("coil_combine", o.coil_combine, {"rss", "sense"});
  one_of("maps", o.maps, {"lowres", "espirit", "given"});
  if (o.maps == "given" && !o.given_maps) throw OptionError("maps", "given", "needs the maps (given_maps)");
  if (o.calibration < 4 || o.calibration > 256)
    throw OptionError("calibration", std::to_string(o.calibration), "must be in 4..256");
  finite_in("maps_crop", o.maps_crop, 0.0, 0.9);
  one_of("field_comp", o.field_comp, {"auto", "none", "exact", "segmented"});
  if (o.segments < 0 || o.segments > 256)
    throw OptionError("segments", std::to_string(o.segments), "must be in 1..256 (0 = the rule)");
  if (o.segments > 0 && (o.field_comp == "none" || o.field_comp == "exact"))
    throw OptionError("segments", std::to_string(o.segments), "needs field_comp segmented");
  const std::vector<std::string> regs = regularizer_names();
  if (std::find(regs.begin(), regs.end(), o.reg) == regs.end()) {
    std::string list;
    for (const std::string& r : regs) list += (list.empty() ? "" : ", ") + r;
    throw OptionError("reg", o.reg, "must be one of " + list);
  }
  if (o.lambda) finite_in("lambda", *o.lambda, 0.0, 1e6);
  if (o.iters < 0 || o.iters > 100000) throw OptionError("iters", std::to_string(o.iters), "must be in 0..100000");
  finite_in("tol", o.tol, 0.0, 1.0);
  finite_in("admm_rho", o.admm_rho, 1e-6, 1e3);  // the CLI's range
  if (o.admm_inner < 1 || o.admm_inner > 1000)
    throw OptionError("admm_inner", std::to_string(o.admm_inner), "must be in 1..1000");
  one_of("dcf", o.dcf, {"auto", "radial", "pipe-menon"});
  // Whatever the method, as the CLI checks --nufft-tol: a bad value is a mistake
  // even where the exact gather ignores it.
  finite_in("nufft_tol", o.fhd.nufft_tol, 1e-7, 1e-1);
}

double fixed_lambda(const ReconOptions& opt) { return opt.lambda ? *opt.lambda : 0.03; }

bool wants_noise_estimate(const ReconOptions& opt) {
  return opt.lambda_auto || (find_regularizer(opt.reg) && !opt.lambda);
}

bool uses_sense(std::size_t coils, const ReconOptions& opt) { return coils > 1 && opt.coil_combine == "sense"; }

bool maps_from_calibration(const ReconOptions& opt) { return !(opt.maps == "given" && opt.maps_crop <= 0.0); }

std::vector<IgnoredOptions> ignored_options(const std::set<std::string>& given, std::size_t coils,
                                            const std::string& coil_combine, const std::string& reg, bool nufft) {
  std::vector<IgnoredOptions> out;
  auto add = [&](std::vector<std::string> fields, const std::string& why) {
    fields.erase(std::remove_if(fields.begin(), fields.end(), [&](const std::string& f) { return !given.count(f); }),
                 fields.end());
    if (!fields.empty()) out.push_back({std::move(fields), why});
  };
  if (coils == 1)
    add({"coil_combine", "maps", "calibration", "maps_crop"}, "for several coils; this scan has one");
  else if (coils > 1 && coil_combine == "rss")
    add({"maps", "calibration", "maps_crop"}, "for SENSE's maps; coil combination rss uses none");
  if (reg == "l2") add({"admm_rho", "admm_inner"}, "for ADMM, reg tv or wavelet; l2 runs CG");
  if (!nufft) add({"nufft_tol"}, "for the NUFFT; the exact gather has no tolerance");
  if (nufft) add({"trig", "kernel"}, "for the exact gather; the NUFFT has its own");
  return out;
}

}  // namespace fhd
