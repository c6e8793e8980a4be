// fhdrecon validate: the accuracy table of the book's case study on one data set.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "app/option_checks.hpp"
#include "app/commands.hpp"
#include "app/validate.hpp"
#include "io/atomic_file.hpp"
#include "io/text_outputs.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

struct ValidateCommand {
  ValidateConfig config;
  std::string out_dir = "fhdrecon-out";
  std::string json, markdown;  // "" = DIR/validate.json, DIR/validate.md
  bool no_gpu = false;
};

void run(ValidateCommand& c, CLI::App& sub) {
  apply_preset(c.config, [&sub](const std::string& name) { return sub.count(name) > 0; });
  c.config.gpu = !c.no_gpu;
  check_one_coil(c.config.source);  // before any work; a multi-coil --input once read (run_validate)
  std::string json = c.json.empty() ? c.out_dir + "/validate.json" : c.json;
  std::string md = c.markdown.empty() ? c.out_dir + "/validate.md" : c.markdown;
  // Fail on an unusable destination before minutes of work, making nothing:
  // a run refused later (a multi-coil --input, --dcf radial on a spiral) left
  // an empty --out. The files' folders are made when they are written.
  check_writable_file(json, c.json.empty() ? "--out" : "--json");
  check_writable_file(md, c.markdown.empty() ? "--out" : "--markdown");
  ValidateReport rep = run_validate(c.config, !global_options().quiet);
  std::fputs(validate_table(rep).c_str(), stdout);
  std::fflush(stdout);
  write_json(json, validate_json(rep, command_line()));
  write_text(md, validate_markdown(rep, command_line()));
  spdlog::info("wrote {} and {}", json, md);
  // A failed check is a failed run (exit 1), after the evidence is written.
  if (!checks_pass(rep.checks)) throw std::runtime_error("validate: a check failed (see the table)");
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto c = std::make_shared<ValidateCommand>();
  CLI::App* sub = app.add_subcommand(
      "validate", "one data set through double/single/sfu/TF32 on CPU and GPU, gridding and the ceiling; checks");
  sub->add_option("--preset", c->config.preset, "book (128^3, ~1M samples, GPU) | small (CPU) | tiny (tests)")
      ->check(CLI::IsMember(preset_names()))
      ->capture_default_str();
  add_source_options(*sub, c->config.source);
  SolverOptions& s = c->config.solver;
  sub->add_option("--iters", s.iters, "CG iterations (default: the preset's)")->check(CLI::Range(0, 100000));
  sub->add_option_function<std::string>(
         "--lambda", [&s](const std::string& v) { set_lambda(s, v); },
         "regularization: auto or a number relative to Q(0) (default: the preset's)")
      ->check(lambda_value());
  sub->add_option("--tol", s.tol, "CG relative residual to stop at")->check(number_in(0.0, 1.0))->capture_default_str();
  sub->add_option("--dcf", s.dcf,
                  "density compensation of the gridding baselines and of SENSE's calibration: "
                  "auto | radial | pipe-menon")
      ->check(CLI::IsMember({"auto", "radial", "pipe-menon"}))
      ->capture_default_str();
  sub->add_option("--cpu-matrix", c->config.cpu_matrix,
                  "run the CPU rows on a copy of the problem at this matrix, same sample density (0: same data)")
      ->check(CLI::Range(0, 1024));
  sub->add_option("--ref-voxels", c->config.ref_voxels,
                  "voxels where FhD is compared with the float64 direct sum (0: all)")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  sub->add_option("--min-gain-db", c->config.thresholds.min_gain_over_trilinear_db,
                  "iterative must beat trilinear gridding by this many dB (default: the preset's)")
      ->check(finite_number());
  sub->add_flag("--no-gpu", c->no_gpu, "skip the GPU rows (they print as not run)");
  sub->add_option("--out", c->out_dir, "output directory")->capture_default_str();
  sub->add_option("--json", c->json, "JSON report (default DIR/validate.json)")->check(non_empty_path());
  sub->add_option("--markdown", c->markdown, "Markdown table (default DIR/validate.md)")->check(non_empty_path());
  // Hidden: lets a test demand the impossible and see a check fail.
  sub->add_option("--max-single-double-db", c->config.thresholds.single_vs_double_db)
      ->check(finite_number())
      ->group("");
  sub->callback([c, sub] { run(*c, *sub); });
}

}  // namespace fhd::app
