#include "app/batch_scan.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "app/batch.hpp"
#include "app/batch_plan.hpp"
#include "app/device.hpp"
#include "app/log.hpp"
#include "app/option_checks.hpp"
#include "app/outputs.hpp"
#include "app/report.hpp"
#include "app/source.hpp"
#include "io/text_outputs.hpp"

using nlohmann::json;

namespace fhd::app {

BatchRow reconstruct_scan(const ScanJob& job) {
  SourceOptions so;
  so.input = job.file;
  so.traj_file = bart_traj_for(job.file);
  Source src = make_source(so);
  check_dcf_option(job.solver.dcf, !job.solver.no_gridding, src.scan, job.file);
  OutputOptions oo;
  oo.dir = job.output;
  OutputPlan plan = plan_outputs(oo);
  try {
    Devices devs = select_devices(job.device, make_device_options(job.solver));
    Progress progress(job.progress);
    ReconOptions ro = make_recon_options(job.solver, &src, progress);
    if (!job.q_cache.empty()) ro.q_cache_dir = job.q_cache;
    std::vector<const Scan*> coils = coil_list(src);
    ReconResult res = reconstruct_coils(devs.main(), coils, ro);
    RunInfo info{command_line(), devs.name(), src.description, to_string(ro.fhd.trig), ro.fhd.kernel, ro.iters,
                 fixed_lambda(ro)};
    json j = results_json(res, info);
    j["batch"] = {{"input", job.file}, {"options_fingerprint", job.fingerprint}, {"coils", coils.size()}};
    write_outputs(plan, res, j, src.scan.geometry);
    BatchRow row;
    row.file = job.file;
    row.output = job.output;
    fill_from_result(row, res, static_cast<int>(coils.size()));
    return row;
  } catch (...) {
    discard_outputs(plan);
    throw;
  }
}

namespace {

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

int run_scan_child(const ScanJob& job, const std::string& row_out) {
  BatchRow row;
  try {
    test_fault_for(job.file);
    row = reconstruct_scan(job);
  } catch (const std::exception& e) {
    row = BatchRow{};
    row.file = job.file;
    row.output = job.output;
    row.status = "failed";
    row.reason = one_line(e.what());
    spdlog::error("{}: {}", job.file, row.reason);
  }
  write_json(row_out, row_json(row));
  return row.status == "ok" ? 0 : 2;
}

std::vector<std::string> scan_child_args(const ScanJob& job, const std::string& row_out, bool quiet) {
  std::vector<std::string> a;
  if (quiet) a.push_back("--quiet");
  const SolverOptions& s = job.solver;
  auto num = [](double v) {
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
  };
  // Every solver option the parent was given reaches the child (the child
  // parses them with the same add_solver_options); --lambda and --trig only
  // when given, so the child applies the same defaults (TV's noise rule, no
  // --trig warning with --fhd nufft).
  a.insert(a.end(), {"batch-scan", job.file, "--scan-out", job.output, "--row-out", row_out, "--fingerprint",
                     job.fingerprint, "--device", job.device, "--iters", std::to_string(s.iters), "--tol", num(s.tol),
                     "--dcf", s.dcf, "--fhd", s.fhd, "--nufft-tol", num(s.nufft_tol), "--reg", s.reg,
                     "--coil-combine", s.coil_combine, "--maps", s.maps, "--calibration", std::to_string(s.calibration),
                     "--maps-crop", num(s.maps_crop), "--field-comp", s.field_comp, "--admm-rho", num(s.admm_rho),
                     "--admm-inner", std::to_string(s.admm_inner)});
  if (s.lambda_given) a.insert(a.end(), {"--lambda", s.lambda_auto ? "auto" : num(s.lambda)});
  if (s.trig_given) a.insert(a.end(), {"--trig", s.trig});
  if (!s.kernel.empty()) a.insert(a.end(), {"--kernel", s.kernel});
  if (s.segments > 0) a.insert(a.end(), {"--segments", std::to_string(s.segments)});
  if (s.no_precond) a.push_back("--no-precond");
  if (s.no_gridding) a.push_back("--no-gridding");
  if (!s.cache_dir.empty()) a.insert(a.end(), {"--cache-dir", s.cache_dir});
  if (s.no_cache) a.push_back("--no-cache");
  if (!job.q_cache.empty()) a.insert(a.end(), {"--q-cache", job.q_cache});
  return a;
}

void test_fault_for(const std::string& file) {
  const char* spec = std::getenv("FHDRECON_TEST_SCAN_FAULT");
  if (!spec) return;
  std::istringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t colon = item.find(':');
    if (colon == std::string::npos || colon + 1 == item.size()) continue;
    std::string what = item.substr(0, colon), name = item.substr(colon + 1);
    if (file.find(name) == std::string::npos) continue;
    if (what == "abort") std::abort();
    if (what == "hang")
      for (;;) pause();
  }
}

}  // namespace fhd::app
