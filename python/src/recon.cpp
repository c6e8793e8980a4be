// fhdrecon.reconstruct: what the CLI's default command does to a scan
// (app/cmd_recon.cpp), from Python. The pipeline is reached through ONE
// function, run_pipeline below: when the pipeline is rewritten (issue 23),
// only it changes. Options take the CLI's defaults (app/recon_options.hpp).
#include <cmath>
#include <complex>
#include <memory>
#include <string>

#include <nanobind/stl/pair.h>

#include "common.hpp"
#include "core/error.hpp"
#include "recon/device/device.hpp"
#include "recon/coils/coil_compress.hpp"
#include "recon/coils/coil_noise.hpp"
#include "recon/pipeline/pipeline.hpp"
#include "recon/problem/problem.hpp"
#include "recon/plan/qcache.hpp"
#ifdef FHD_HAVE_CUDA
#include "cuda/device/gpu_device.hpp"
#endif

namespace fhd::py {
namespace {

// The options reconstruct() takes besides the pipeline's own.
struct RunOptions {
  std::string device = "auto";  // auto | cpu | gpu | gpu:N
  bool prewhiten = true;        // with the scan's noise samples, as the CLI (--no-prewhiten)
  int virtual_coils = 0;        // --virtual-coils K; 0 = none
};

std::unique_ptr<Device> make_device(const std::string& device, std::string* used) {
  const bool numbered = device.rfind("gpu:", 0) == 0;
  const std::string n = numbered ? device.substr(4) : "";
  if (!(device == "auto" || device == "cpu" || device == "gpu" ||
        (numbered && !n.empty() && n.size() < 6 && n.find_first_not_of("0123456789") == std::string::npos)))
    throw InputError("reconstruct", "device", device, "must be auto, cpu, gpu or gpu:N");
#ifdef FHD_HAVE_CUDA
  if (device != "cpu") {
    const int id = numbered ? std::stoi(n) : 0;
    try {
      auto dev = make_gpu_device(id);
      *used = dev->name();
      return dev;
    } catch (const DeviceError&) {
      if (device != "auto") throw;  // asked for a GPU: say why not
    }
  }
#else
  if (device != "cpu" && device != "auto")
    throw InputError("reconstruct", "device", device, "this fhdrecon was built without CUDA");
#endif
  auto dev = make_cpu_device();
  *used = dev->name();
  return dev;
}

// As app/source.cpp's process_coils: prewhiten, then compress. Returns
// whether the coils were mixed, and by what (`mixing`, K x C).
bool process_coils(std::vector<Scan>& coils, const RunOptions& run, CMatrix& mixing) {
  // As the CLI refuses it (app/source.cpp): -1 or more than the coils were ignored.
  if (run.virtual_coils < 0 || run.virtual_coils > int(coils.size()))
    throw InputError("reconstruct", "virtual_coils", std::to_string(run.virtual_coils),
                     "must be in 0..coils (" + std::to_string(coils.size()) + "); 0 keeps the coils");
  if (coils.size() < 2) return false;
  mixing = CMatrix::identity(int(coils.size()));
  bool mixed = false;
  if (run.prewhiten && prewhiten(coils, &mixing)) {
    for (Scan& c : coils) c.provenance["prewhitened"] = "yes";
    mixed = true;
  }
  if (run.virtual_coils > 0 && run.virtual_coils < int(coils.size())) {
    mixing = multiply(compress_coils(coils, run.virtual_coils).matrix, mixing);
    mixed = true;
  }
  return mixed;
}

// THE entry to the pipeline (see the file's comment).
ReconResult run_pipeline(std::vector<Scan>& coils, const ReconOptions& opt, const RunOptions& run,
                         std::string* backend_name) {
  std::vector<const Scan*> list;
  for (const Scan& s : coils) list.push_back(&s);
  // The scan as given, with its options: given maps count the coils before
  // compression (the coils are compared, and warned of, by the pipeline's own check).
  check_scans(list, opt, false);
  CMatrix mixing;
  ReconOptions o = opt;
  // Given maps are the scan's coils' sensitivities; SENSE sees the mixed coils
  // (W y, U_K^H W y), whose maps are mixed alike (as the CLI's --maps true).
  if (process_coils(coils, run, mixing) && opt.maps == "given")
    o.given_maps = std::make_shared<const CoilData>(mix_maps(*opt.given_maps, mixing));
  std::unique_ptr<Device> dev = make_device(run.device, backend_name);
  list.clear();
  for (const Scan& s : coils) list.push_back(&s);
  return reconstruct_coils(*dev, list, o);
}

const char* type_name(int) { return "an int"; }
const char* type_name(double) { return "a number"; }
const char* type_name(bool) { return "a bool"; }
const char* type_name(const std::string&) { return "a string"; }

// o[key] as a T, or an InputError naming the keyword and what it was given
// (nanobind's cast failed with a bare "std::bad_cast": iters=2**40, lam='foo').
template <class T>
T cast_option(const nb::dict& o, const char* key) {
  T v;
  if (!nb::try_cast<T>(o[key], v))
    throw InputError("reconstruct", key, nb::cast<std::string>(nb::repr(o[key])), std::string("must be ") + type_name(T{}));
  return v;
}

template <class T>
T opt_or(const nb::dict& o, const char* key, T fallback) {
  return o.contains(key) && !o[key].is_none() ? cast_option<T>(o, key) : fallback;
}

// The given maps, [C, voxels] complex64 (python/fhdrecon/_recon.py shapes them).
std::shared_ptr<CoilData> given_maps(const nb::handle& h) {
  auto a = nb::cast<nb::ndarray<const cfloat, nb::ndim<2>, nb::c_contig, nb::device::cpu>>(h);
  auto maps = std::make_shared<CoilData>(a.shape(0));
  for (std::size_t c = 0; c < maps->size(); ++c) {
    (*maps)[c].assign(a.data() + c * a.shape(1), a.data() + (c + 1) * a.shape(1));  // checked by check_scans
  }
  return maps;
}

// Python's keyword options -> the pipeline's; absent ones keep ReconOptions'
// defaults (the CLI's). The library checks them (OptionError names the field,
// which is the keyword).
ReconOptions recon_options(const nb::dict& o, RunOptions& run) {
  ReconOptions r;
  const ReconOptions d;
  r.fhd.trig = parse_trig(opt_or<std::string>(o, "trig", "single"));
  r.fhd.kernel = opt_or<std::string>(o, "kernel", "");
  const std::string fhd = opt_or<std::string>(o, "fhd", "exact");
  if (fhd != "exact" && fhd != "nufft") throw InputError("reconstruct", "fhd", fhd, "must be exact or nufft");
  r.fhd.method = fhd == "nufft" ? FhdMethod::Nufft : FhdMethod::Exact;
  r.fhd.nufft_tol = opt_or<double>(o, "nufft_tol", 1e-6);
  r.iters = opt_or<int>(o, "iters", d.iters);
  r.tol = opt_or<double>(o, "tol", d.tol);
  r.reg = opt_or<std::string>(o, "reg", d.reg);
  // lam: a number, "auto", or None (the default: l2 0.03, a sparse prior its noise rule).
  const bool given = o.contains("lam") && !o["lam"].is_none();
  const bool is_auto = given && nb::isinstance<nb::str>(o["lam"]) && nb::cast<std::string>(o["lam"]) == "auto";
  if (given && !is_auto) r.lambda = cast_option<double>(o, "lam");
  r.lambda_auto = is_auto;
  r.admm_rho = opt_or<double>(o, "admm_rho", d.admm_rho);
  r.admm_inner = opt_or<int>(o, "admm_inner", d.admm_inner);
  r.precondition = opt_or<bool>(o, "precondition", d.precondition);
  r.dcf = opt_or<std::string>(o, "dcf", d.dcf);
  r.coil_combine = opt_or<std::string>(o, "coil_combine", d.coil_combine);
  r.maps = opt_or<std::string>(o, "maps", d.maps);
  if (o.contains("given_maps") && !o["given_maps"].is_none()) {
    r.maps = "given";
    r.given_maps = given_maps(o["given_maps"]);
  }
  r.calibration = opt_or<int>(o, "calibration", d.calibration);
  r.maps_crop = opt_or<double>(o, "maps_crop", d.maps_crop);
  r.field_comp = opt_or<std::string>(o, "field_comp", d.field_comp);
  r.segments = opt_or<int>(o, "segments", d.segments);
  r.gridding = opt_or<bool>(o, "gridding", d.gridding);
  r.q_cache_dir = opt_or<std::string>(o, "cache_dir", "");
  if (!r.q_cache_dir.empty()) r.q_cache_dir += "/q";  // the CLI's layout under --cache-dir
  run.device = opt_or<std::string>(o, "device", "auto");
  run.prewhiten = opt_or<bool>(o, "prewhiten", true);
  run.virtual_coils = opt_or<int>(o, "virtual_coils", 0);
  return r;
}

nb::object maybe(const std::optional<double>& v) { return v ? nb::cast(*v) : nb::none(); }

// The report: what report.json holds of a run, as a dict.
nb::dict report(const ReconResult& res, const std::string& backend) {
  nb::dict r;
  r["backend"] = backend;
  r["matrix"] = nb::make_tuple(res.grid.nx, res.grid.ny, res.grid.nz);
  nb::list stages;
  double total = 0;
  for (const StageTime& s : res.stages) {
    nb::dict st;
    st["name"] = s.name;
    st["seconds"] = s.seconds;
    st["note"] = s.note;
    stages.append(st);
    total += s.seconds;
  }
  r["stages"] = stages;
  r["total_seconds"] = total;
  nb::dict methods;
  for (const MethodResult& m : res.methods) {
    nb::dict d;
    d["seconds"] = m.seconds;
    d["psnr_db"] = maybe(m.psnr);
    d["nrmse"] = maybe(m.nrmse);
    d["iterations"] = m.iters;
    methods[m.name.c_str()] = d;
  }
  r["methods"] = methods;
  nb::dict cg;
  cg["iterations"] = res.cg.iters;
  cg["converged"] = res.cg.converged;
  cg["residuals"] = res.cg.residuals;
  r["cg"] = cg;
  r["lambda"] = res.lambda_abs;
  r["lambda_relative"] = res.lambda_rel;
  r["lambda_rule"] = res.lambda_rule;
  r["q_cached"] = res.q_cached;
  r["field_method"] = res.field.method;
  return r;
}

nb::tuple reconstruct(const nb::dict& scan, const nb::dict& options) {
  std::vector<Scan> coils = scans_from_dict(scan);
  RunOptions run;
  const ReconOptions opt = recon_options(options, run);
  ReconResult res;
  std::string backend;
  {
    nb::gil_scoped_release unlocked;
    res = run_pipeline(coils, opt, run, &backend);
  }
  nb::dict images;
  const ImageGrid& g = res.grid;
  for (MethodResult& m : res.methods)
    images[m.name.c_str()] =
        owned_array(std::move(m.image), {std::size_t(g.nz), std::size_t(g.ny), std::size_t(g.nx)});
  return nb::make_tuple(images, report(res, backend));
}

}  // namespace

void bind_recon(nb::module_& m) {
  m.def("reconstruct", &reconstruct, nb::arg("scan"), nb::arg("options"));
  m.def(
      "ignored_options",
      [](const std::vector<std::string>& given, std::size_t coils, const std::string& coil_combine,
         const std::string& reg, bool nufft) {
        std::vector<std::pair<std::vector<std::string>, std::string>> out;
        for (IgnoredOptions& g : ignored_options({given.begin(), given.end()}, coils, coil_combine, reg, nufft))
          out.emplace_back(std::move(g.fields), std::move(g.why));
        return out;
      },
      nb::arg("given"), nb::arg("coils"), nb::arg("coil_combine"), nb::arg("reg"), nb::arg("nufft"));
  // The CLI's --cache-dir default, as reconstruct's cache_dir takes it (Q lies in its q/).
  m.def("default_cache_dir", [] { return default_cache_root(); });
}

}  // namespace fhd::py
