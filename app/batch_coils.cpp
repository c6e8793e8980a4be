// Multi-coil reconstruction: every coil, combined by root sum of squares.
#include <chrono>
#include <cmath>
#include <optional>

#include "app/batch.hpp"
#include "app/batch_plan.hpp"
#include "core/error.hpp"
#include "recon/metrics.hpp"
#include "recon/reference.hpp"

namespace fhd::app {
namespace {

void check_same_trajectory(const Scan& a, const Scan& b) {
  if (!(a.grid == b.grid) || a.traj.kx != b.traj.kx || a.traj.ky != b.traj.ky || a.traj.kz != b.traj.kz ||
      a.phi != b.phi)
    throw InputError("coils: the coils of one scan must share grid, trajectory and Phi");
}

// acc += |r|^2 per method (acc's images hold the running sum in their real part)
// and the stage times of the same stage.
void add_coil(ReconResult& acc, const ReconResult& r) {
  for (std::size_t i = 0; i < acc.methods.size() && i < r.methods.size(); ++i) {
    std::vector<cfloat>& a = acc.methods[i].image;
    const std::vector<cfloat>& b = r.methods[i].image;
    for (std::size_t v = 0; v < a.size(); ++v) a[v] += std::norm(b[v]);
    acc.methods[i].seconds += r.methods[i].seconds;
  }
  for (std::size_t i = 0; i < acc.stages.size() && i < r.stages.size(); ++i)
    if (acc.stages[i].name == r.stages[i].name) acc.stages[i].seconds += r.stages[i].seconds;
}

void squares_of(ReconResult& r) {
  for (MethodResult& m : r.methods)
    for (cfloat& v : m.image) v = std::norm(v);
}

void root_of(ReconResult& r) {
  for (MethodResult& m : r.methods)
    for (cfloat& v : m.image) v = std::sqrt(v.real());
}

// The phantom's band-limited ceiling, reference and scores, once for the
// combined image (the pipeline would do them per coil).
void add_phantom_scores(ReconResult& r, const ReconOptions& opt) {
  const ImageGrid& g = r.grid;
  if (opt.observer.begin) opt.observer.begin("band-limited ceiling");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<cfloat> ceil = band_limited_reference(*opt.phantom, g);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.observer.end) opt.observer.end("band-limited ceiling", s);
  r.stages.push_back({"band-limited ceiling", s, ""});
  r.methods.push_back({"band-limited ceiling", std::move(ceil), s, {}, {}});
  r.reference = voxel_image(*opt.phantom, g.nx, g.ny, g.nz);
  for (MethodResult& m : r.methods) {
    m.psnr = psnr(m.image, r.reference);
    m.nrmse = nrmse(m.image, r.reference);
  }
}

}  // namespace

ReconResult reconstruct_coils(Backend& be, const std::vector<const Scan*>& coils, const ReconOptions& opt) {
  if (coils.empty()) throw InputError("coils: no coil data");
  if (coils.size() == 1) return run_reconstruction(be, *coils[0], opt);
  for (const Scan* c : coils) check_same_trajectory(*coils[0], *c);
  ReconOptions per = opt;
  per.phantom = nullptr;  // scored once, on the combined image
  std::optional<TempDir> tmp;
  if (per.q_cache_dir.empty()) per.q_cache_dir = tmp.emplace("q").path();
  ReconResult acc = run_reconstruction(be, *coils[0], per);
  squares_of(acc);
  for (std::size_t c = 1; c < coils.size(); ++c) add_coil(acc, run_reconstruction(be, *coils[c], per));
  root_of(acc);
  std::string n = std::to_string(coils.size()) + " coils";
  for (StageTime& s : acc.stages) s.note = s.note.empty() ? n : s.note + ", " + n;
  if (opt.phantom) add_phantom_scores(acc, opt);
  return acc;
}

std::vector<const Scan*> coil_list(const Source& src) {
  std::vector<const Scan*> coils = {&src.scan};
  for (const Scan& c : src.more_coils) coils.push_back(&c);
  return coils;
}

}  // namespace fhd::app
