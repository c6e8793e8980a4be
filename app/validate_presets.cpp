// validate's presets: what each sets, and how the user's own options win.
#include <map>

#include "app/validate.hpp"
#include "core/error.hpp"

namespace fhd::app {
namespace {

// What a preset sets; the user's own options win (apply_preset).
struct Preset {
  std::string phantom, traj;
  int matrix = 0;
  std::size_t samples = 0;  // 0: the source's default for the matrix
  int iters = 30;
  double lambda = 1e-3;
  int cpu_matrix = 0;
  double min_gain_db = 3.0;  // iterative over trilinear gridding, from measurements (docs/accuracy.md)
};

// docs/accuracy.md says why each preset is what it is.
const std::map<std::string, Preset>& presets() {
  static const std::map<std::string, Preset> p = {
      // The book's case as far as public facts go: 3D, 128^3, ~1M non-Cartesian
      // samples. The CPU rows run on a 64^3 copy with the same sample density:
      // the 128^3 double Q on a CPU would take far longer than the GPU rows.
      // Radial 3D with a ramp DCF grids well: at 100 CG iterations iterative led
      // trilinear gridding by 2.4 dB on the H100 (0.2 dB at 30 iterations:
      // CG is far from converged there), so 1 dB is asked.
      {"book", {"shepp3d", "radial3d", 128, 1048576, 100, 0.03, 64, 1.0}},
      // Every CPU check in well under a minute on two cores. Random samples at
      // 1.6 N^2 (half of radial's Nyquist count): the case where gridding's
      // density compensation breaks down and the book's gap shows (8.6 dB measured).
      {"small", {"shepp2d", "random", 128, 26214, 30, 1e-3, 0, 3.0}},
      // For the tests: the same kind of problem in about a second (measured
      // margin 3.3 dB; 2 dB asked, so the test does not hang on a hair).
      {"tiny", {"shepp2d", "random", 32, 1638, 20, 1e-3, 0, 2.0}},
  };
  return p;
}

}  // namespace

const std::vector<std::string>& preset_names() {
  static std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [k, v] : presets()) n.push_back(k);
    return n;
  }();
  return names;
}

void apply_preset(ValidateConfig& c, const std::function<bool(const std::string&)>& given) {
  auto it = presets().find(c.preset);
  if (it == presets().end()) throw InputError("validate: --preset = " + c.preset + ": unknown preset");
  const Preset& p = it->second;
  if (!given("--phantom")) c.source.phantom = p.phantom;
  if (!given("--traj")) c.source.traj = p.traj;
  if (!given("--matrix")) c.source.matrix = p.matrix;
  if (!given("--samples") && !given("--spokes")) c.source.samples = p.samples;
  if (!given("--iters")) c.solver.iters = p.iters;
  if (!given("--lambda")) {  // the presets' rows compare solvers at one fixed lambda
    c.solver.lambda = p.lambda;
    c.solver.lambda_auto = false;
  }
  if (!given("--cpu-matrix")) c.cpu_matrix = p.cpu_matrix;
  if (!given("--min-gain-db")) c.thresholds.min_gain_over_trilinear_db = p.min_gain_db;
  // A preset's CPU copy is smaller than the main problem; a user's --matrix
  // below it means one data set is enough.
  if (c.cpu_matrix >= c.source.matrix) c.cpu_matrix = 0;
}

}  // namespace fhd::app
