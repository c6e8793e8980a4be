// The default command: fhdrecon [--phantom shepp3d | --input FILE] [options]
#include <spdlog/spdlog.h>

#include <filesystem>
#include <future>
#include <memory>

#include "app/option_checks.hpp"
#include "app/batch.hpp"
#include "app/batch_workers.hpp"
#include "app/commands.hpp"
#include "app/device.hpp"
#include "app/log.hpp"
#include "app/outputs.hpp"
#include "app/recon_options.hpp"
#include "app/report.hpp"
#include "app/source.hpp"
#include "core/error.hpp"
#include "io/cfl.hpp"

namespace fhd::app {
namespace {

struct ReconCommand {
  SourceOptions source;
  SolverOptions solver;
  OutputOptions output;
  std::string device = "auto";
  std::string gpus;  // --gpus: several GPUs of this host for the exact FhD and Q
};

// --device and --gpus as the backend's options; bad values fail before any work.
DeviceOptions device_options(const ReconCommand& c) {
  DeviceOptions d = make_device_options(c.solver);
  if (c.gpus.empty()) return d;
  if (c.device == "cpu") throw InputError("--gpus " + c.gpus + " with --device cpu: choose one");
  for (std::size_t i : pick_gpus(c.gpus)) d.gpus.push_back(int(i));
  return d;
}

void reconstruct_into(const OutputPlan& plan, const ReconCommand& c, const std::string& command_line);

// The --json report must not land on a file the run reads (`--json scan.h5`
// replaced the scan with the report).
void check_json_not_input(const OutputOptions& out, const SourceOptions& src) {
  if (out.json.empty()) return;
  std::vector<std::string> inputs = {src.input, src.traj_file, src.field_map};
  for (const std::string& base : {cfl_base(src.input), cfl_base(src.traj_file)})
    if (!base.empty()) inputs.insert(inputs.end(), {base + ".cfl", base + ".hdr"});
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (!in.empty() && std::filesystem::equivalent(out.json, in, ec))
      throw InputError("--json", "path", out.json, "is an input of this run (" + in + "); choose another path");
  }
}

void run(const ReconCommand& c, const std::string& command_line) {
  check_json_not_input(c.output, c.source);
  if (!c.solver.no_cache) check_cache_outside(c.solver.cache_dir, c.output.dir, "--out " + c.output.dir);
  OutputPlan plan = plan_outputs(c.output);  // fails before any work if DIR is unusable
  try {
    reconstruct_into(plan, c, command_line);
  } catch (...) {
    discard_outputs(plan);
    throw;
  }
}

void reconstruct_into(const OutputPlan& plan, const ReconCommand& c, const std::string& command_line) {
  spdlog::debug("making the source");
  // The GPU's context (about 0.2 s) starts while the source is read or
  // synthesized; a bad source still fails first, and alone: the device line
  // is logged here, after the source's.
  std::string device_note;
  if (c.solver.fhd == "nufft") prefer_eager_module_loading();  // before the first CUDA call
  DeviceOptions dev = device_options(c);
  check_field_options(c.source, c.solver);
  std::future<Devices> devices = std::async(std::launch::async, [&c, &dev, &device_note] {
    Devices d = select_devices(c.device, dev, &device_note);
    spdlog::debug("devices made");  // the timeline shows which of the two paths waits for the other
    return d;
  });
  Source src = make_source(c.source);
  spdlog::info("source: {}", src.description);
  const std::string source = c.source.input.empty() ? "--phantom" : c.source.input;
  check_dcf_option(c.solver.dcf, !c.solver.no_gridding, src.scan, source);
  Progress progress(!global_options().quiet);
  ReconOptions ro = make_recon_options(c.solver, &src, progress);
  const std::vector<const Scan*> coils = coil_list(src);
  warn_ignored_options(c.solver, coils.size());
  // Without --gpus, the host's other GPUs join when the scan is big enough
  // to gain from them (default_more_gpus); their contexts are made beside
  // the host work too.
  const std::vector<int> more =
      c.gpus.empty() ? default_more_gpus(c.device, ro.fhd.method == FhdMethod::Exact,
                                         double(coils[0]->grid.voxels()) * double(coils[0]->traj.size()) * double(coils.size()))
                     : std::vector<int>{};
  std::future<Devices> extra;
  if (!more.empty()) extra = std::async(std::launch::async, [&more, &dev] { return more_gpus(more, dev); });
  HostWork host = host_work_for(source, coils, ro, c.device == "gpu");  // while the GPU's context is made
  spdlog::debug("reference image and density weights made");
  Devices devs = devices.get();
  if (!device_note.empty()) spdlog::info("{}", device_note);
  if (extra.valid()) {
    join_gpus(devs, extra, more, dev);
    if (devs.list.size() > 1) spdlog::info("device: {} GPUs for this scan's exact gather (--gpus 1 for one)", devs.list.size());
  }
  spdlog::debug("devices ready: {}", devs.name());
  ReconResult res = reconstruct_coils(devs.main(), coils, ro, std::move(host), devs.others());
  const std::string device_name = devs.name();
  std::future<void> released = release_devices(std::move(devs), dev);  // while the outputs are written
  RunInfo info{command_line, device_name, src.description, &ro, coils[0]->traj.size(), coils.size(), coils[0]};
  std::fputs(results_table(res, info).c_str(), stdout);
  std::fflush(stdout);
  write_outputs(plan, res, results_json(res, info), src.scan.geometry);
  spdlog::debug("outputs written");
  released.get();
}

}  // namespace

void add_recon_options(CLI::App& app) {
  auto c = std::make_shared<ReconCommand>();
  add_source_options(app, c->source);
  add_solver_options(app, c->solver);
  add_output_options(app, c->output);
  app.add_option("--device", c->device, "where to compute: auto | cpu | gpu")
      ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
      ->capture_default_str();
  app.add_option("--gpus", c->gpus,
                 "GPUs of this host for the exact FhD and Q, split by voxel slabs: all | N (the first N) | LIST "
                 "(e.g. 0,2); default GPU 0, and every GPU when the exact gather is big enough to gain "
                 "(docs/choices.md)");
  // Runs only when no subcommand was given (main checks).
  app.final_callback([c, &app] {
    if (!app.get_subcommands().empty()) return;
    run(*c, command_line());
  });
}

}  // namespace fhd::app
