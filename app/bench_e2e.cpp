#include "app/bench_e2e.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/commands.hpp"
#include "app/device.hpp"
#include "app/log.hpp"
#include "app/outputs.hpp"
#include "app/recon_options.hpp"
#include "app/report.hpp"
#include "app/source.hpp"
#include "core/clock.hpp"

namespace fhd::app {

nlohmann::json run_end_to_end(int matrix, std::size_t samples, TrigMode trig, const std::string& device) {
  SourceOptions so;
  so.phantom = "shepp3d";
  so.matrix = matrix;
  so.traj = "radial3d";
  so.samples = samples;
  auto t0 = std::chrono::steady_clock::now();
  Source src = make_source(so);
  double synth_s = seconds_since(t0);
  Devices devs = select_devices(device);
  SolverOptions sol;
  sol.trig = to_string(trig);
  sol.no_cache = true;
  Progress progress(!global_options().quiet);
  ReconOptions ro = make_recon_options(sol, &src, progress);
  ReconResult res = run_reconstruction(devs.main(), src.scan, ro);
  res.stages.insert(res.stages.begin(), StageTime{"synthesize (source)", synth_s, "analytic k-space"});
  OutputOptions oo;
  oo.dir = (std::filesystem::temp_directory_path() / "fhdrecon-bench-e2e").string();
  t0 = std::chrono::steady_clock::now();
  RunInfo info{command_line(), devs.name(), src.description, &ro, src.scan.traj.size(), 1};
  write_outputs(plan_outputs(oo), res, results_json(res, info));
  res.stages.push_back(StageTime{"I/O (write outputs)", seconds_since(t0), oo.dir});
  std::fputs(("\nend to end:\n" + results_table(res, info)).c_str(), stdout);
  return results_json(res, info);
}

}  // namespace fhd::app
