#include "app/batch_scan.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
#include "core/error.hpp"

using nlohmann::json;

namespace fhd::app {
namespace {

// A scan file that is not a BART base name (whose .cfl and .hdr the reader
// checks), its problem said of the file: batch takes no --input to name.
void check_scan_file(const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) throw file_error(file, "cannot be opened: " + ec.message());
  if (!fs::exists(st)) throw file_error(file, "does not exist");
  if (fs::is_directory(st)) throw file_error(file, "is a directory, not a scan file");
  if (!fs::is_regular_file(st)) throw file_error(file, "is not a regular file");
}

}  // namespace

ReadScan read_batch_scan(const ScanJob& job) {
  SourceOptions so;
  so.input = job.file;
  so.traj_file = bart_traj_for(job.file);
  if (so.traj_file.empty()) check_scan_file(job.file);
  ReadScan scan;
  scan.file = job.file;
  scan.source = std::make_unique<Source>(make_source(so));
  check_dcf_option(job.solver.dcf, !job.solver.no_gridding, scan.source->scan, job.file);
  OutputOptions oo;
  oo.dir = job.output;
  scan.plan = plan_outputs(oo);
  scan.progress = std::make_unique<Progress>(job.progress);
  scan.options = make_recon_options(job.solver, scan.source.get(), *scan.progress);
  if (!job.q_cache.empty()) scan.options.q_cache_dir = job.q_cache;
  scan.coils = coil_list(*scan.source);
  return scan;
}

void prepare_batch_scan(ReadScan& scan, bool beside_gpu) {
  scan.host = host_work_for(scan.file, scan.coils, scan.options, beside_gpu);
  // Reading a cached Q (134 MB at 128^3) took 0.12 s of each scan's GPU turn;
  // here it overlaps the previous scan. Kept until this scan's plan has used it.
  const Scan& s0 = *scan.coils[0];
  scan.q = cached_q(s0.traj, s0.grid, plan_options(s0, scan.options));
}

ScanResult reconstruct_batch_scan(WarmState& warm, ReadScan& scan, const ScanJob& job) {
  ScanResult out;
  out.result = reconstruct_for_batch(warm, scan.coils, scan.options, std::move(scan.host));
  out.coils = static_cast<int>(scan.coils.size());
  const ReconOptions& ro = scan.options;
  RunInfo info{command_line(), warm.devices().name(), scan.source->description, &ro, scan.coils[0]->traj.size(),
               scan.coils.size(), scan.coils[0]};
  out.report = results_json(out.result, info);
  out.report["batch"] = {
      {"input", job.file}, {"options_fingerprint", job.fingerprint}, {"coils", out.coils}, {"run_id", job.run_id}};
  return out;
}

BatchRow write_batch_scan(const ReadScan& scan, const ScanResult& result, const ScanJob& job) {
  write_outputs(scan.plan, result.result, result.report, scan.source->scan.geometry);
  BatchRow row;
  row.file = job.file;
  row.output = job.output;
  fill_from_result(row, result.result, result.coils);
  return row;
}

BatchRow reconstruct_scan(const ScanJob& job) {
  WarmState warm(job.device, make_device_options(job.solver), 0);
  // Its output set, unless written, is dropped on the way out.
  ReadScan scan = read_batch_scan(job);
  prepare_batch_scan(scan, warm.expects_gpu());
  const ScanResult result = reconstruct_batch_scan(warm, scan, job);
  BatchRow row = write_batch_scan(scan, result, job);
  test_fault_after_write(job.file);
  return row;
}

std::optional<BatchRow> outputs_of_run(const std::string& file, const std::string& output, const std::string& run_id) {
  if (run_id.empty()) return std::nullopt;
  try {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(output + "/report.json", ec)) return std::nullopt;  // a FIFO blocks the open
    std::ifstream f(output + "/report.json");
    if (!f) return std::nullopt;
    const json report = json::parse(f);
    if (!report_shape_problem(report).empty() || report.value("/batch/run_id"_json_pointer, std::string()) != run_id)
      return std::nullopt;
    BatchRow row;
    row.file = file;
    row.output = output;
    fill_from_report(row, report);
    row.q_source = report.value("q_cached", false) ? "cache" : "computed";
    row.status = "ok";
    return row;
  } catch (const std::exception&) {
    return std::nullopt;
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
    spdlog::debug("{}: {}", job.file, row.reason);  // the batch logs the row once
  }
  write_json(row_out, row_json(row));
  return row.status == "ok" ? 0 : 2;
}

std::vector<std::string> job_option_args(const ScanJob& job) {
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
  std::vector<std::string> a = {"--fingerprint", job.fingerprint, "--device", job.device, "--iters",
                                std::to_string(s.iters), "--tol", num(s.tol), "--dcf", s.dcf, "--fhd", s.fhd,
                                "--nufft-tol", num(s.nufft_tol), "--reg", s.reg, "--coil-combine", s.coil_combine,
                                "--maps", s.maps, "--calibration", std::to_string(s.calibration), "--maps-crop",
                                num(s.maps_crop), "--field-comp", s.field_comp, "--admm-rho", num(s.admm_rho),
                                "--admm-inner", std::to_string(s.admm_inner)};
  if (s.lambda_given) a.insert(a.end(), {"--lambda", s.lambda_auto ? "auto" : num(s.lambda)});
  if (s.given.count("--trig")) a.insert(a.end(), {"--trig", s.trig});
  if (!s.kernel.empty()) a.insert(a.end(), {"--kernel", s.kernel});
  if (s.segments > 0) a.insert(a.end(), {"--segments", std::to_string(s.segments)});
  if (s.no_precond) a.push_back("--no-precond");
  if (s.no_gridding) a.push_back("--no-gridding");
  if (!s.cache_dir.empty()) a.insert(a.end(), {"--cache-dir", s.cache_dir});
  if (s.no_cache) a.push_back("--no-cache");
  if (!job.q_cache.empty()) a.insert(a.end(), {"--q-cache", job.q_cache});
  if (!job.run_id.empty()) a.insert(a.end(), {"--run-id", job.run_id});
  return a;
}

std::vector<std::string> log_args(bool quiet) {
  if (spdlog::should_log(spdlog::level::debug)) return {"--verbose"};  // with their times, whatever `quiet` says
  return quiet ? std::vector<std::string>{"--quiet"} : std::vector<std::string>{};
}

std::vector<std::string> scan_child_args(const ScanJob& job, const std::string& row_out, bool quiet) {
  std::vector<std::string> a = log_args(quiet);
  a.insert(a.end(), {"batch-scan", job.file, "--scan-out", job.output, "--row-out", row_out});
  const std::vector<std::string> options = job_option_args(job);
  a.insert(a.end(), options.begin(), options.end());
  return a;
}

namespace {

// The fault FHDRECON_TEST_SCAN_FAULT names for `file` ("" = none).
std::string test_fault(const std::string& file) {
  const char* spec = std::getenv("FHDRECON_TEST_SCAN_FAULT");
  if (!spec) return "";
  std::istringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t colon = item.find(':');
    if (colon == std::string::npos || colon + 1 == item.size()) continue;
    if (file.find(item.substr(colon + 1)) != std::string::npos) return item.substr(0, colon);
  }
  return "";
}

}  // namespace

void test_fault_for(const std::string& file) {
  const std::string what = test_fault(file);
  if (what == "abort") std::abort();
  if (what == "hang")
    for (;;) pause();
}

void test_fault_after_write(const std::string& file) {
  if (test_fault(file) != "interrupt") return;
  // The batch is this process's parent (a child per scan or a warm worker).
  kill(getppid(), SIGINT);
  for (int i = 0; i < 100; ++i) usleep(100000);  // 10 s: the batch's stop comes first
}

}  // namespace fhd::app

