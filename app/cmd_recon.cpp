// The default command: fhdrecon [--phantom shepp3d | --input FILE] [options]
#include <spdlog/spdlog.h>

#include <future>
#include <memory>

#include "app/option_checks.hpp"
#include "app/batch.hpp"
#include "app/commands.hpp"
#include "app/device.hpp"
#include "app/log.hpp"
#include "app/outputs.hpp"
#include "app/recon_options.hpp"
#include "app/report.hpp"
#include "app/source.hpp"

namespace fhd::app {
namespace {

struct ReconCommand {
  SourceOptions source;
  SolverOptions solver;
  OutputOptions output;
  std::string device = "auto";
};

void reconstruct_into(const OutputPlan& plan, const ReconCommand& c, const std::string& command_line);

void run(const ReconCommand& c, const std::string& command_line) {
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
  std::future<std::unique_ptr<Backend>> backend = std::async(std::launch::async, [&c, &device_note] {
    return select_backend(c.device, make_device_options(c.solver), &device_note);
  });
  Source src = make_source(c.source);
  spdlog::info("source: {}", src.description);
  check_dcf_option(c.solver.dcf, !c.solver.no_gridding, src.scan, c.source.input.empty() ? "--phantom" : c.source.input);
  std::unique_ptr<Backend> be = backend.get();
  if (!device_note.empty()) spdlog::info("{}", device_note);
  spdlog::debug("backend ready: {}", be->name());
  Progress progress(!global_options().quiet);
  ReconOptions ro = make_recon_options(c.solver, &src, progress);
  ReconResult res = reconstruct_coils(*be, coil_list(src), ro);  // root sum of squares over coils
  RunInfo info{command_line, be->name(), src.description, to_string(ro.fhd.trig), ro.fhd.kernel, ro.iters,
               ro.lambda};
  std::fputs(results_table(res, info).c_str(), stdout);
  std::fflush(stdout);
  write_outputs(plan, res, results_json(res, info), src.scan.geometry);
  spdlog::debug("outputs written");
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
  // Runs only when no subcommand was given (main checks).
  app.final_callback([c, &app] {
    if (!app.get_subcommands().empty()) return;
    run(*c, command_line());
  });
}

}  // namespace fhd::app
