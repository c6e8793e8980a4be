#pragma once
// The problem builder (docs/architecture.md): scan + options -> the model A,
// its normal operator A^H A, the right-hand side A^H y, and what the solver
// needs to know (whether the plan's circulant preconditioner models A^H A).
// Models compose: the plan's A = Phi F (NUFFT or exact gather), or a field
// model in its place; several coils with SENSE stack compose(A, diag(S_c)).
// Each part is a timed stage, named as in the report's stage table.
#include <optional>
#include <vector>

#include "recon/eval/result.hpp"
#include "recon/eval/stages.hpp"
#include "recon/problem/lambda_auto.hpp"
#include "recon/problem/options.hpp"

namespace fhd {

struct Problem {
  OpPtr model;       // A: image -> every coil's samples; model->normal() is A^H A (the Toeplitz one,
                     // or sums of it, where the model has one), made at its first call
  VecPtr rhs;        // A^H y
  bool preconditionable = false;  // the plan's circulant preconditioner models `normal` (not SENSE)
  std::string solver_stage;       // "CG" or "SENSE CG": the solver's stage name for l2
  std::string note;               // e.g. "8 coils" for the solver's stage note
  std::optional<NoiseEstimate> noise;
};

// One scan (`coils` of one) or SENSE over several coils (`sense`): the model
// and A^H y, with their stages recorded in res.stages (timed by `clock`);
// res.field and res.q_cached filled.
Problem build_problem(Plan& plan, const std::vector<const Scan*>& coils, bool sense, const ReconOptions& opt,
                      ReconResult& res, StageClock& clock);

// The checks that need the scan (the coils share grid, trajectory and Phi;
// field compensation has a field map to use; given maps number the coils and
// are finite, |m| <= 1e3; the k-space's largest sample is 0 or at least
// 1e-15), OptionError or InputError before any work.
// compare_coils false skips the comparison of the coils' trajectories (8 coils
// of 1M samples: 84 MB, about 7 ms), of the given maps' values and of the
// k-space's scale, for data already checked.
void check_scans(const std::vector<const Scan*>& coils, const ReconOptions& opt, bool compare_coils = true);

// The method field_comp resolves to for this scan, and the field's range.
FieldReport field_report(const Scan& s, const ReconOptions& opt);

}  // namespace fhd
