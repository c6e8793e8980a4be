#include "recon/eval/evaluation.hpp"

#include <algorithm>
#include <cmath>

#include <omp.h>
#include <sys/resource.h>

#include "core/clock.hpp"
#include "recon/eval/metrics.hpp"
#include "recon/eval/reference.hpp"

namespace fhd {

PsnrRecorder::PsnrRecorder(Device& dev, const std::vector<float>& reference, std::vector<double>& out)
    : dev_(dev), n_(reference.size()), out_(out) {
  if (reference.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  // Made complex piece by piece in one small buffer: a whole fresh complex
  // copy (16 MB at 128^3) cost 10 ms of page faults on the GPU machine, a
  // gap between the last stage and the solver's.
  constexpr std::size_t kPiece = std::size_t(1) << 17;
  std::vector<cfloat> piece(std::min(kPiece, n_));
  ref_ = dev.zeros(n_);
  double sse = 0;  // of the zero image: the reference's own energy
  for (std::size_t at = 0; at < n_; at += kPiece) {
    const std::size_t len = std::min(kPiece, n_ - at);
    for (std::size_t i = 0; i < len; ++i) {
      const float r = reference[at + i];
      piece[i] = cfloat(r, 0.f);
      peak_ = std::max(peak_, std::fabs(double(r)));
      sse += double(r) * double(r);
    }
    dev.to_device(piece.data(), *ref_->view(at, len));
  }
  zero_start_ = psnr_from_sse(sse, n_, peak_);
  seconds += seconds_since(t0);
}

void PsnrRecorder::operator()(int, const DeviceVector& x) {
  if (!ref_) return;
  const auto t0 = std::chrono::steady_clock::now();
  out_.push_back(psnr_from_sse(dev_.magnitude_sse(x, *ref_), n_, peak_));
  seconds += seconds_since(t0);
}

MethodResult direct_method(std::string name, std::vector<cfloat> image, double seconds) {
  MethodResult m;
  m.name = std::move(name);
  m.image = std::move(image);
  m.seconds = seconds;
  return m;
}

namespace {

TimedImage timed_ceiling(const KSpaceFn& kspace, const ImageGrid& grid) {
  const auto t0 = std::chrono::steady_clock::now();
  TimedImage t{band_limited_image(kspace, grid)};
  t.seconds = seconds_since(t0);
  return t;
}

// acc += |r|^2 per method (acc's images hold the running sum in their real
// part), and the stage times by stage name.
void add_coil(ReconResult& acc, const ReconResult& r) {
  for (std::size_t i = 0; i < acc.methods.size() && i < r.methods.size(); ++i) {
    std::vector<cfloat>& a = acc.methods[i].image;
    const std::vector<cfloat>& b = r.methods[i].image;
    for (std::size_t v = 0; v < a.size(); ++v) a[v] += std::norm(b[v]);
    acc.methods[i].seconds += r.methods[i].seconds;
  }
  acc.method_wall += r.method_wall;
  for (const StageTime& t : r.stages)
    for (StageTime& a : acc.stages)
      if (a.name == t.name) {
        a.seconds += t.seconds;
        break;
      }
}

void root_sum_of_squares(ReconResult& acc, std::size_t coils) {
  for (MethodResult& m : acc.methods)
    for (cfloat& v : m.image) v = std::sqrt(v.real());
  const std::string n = std::to_string(coils) + " coils";
  for (StageTime& s : acc.stages) s.note = s.note.empty() ? n : s.note + ", " + n;
  acc.cg_psnr.clear();  // per-coil iterates are not the combined image's
  for (MethodResult& m : acc.methods) m.psnr_per_iter.clear();
}

}  // namespace

// The band-limited ceiling is host work that no other stage needs. Beside a
// GPU's stages it runs on a host thread from the start (0.1 s at 128^3 that
// left the wall time); on the CPU it waits for the end, so it takes no cores
// from the CPU's stages. Its stage time is its own duration either way.
// Beside the GPU its OpenMP team leaves two cores to the thread that drives
// the GPU: with every core taken, that thread's wake-ups after each CG
// synchronization came late (H100, 30 iterations: CG 31-47 ms over six runs,
// its two slow runs those where the ceiling ran long; 32-33 ms with two cores left).
std::future<TimedImage> start_ceiling(const ReconOptions& opt, const ImageGrid& grid, bool beside) {
  if (!beside || !opt.truth || !opt.truth->kspace) return {};
  return std::async(std::launch::async, [kspace = opt.truth->kspace, grid] {
    omp_set_num_threads(std::max(1, omp_get_max_threads() - 2));  // this thread's teams only
    // Linux's nice value is per thread, and the team's threads inherit it:
    // where cores are shared (hyperthreads) the GPU's thread still wins them.
    setpriority(PRIO_PROCESS, 0, 19);
    return timed_ceiling(kspace, grid);
  });
}

void ceiling(std::future<TimedImage>& started, const ReconOptions& opt, const ImageGrid& grid, ReconResult& res) {
  if (!opt.truth || !opt.truth->kspace) return;
  StageRunner stages(opt.observer, res.stages);
  TimedImage t;
  if (started.valid()) {
    t = started.get();
    stages.record("band-limited ceiling", t.seconds, "");
  } else {
    t.seconds = stages.run("band-limited ceiling", [&] { t.image = band_limited_image(opt.truth->kspace, grid); });
  }
  res.methods.push_back(direct_method("band-limited ceiling", std::move(t.image), t.seconds));
}

void score(ReconResult& res) {
  if (res.reference.empty()) return;
  const MethodResult* band_limited = nullptr;
  for (MethodResult& m : res.methods) {
    m.psnr = psnr(m.image, res.reference);
    m.nrmse = nrmse(m.image, res.reference);
    if (m.name == "band-limited ceiling") band_limited = &m;
  }
  if (!band_limited) return;
  // The band-limited measure: how far each method is from the best image the
  // sampled frequencies allow (free of the Gibbs ringing every method shares).
  const std::vector<float> ceiling = magnitude(band_limited->image);
  for (MethodResult& m : res.methods)
    if (&m != band_limited) m.psnr_band_limited = psnr(m.image, ceiling);
}

ReconResult combine_rss(std::size_t coils, const std::function<ReconResult(std::size_t)>& one) {
  ReconResult acc = one(0);
  if (coils == 1) return acc;
  for (auto& m : acc.methods)
    for (cfloat& v : m.image) v = std::norm(v);
  for (std::size_t c = 1; c < coils; ++c) add_coil(acc, one(c));
  root_sum_of_squares(acc, coils);
  return acc;
}

double image_scale(const std::vector<cfloat>& x) {
  std::vector<float> mag(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) mag[i] = std::abs(x[i]);
  if (mag.empty()) return 0.0;
  auto k = mag.begin() + std::ptrdiff_t(0.99 * double(mag.size() - 1));
  std::nth_element(mag.begin(), k, mag.end());
  return *k;
}

}  // namespace fhd
