// validate's row runner: the data sets, one reconstruction per iterative row
// (the baselines riding on one of them), each row scored against the phantom
// and its FhD against the float64 direct sum (recon/).
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <set>

#include "app/device.hpp"
#include "app/log.hpp"
#include "app/option_checks.hpp"
#include "app/validate.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/eval/metrics.hpp"
#include "recon/pipeline/pipeline.hpp"

namespace fhd::app {
namespace {

// cmpMu on the host: conj(Phi) D (Phi empty: D), the float64 reference's weights.
std::vector<cfloat> mu_host(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) {
  std::vector<cfloat> mu = data;
  for (std::size_t m = 0; m < phi.size() && m < mu.size(); ++m) mu[m] *= std::conj(phi[m]);
  return mu;
}

// One iterative row to run: where and how.
struct RowSpec {
  std::string precision, device;
  TrigMode trig;
  std::string kernel;  // "" = the backend's default
  FhdMethod method = FhdMethod::Exact;
};

// The checked sfu row runs the direct "coarsened" kernel: like the book's
// FastTrig step it takes a hardware sine per (sample, voxel) pair. What
// `--trig sfu` runs by default (separable FP32, hardware sine/cosine only in its
// per-axis tables) is shown beside it. The direct kernel sums each tile apart
// before adding it to the voxel's total: with one float sum over 1M samples its
// FhD error (2e-5) was amplified by 100 CG iterations to 5.6 dB (accuracy.md).
const std::vector<RowSpec>& iterative_rows() {
  static const std::vector<RowSpec> rows = {
      {"double", "cpu", TrigMode::Double, ""},
      {"single", "cpu", TrigMode::Single, ""},
      {"single", "gpu", TrigMode::Single, ""},
      {"sfu", "gpu", TrigMode::Sfu, "coarsened"},
      {"sfu, default kernel", "gpu", TrigMode::Sfu, ""},
      {"tf32", "gpu", TrigMode::Single, "separable-tf32"},
      // FhD and Q by the NUFFT at its default tolerance (1e-6), single precision.
      {"nufft", "cpu", TrigMode::Single, "", FhdMethod::Nufft},
      {"nufft", "gpu", TrigMode::Single, "", FhdMethod::Nufft},
  };
  return rows;
}

// A data set and what every row on it shares.
struct DataSet {
  Source src;
  std::string label;
  std::vector<float> reference;      // phantom at voxel centers
  std::vector<std::size_t> probe;    // voxels where FhD is checked
  std::vector<cdouble> fhd_ref;      // float64 direct sum at `probe`
};

// A copy of the problem at another matrix with the same sample density, so the
// CPU rows see the same kind of data at a size they can afford. The samples
// scale by r^3 in 3D (r^2 in 2D): --readout by r, and --spokes by r^2 for a 3D
// kooshball or random set, by r for a stack (its spokes are per partition and
// the partitions, nz, scale by r too; r^2 there gave r^4, half the density).
// 3D is the phantom's (the grid's nz), as make_source decides it.
SourceOptions scaled_source(const SourceOptions& o, int matrix) {
  SourceOptions s = o;
  const bool is3d = make_phantom(o.phantom)->dims() == 3;
  const bool stack = o.traj.rfind("stack-of-", 0) == 0;
  double r = double(matrix) / o.matrix;
  s.matrix = matrix;
  if (o.samples) s.samples = std::size_t(double(o.samples) * std::pow(r, is3d ? 3 : 2));
  if (o.spokes) s.spokes = std::max(1, int(std::lround(o.spokes * std::pow(r, is3d && !stack ? 2 : 1))));
  if (o.readout) s.readout = std::max(2, int(std::lround(o.readout * r)));
  return s;
}

// Voxels to check FhD on: a fixed pseudo-random set (all when n is 0 or too
// large), so the float64 reference stays affordable at 128^3 x 1M samples.
std::vector<std::size_t> probe_voxels(std::size_t voxels, int n) {
  std::vector<std::size_t> idx;
  if (n <= 0 || std::size_t(n) >= voxels) {
    idx.resize(voxels);
    for (std::size_t i = 0; i < voxels; ++i) idx[i] = i;
    return idx;
  }
  std::mt19937_64 rng(20250601);
  std::set<std::size_t> pick;
  std::uniform_int_distribution<std::size_t> u(0, voxels - 1);
  while (pick.size() < std::size_t(n)) pick.insert(u(rng));
  return {pick.begin(), pick.end()};
}

DataSet make_data(const SourceOptions& o, const std::string& dcf, int ref_voxels) {
  DataSet d;
  d.src = make_source(o);
  check_one_coil(o, 1 + d.src.more_coils.size());
  if (!d.src.phantom) throw InputError("validate: the data's phantom is unknown, so there is no PSNR to check");
  // Before the first row: the gridding of the first row said it, after the rows before it had run.
  check_dcf_option(dcf, true, d.src.scan, "validate", false);
  const Scan& s = d.src.scan;
  d.label = fmt::format("{}^{}, {} samples", s.grid.nx, s.grid.is3d() ? 3 : 2, s.traj.size());
  d.reference = voxel_image(*d.src.phantom, s.grid.nx, s.grid.ny, s.grid.nz);
  d.probe = probe_voxels(s.grid.voxels(), ref_voxels);
  auto t0 = std::chrono::steady_clock::now();
  d.fhd_ref = fhd_reference(s.traj, mu_host(s.phi, s.data), s.grid, d.probe);
  spdlog::info("validate: {}: float64 FhD reference at {} voxels in {:.1f} s", d.label, d.probe.size(),
               seconds_since(t0));
  return d;
}

// A row's identity; the rest is filled by whoever ran it (or says why not).
ValidateRow row_of(const std::string& precision, const std::string& device, const std::string& data) {
  ValidateRow row;
  row.precision = precision;
  row.device = device;
  row.data = data;
  return row;
}

// One iterative row through run_reconstruction; with `extras` it also carries
// the gridding baselines and the ceiling (run once, on this row's backend).
std::vector<ValidateRow> run_row(Device& dev, const DataSet& d, const RowSpec& spec, ReconOptions ro,
                                 bool extras) {
  ro.fhd.trig = spec.trig;
  ro.fhd.kernel = spec.kernel;
  ro.fhd.method = spec.method;
  ro.gridding = extras;
  ro.keep_fhd = true;  // the FhD error against float64
  ro.truth = extras ? truth_of(*d.src.phantom) : nullptr;
  ro.q_cache_dir.clear();  // every row computes its own Q: honest times, its own trig
  // The book's solver: plain CG for a fixed number of iterations. Converged
  // (preconditioned) CG amplifies a TF32 FhD's 1e-4 error through the
  // operator's smallest eigenvalues: -3.4 dB at 128^3 (docs/accuracy.md).
  ro.precondition = false;
  ReconResult r = run_reconstruction(dev, d.src.scan, ro);
  std::vector<ValidateRow> out;
  for (const MethodResult& m : r.methods) {
    ValidateRow row = row_of(m.name == "iterative" ? spec.precision : "single", spec.device, d.label);
    row.method = m.name;
    row.ran = true;
    if (m.name == "band-limited ceiling") {  // FFTW double on the host, whatever the backend
      row.precision = "double";
      row.device = "cpu";
    }
    row.psnr = psnr(m.image, d.reference);
    row.nrmse = nrmse(m.image, d.reference);
    row.seconds = m.seconds;
    out.push_back(row);
  }
  out.front().fhd_relerr = relative_error_at(r.fhd, d.probe, d.fhd_ref);
  return out;
}

ValidateRow not_run(const RowSpec& spec, const std::string& data, const std::string& why) {
  ValidateRow row = row_of(spec.precision, spec.device, data);
  row.method = "iterative";
  row.not_run = why;
  return row;
}

}  // namespace

void check_one_coil(const SourceOptions& o, std::size_t file_coils) {
  const std::string one = "validate checks one coil's reconstruction; use fhdrecon ";
  if (o.coils > 1)
    throw InputError("validate", "--coils", std::to_string(o.coils),
                     one + "--coils " + std::to_string(o.coils) + " for SENSE");
  if (o.virtual_coils > 0)
    throw InputError("validate", "--virtual-coils", std::to_string(o.virtual_coils),
                     one + "--virtual-coils " + std::to_string(o.virtual_coils) + " for SENSE on compressed coils");
  if (file_coils > 1)
    throw InputError("validate", "--input", o.input,
                     "has " + std::to_string(file_coils) + " coils; " + one + "--input " + o.input + " for SENSE");
}

ValidateReport run_validate(const ValidateConfig& c, bool show_progress) {
  if (c.cpu_matrix && !c.source.input.empty())
    throw InputError("validate: --cpu-matrix needs a phantom source, not --input " + c.source.input);
  ValidateReport rep;
  rep.preset = c.preset;
  std::string why_no_gpu = "GPU rows disabled";
  bool gpu = c.gpu && gpu_available(&why_no_gpu);

  Progress progress(show_progress);
  ReconOptions ro = make_recon_options(c.solver, nullptr, progress);

  // Main data set: the GPU rows, and the CPU rows too unless they get a copy.
  // Without a GPU and with a CPU copy, only the copy is made (nothing else runs on main).
  bool split = c.cpu_matrix > 0;
  std::unique_ptr<DataSet> main_set, cpu_set;
  if (gpu || !split) main_set = std::make_unique<DataSet>(make_data(c.source, c.solver.dcf, c.ref_voxels));
  if (split)
    cpu_set = std::make_unique<DataSet>(make_data(scaled_source(c.source, c.cpu_matrix), c.solver.dcf, c.ref_voxels));
  const DataSet& cpu_data = split ? *cpu_set : *main_set;
  std::string main_label = main_set ? main_set->label : "not made (no GPU)";
  if (main_set) rep.data_sets.push_back(main_set->src.description);
  if (cpu_set) rep.data_sets.push_back(cpu_set->src.description + " (CPU rows)");

  // The baselines ride on the first row run on the primary data set: the GPU
  // single row when there is a GPU, else the CPU single row.
  std::string extras_on = gpu ? "gpu" : "cpu";
  std::unique_ptr<Device> cpu_dev = make_cpu_device();
  Devices gpu_devs;
  if (gpu) gpu_devs = select_devices("gpu", make_device_options(c.solver));
  bool extras_done = false;
  for (const RowSpec& spec : iterative_rows()) {
    bool on_gpu = spec.device == "gpu";
    if (on_gpu && !gpu) {
      rep.rows.push_back(not_run(spec, main_label, why_no_gpu));
      continue;
    }
    const DataSet& d = on_gpu ? *main_set : cpu_data;
    bool carry = !extras_done && spec.device == extras_on && spec.precision == "single";
    extras_done = extras_done || carry;
    spdlog::info("validate: iterative {} on {} ({})", spec.precision, spec.device, d.label);
    std::vector<ValidateRow> got = run_row(on_gpu ? gpu_devs.main() : *cpu_dev, d, spec, ro, carry);
    rep.rows.insert(rep.rows.end(), got.begin(), got.end());
  }
  // Keep the baselines after the iterative rows.
  std::stable_partition(rep.rows.begin(), rep.rows.end(), [](const ValidateRow& r) { return r.method == "iterative"; });
  rep.checks = evaluate_checks(rep.rows, c.thresholds);
  return rep;
}

}  // namespace fhd::app
