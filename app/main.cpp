// fhdrecon: iterative reconstruction of non-Cartesian MRI (PMPP's IMPATIENT MRI).
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "app/commands.hpp"
#include "app/device.hpp"
#include "fhd_git_revision.h"  // generated in the build directory
#include "app/log.hpp"
#include "app/option_checks.hpp"
#include "app/recon_options.hpp"
#include "io/atomic_file.hpp"
#include "io/h5util.hpp"
#include "io/reader_child.hpp"
#include "recon/device/cpu_threads.hpp"
#include "recon/plan/qcache.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {
GlobalOptions g_options;
}
const GlobalOptions& global_options() { return g_options; }
}  // namespace fhd::app

namespace {

// Exit codes: 0 ok, 1 internal error, 2 bad input or usage, 3 device problem.
int fail(int code, const std::string& msg) {
  std::fprintf(stderr, "fhdrecon: error: %s\n", fhd::printable(msg).c_str());  // no raw ESC/BEL from a file or option
  return code;
}

// Defaults of the threading libraries, which read their variables once, when
// they load: so the CLI sets the ones the user did not and runs itself again
// (Linux only, /proc/self/exe; where exec fails the run goes on as it is).
// - OMP_WAIT_POLICY=passive: OpenMP's threads wait for the next parallel
//   region by spinning (libgomp: up to 300,000 spins) unless passive. On cores
//   shared with other busy processes the spinning steals the time the working
//   threads wait for: the default CPU run took 67-73 s instead of 10 s beside
//   two busy processes (docs/cpu-backend.md, "Threads and load"). Left alone
//   when the user chose a policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT).
// - OPENBLAS_NUM_THREADS=1: OpenBLAS starts a thread per core when it loads,
//   in every process (the reader child and batch workers too); our BLAS calls
//   are small and already inside our own parallel loops. On a 64-core host the
//   pool failed to start under a memory limit (pthread_create: Resource
//   temporarily unavailable) and ate a reader child's address-space cap.
void prefer_thread_defaults(char** argv) {
#ifdef __linux__
  bool changed = false;
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT"))
    changed |= setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
  if (!std::getenv("OPENBLAS_NUM_THREADS") && !std::getenv("OMP_NUM_THREADS"))
    changed |= setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0;
  if (changed) execv("/proc/self/exe", argv);
#else
  (void)argv;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fhd::app;
  fhd::serve_reader_child(argc, argv);  // a reader child (io/reader_child.hpp) ends here
  prefer_thread_defaults(argv);
  fhd::size_openmp_to_process();  // affinity and cgroup quota (recon/device/cpu_threads.hpp)
  fhd::h5::no_cleanup_at_exit();  // before any HDF5 call (io/h5util.hpp: a failed close crashed at exit)
  fhd::install_interrupt_cleanup();
  fhd::set_q_temporary_hooks(fhd::register_temporary, fhd::forget_temporary);  // Q-cache temporaries too  // SIGINT/SIGTERM remove temporaries, keep earlier outputs
  CLI::App app{"fhdrecon: iterative reconstruction of non-Cartesian MRI (FhD + Toeplitz CG, gridding baseline)",
               "fhdrecon"};
  app.set_version_flag("--version", std::string("fhdrecon ") + FHD_VERSION + " (git " + FHD_GIT_REVISION +
                                        ", CUDA backend " + (cuda_built() ? "built in" : "not built") + ")");
  app.add_flag("--quiet,-q", g_options.quiet, "no progress and no info log (warnings and errors only)");
  app.add_flag("--verbose", g_options.verbose, "debug log");
  app.require_subcommand(0, 1);
  add_recon_options(app);
  add_synth_command(app);
  add_bench_command(app);
  add_bench_nufft_command(app);
  add_tune_command(app);
  add_batch_command(app);
  add_validate_command(app);
  set_command_line(argc, argv);
  // Logging must be set up after the flags are parsed but before any callback
  // runs: parse_complete_callback fires between the two.
  app.parse_complete_callback([] { setup_logging(g_options.quiet, g_options.verbose); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(2, e.what());
  } catch (const fhd::OptionError& e) {  // a library option, named by its flag
    return fail(2, fhd::app::flag_of(e.field()) + " = " + e.value() + ": " + e.problem());
  } catch (const fhd::InputError& e) {
    return fail(2, e.what());
  } catch (const fhd::DeviceError& e) {
    return fail(3, e.what());
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
  spdlog::debug("exiting");  // the --verbose timeline's last line
  return 0;
}
