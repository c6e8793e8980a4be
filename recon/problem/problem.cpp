#include "recon/problem/problem.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <future>
#include <map>

#include <spdlog/spdlog.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/number_text.hpp"
#include "recon/coils/sense.hpp"
#include "recon/field/field.hpp"
#include "recon/plan/partition.hpp"

namespace fhd {
namespace {

// SENSE's noise: the coils' mean variance (after prewhitening all are about 1).
std::optional<NoiseEstimate> mean_noise(const std::vector<const Scan*>& coils) {
  NoiseEstimate sum;
  for (const Scan* c : coils) {
    std::optional<NoiseEstimate> e = estimate_noise(c->traj, c->data, c->noise);
    if (!e) return std::nullopt;
    sum.variance += e->variance / double(coils.size());
    sum.source = e->source;
  }
  return sum;
}

// Q from the plan: a stage when computed or read from the disk cache, none
// when an earlier coil already brought it into memory.
void q_stage(Plan& plan, StageRunner& stages, bool& cached) {
  if (plan.has_q()) return;
  const int loaded = plan.counts().q_loaded;
  stages.run("Q", [&] { plan.q(); });
  cached = plan.counts().q_loaded > loaded;
  if (cached) stages.last().note = "cached";
}

// The coils' maps on the plan's device (docs/coils.md): the low-resolution
// maps from the calibration region (made on the device), ESPIRiT's, or given
// ones, with the lowres maps' support crop.
std::vector<std::shared_ptr<DeviceVector>> estimate_maps(Plan& plan, const std::vector<const Scan*>& coils,
                                                         const ReconOptions& opt) {
  const ImageGrid& grid = coils[0]->grid;
  Device& dev = plan.device();
  if (!maps_from_calibration(opt)) return upload_maps(dev, *opt.given_maps, grid);
  const Calibration cal = opt.calibration_samples
                              ? calibration_from_samples(dev, *opt.calibration_samples, opt.calibration)
                              : calibration_from_scans(dev, coils, opt.calibration, opt.dcf);
  spdlog::debug("coil maps: calibration data made");
  if (opt.maps == "lowres") return dev.kernels<MapsKernels>().lowres(cal, grid, opt.maps_crop);
  // The lowres maps' support constraint, from the same data, on ESPIRiT's
  // maps (its eigenvalue crop keeps most of the background in 3D: 64^3,
  // 32,768 samples, 23.39 dB without, 25.53 with) and on given maps (SENSE
  // with them and with the estimated ones then differ by the maps alone).
  const std::vector<bool> keep = lowres_support(cal, grid, opt.maps_crop);
  CoilData maps = opt.maps == "espirit" ? maps_espirit(cal, grid, {}, keep) : *opt.given_maps;
  for (std::vector<cfloat>& m : maps)
    for (std::size_t v = 0; v < m.size() && v < keep.size(); ++v)
      if (!keep[v]) m[v] = 0;
  return upload_maps(dev, maps, grid);
}

// Every coil's samples, one after another, on the device.
VecPtr stacked_data(Device& dev, const std::vector<const Scan*>& coils) {
  const std::size_t m = coils[0]->data.size();
  VecPtr y = dev.zeros(m * coils.size());
  for (std::size_t c = 0; c < coils.size(); ++c) dev.to_device(coils[c]->data.data(), *y->view(c * m, m));
  return y;
}

// Whether SENSE's E splits by coils across the plan's devices: where the
// SplitRule gains and without a field model (the field models stay on the
// first device).
bool splits_sense(const Plan& plan, std::size_t coils, bool field) {
  return std::min(plan.devices().size(), coils) >= 2 && !field &&
         plan.grid().voxels() >= plan.options().split.min_sense_voxels;
}

// Where the split's E^H y goes by sample chunks (sense_adjoint_by_chunks): a
// model of the NUFFT alone (Phi = 1), whose chunks are plans of their own.
bool sense_chunks(const Plan& plan) {
  return plan.options().fhd.method == FhdMethod::Nufft && plan.options().phi.empty();
}

// The split's plans, one per device for the coils and one per sample chunk
// (their trajectory uploads, and for those that make E^H y the NUFFT's sort,
// fine grids and gather parts), started on a host thread of their own before
// the coil maps: that stage's host work leaves the GPUs mostly idle (7 of 42
// ms busy), while made after it the plans took 14 ms of E^H y's stage on 2
// GPUs (docs/performance.md). An empty future where SENSE does not split.
std::future<void> start_sense_split(Plan& plan, std::size_t coils, bool field) {
  if (!splits_sense(plan, coils, field)) return {};
  return std::async(std::launch::async, [&plan, coils] {
    const std::vector<std::shared_ptr<Plan>> by_coils = plan.on_all();
    if (sense_chunks(plan)) {  // E^H y: every coil's type 1 on each chunk's plan
      for (const std::shared_ptr<Plan>& p : plan.chunk_plans()) p->prepare(int(coils));
      return;
    }
    const std::size_t parts = std::min(by_coils.size(), coils);  // E^H y: each device its share of the coils
    for (std::size_t i = 0; i < parts; ++i) by_coils[i]->prepare(slab(int(coils), int(parts), int(i)).second);
  });
}

// The maps on each of the plan's devices, copied there at the first need
// (once a device, also where a device is listed twice; the originals on the
// plan's device).
class MapsOnDevices {
 public:
  MapsOnDevices(Plan& plan, const std::vector<std::shared_ptr<DeviceVector>>& maps) : plan_(plan), maps_(maps) {
    on_[&plan.device()] = maps;
  }
  // Coils [c0, c0 + n) on device i.
  std::vector<std::shared_ptr<DeviceVector>> on(std::size_t i, std::size_t c0, std::size_t n) {
    Device& d = *plan_.devices()[i];
    std::vector<std::shared_ptr<DeviceVector>>& there = on_[&d];
    there.resize(maps_.size());
    for (std::size_t c = c0; c < c0 + n; ++c)
      if (!there[c]) {
        there[c] = d.zeros(maps_[c]->size());
        d.copy(*maps_[c], *there[c]);
      }
    return {there.begin() + std::ptrdiff_t(c0), there.begin() + std::ptrdiff_t(c0 + n)};
  }

 private:
  Plan& plan_;
  const std::vector<std::shared_ptr<DeviceVector>>& maps_;
  std::map<const Device*, std::vector<std::shared_ptr<DeviceVector>>> on_;  // [device][coil]
};

// SENSE's E (recon/coils/sense.hpp): split by coils across the plan's devices
// where splits_sense, each device a contiguous share of the coils with its
// own plan (its model, its T) and its coils' maps copied over, and E^H y by
// sample chunks where sense_chunks; else every coil on the plan's device.
OpPtr sense_model(Plan& plan, const OpPtr& a, const std::vector<std::shared_ptr<DeviceVector>>& maps, bool field) {
  if (!splits_sense(plan, maps.size(), field)) return sense_op(a, maps);
  const std::size_t parts = std::min(plan.devices().size(), maps.size());
  std::vector<OpPtr> models;
  std::vector<std::vector<std::shared_ptr<DeviceVector>>> shares;
  MapsOnDevices on(plan, maps);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::shared_ptr<Plan>> plans = plan.on_all();
  for (std::size_t i = 0; i < parts; ++i) {
    const auto [c0, n] = slab(int(maps.size()), int(parts), int(i));
    models.push_back(plans[i]->forward());
    shares.push_back(on.on(i, std::size_t(c0), std::size_t(n)));
  }
  const OpPtr by_coils = sense_op_across(plan.device(), models, shares);
  spdlog::debug("SENSE by coils on {} devices: models and maps in {:.3f} s", parts, seconds_since(t0));
  if (!sense_chunks(plan)) return by_coils;
  std::vector<OpPtr> chunk_models;
  std::vector<std::vector<std::shared_ptr<DeviceVector>>> every;
  const std::vector<std::shared_ptr<Plan>>& chunks = plan.chunk_plans();
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    chunk_models.push_back(chunks[i]->fourier());
    every.push_back(on.on(i, 0, maps.size()));
  }
  spdlog::debug("SENSE's E^H y by {} sample chunks: every map on every device at {:.3f} s", chunks.size(),
                seconds_since(t0));
  return sense_adjoint_by_chunks(by_coils, plan.device(), chunk_models, every);
}

}  // namespace

FieldReport field_report(const Scan& s, const ReconOptions& opt) {
  FieldReport r;
  r.has_map = !s.field.hz.empty();
  if (r.has_map) {
    const auto [lo, hi] = std::minmax_element(s.field.hz.begin(), s.field.hz.end());
    r.min_hz = *lo;
    r.max_hz = *hi;
    const auto [t0, t1] = std::minmax_element(s.field.times.begin(), s.field.times.end());
    r.readout_s = double(*t1) - double(*t0);
  }
  r.method = opt.field_comp == "auto" ? (r.has_map ? "segmented" : "none") : opt.field_comp;
  return r;
}

namespace {

// Bit for bit, as memcmp: the coils' copies of one trajectory. Element by
// element (operator!=) took 38 ms of 8 coils of 1M samples before the first
// stage, the first coil compared with itself too.
template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}

// The largest |value| a given map may have. Maps are sensitivities, normalized
// to a root sum of squares of 1 (the pipeline's own, BART's); 1e3 leaves room
// for maps not normalized, while with samples up to 1e12 (io/scan_checks.hpp)
// CG's sums stay inside float32. NaN, Inf or 1e30 in a map gave an image of
// zeros after 0 CG iterations (from Python); a map of 1e11 did too.
constexpr double kMaxMapMagnitude = 1e3;

void check_given_maps(const CoilData& maps) {
  bool any = false;  // all-zero maps: SENSE sees no signal and returns zeros after 0 iterations
  for (const auto& map : maps)
    any = any || std::any_of(map.begin(), map.end(), [](const cfloat& v) { return v != cfloat(0); });
  if (!any) throw InputError("coil maps", "values", "all zero", "coil maps need a sensitivity somewhere");
  for (std::size_t c = 0; c < maps.size(); ++c)
    for (std::size_t i = 0; i < maps[c].size(); ++i) {
      const double mag = std::abs(std::complex<double>(maps[c][i]));
      if (mag <= kMaxMapMagnitude) continue;  // NaN fails it too
      const std::string field = "maps[" + std::to_string(c) + "][" + std::to_string(i) + "]";
      const std::string value = complex_text(maps[c][i]);
      if (!std::isfinite(mag)) throw InputError("coil maps", field, value, "not a finite number");
      throw InputError("coil maps", field, value,
                       "magnitude exceeds " + number_text(kMaxMapMagnitude) +
                           ", the most a coil map may have (maps are normalized to a root sum of squares of 1)");
    }
}

// The smallest largest sample a scan may have (0, all-zero data, aside).
// float32 squares values below about 1e-19 to zero: the root sums of squares
// of the coils and SENSE's maps made an image of zeros from 4-coil k-space of
// 1e-30 with exit 0 (wrong from about 1e-25). 1e-15 keeps the squares eight
// decades above float32's least normal number; scanner data lie far above it.
constexpr double kMinPeakSample = 1e-15;

void check_scale(const std::vector<const Scan*>& coils) {
  double peak2 = 0;
  for (const Scan* s : coils)
    for (const cfloat& v : s->data) peak2 = std::max(peak2, std::norm(cdouble(v)));  // in float, 0
  if (peak2 == 0 || peak2 >= kMinPeakSample * kMinPeakSample) return;
  throw InputError("k-space", "largest sample magnitude", number_text(std::sqrt(peak2)),
                   "below " + number_text(kMinPeakSample) +
                       ": float32 squares such values to zero (root sums of squares, coil maps); scale the data "
                       "(the images scale with it)");
}

}  // namespace

namespace {

// An axis of several voxels along which every sample has the same k is not
// encoded: each image value is spread evenly along it (a scan file saying
// Nz = 4 for a 2D trajectory gave 4 slices at a quarter of the value, and the
// default stack of stars at --matrix 5 had no ky at all: hunt20). The user's
// matrix may mean it (a slab), so a warning, not a refusal.
void warn_unencoded_axes(const Scan& s) {
  const std::vector<float>* k[3] = {&s.traj.kx, &s.traj.ky, &s.traj.kz};
  const int n[3] = {s.grid.nx, s.grid.ny, s.grid.nz};
  const char* axis[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    if (n[a] < 2 || k[a]->empty()) continue;
    const auto [lo, hi] = std::minmax_element(k[a]->begin(), k[a]->end());
    if (*lo == *hi)
      spdlog::warn("the trajectory does not encode {}: every sample has k{} = {} while the matrix has {} voxels along "
                   "it (each value is spread evenly over them)",
                   axis[a], axis[a], *lo, n[a]);
  }
}

}  // namespace

void check_scans(const std::vector<const Scan*>& coils, const ReconOptions& opt, bool compare_coils) {
  validate(opt);
  if (coils.empty()) throw InputError("coils: no coil data");
  const Scan& a = *coils[0];
  for (std::size_t c = 1; compare_coils && c < coils.size(); ++c) {
    const Scan& b = *coils[c];
    if (!(a.grid == b.grid) || !same_bits(a.traj.kx, b.traj.kx) || !same_bits(a.traj.ky, b.traj.ky) ||
        !same_bits(a.traj.kz, b.traj.kz) || !same_bits(a.phi, b.phi))
      throw InputError("coils: the coils of one scan must share grid, trajectory and Phi");
  }
  if (compare_coils) {  // once a run: reconstruct_coils checks again without the comparison
    check_scale(coils);
    warn_unencoded_axes(a);
  }
  const std::string& m = opt.field_comp;
  if ((m == "exact" || m == "segmented") && a.field.hz.empty())
    throw OptionError("field_comp", m,
                      "the scan has no field map (synthesize with off-resonance, or give a field map)");
  if (m != "none" && !a.field.hz.empty()) check_field(a.field, a.grid, a.traj.size(), "field map");
  if (opt.segments > 0 && a.field.hz.empty())
    throw OptionError("segments", std::to_string(opt.segments), "the scan has no field map (give one) to segment");
  if (opt.segments > 0 && field_report(a, opt).method != "segmented")
    throw OptionError("segments", std::to_string(opt.segments), "needs field_comp segmented");
  // Once, with the coils' comparison: reconstruct_coils checks again without
  // it after the host work (the maps are C x voxels values to read).
  if (compare_coils && opt.maps == "given" && opt.given_maps) check_given_maps(*opt.given_maps);
  if (opt.maps == "given" && coils.size() > 1 && opt.given_maps->size() != coils.size())
    throw OptionError("maps", "given (" + std::to_string(opt.given_maps->size()) + " maps)",
                      "must number the coils, " + std::to_string(coils.size()));
}

namespace {

// Segments whose interpolators miss their target by far give an image worse
// than no compensation (1 segment at 150 Hz over 20 ms: 5.4 dB against 14.3);
// only report.json's interpolator_rms_error showed it.
void warn_segments(const TimeSegments& seg, int asked) {
  if (seg.rms_error <= 10 * kSegmentTolerance) return;
  if (asked > 0)
    spdlog::warn("--segments {}: the interpolators err by {:.1f}% RMS (target {:.1f}%): leave --segments to its "
                 "rule or use --field-comp exact",
                 asked, 100 * seg.rms_error, 100 * kSegmentTolerance);
  else
    spdlog::warn("time segments: {} (the most) err by {:.1f}% RMS (target {:.1f}%): this field is too wide for "
                 "segments; --field-comp exact is more accurate",
                 seg.tau.size(), 100 * seg.rms_error, 100 * kSegmentTolerance);
}

}  // namespace

Problem build_problem(Plan& plan, const std::vector<const Scan*>& coils, bool sense, const ReconOptions& opt,
                      ReconResult& res, StageClock& clock) {
  StageRunner stages(opt.observer, res.stages, &clock);
  Device& dev = plan.device();
  const Scan& s0 = *coils[0];
  Problem p;
  res.field = field_report(s0, opt);
  if (wants_noise_estimate(opt))
    stages.run("noise estimate", [&] {
      p.noise = sense ? mean_noise(coils) : estimate_noise(s0.traj, s0.data, s0.noise);
    });
  std::vector<std::shared_ptr<DeviceVector>> maps;
  std::future<void> split = sense ? start_sense_split(plan, coils.size(), res.field.method != "none")
                                  : std::future<void>();
  if (sense) stages.run("coil maps", [&] { maps = estimate_maps(plan, coils, opt); });
  if (split.valid()) split.get();
  const std::shared_ptr<Plan> shared = plan.shared_from_this();
  OpPtr a;
  if (res.field.method == "segmented") {
    TimeSegments seg;
    stages.run("time segments", [&] {
      seg = time_segments(s0.field, opt.segments > 0 ? opt.segments : choose_segments(s0.field));
    });
    res.field.segments = int(seg.tau.size());
    res.field.interpolator_error = seg.rms_error;
    warn_segments(seg, opt.segments);
    stages.last().note = std::to_string(seg.tau.size()) + " segments";
    a = field_segmented_op(shared, s0.field, seg);
  } else if (res.field.method == "exact") {
    a = field_exact_op(shared, s0.field);
  } else {
    a = plan.forward();
  }
  p.model = sense ? sense_model(plan, a, maps, res.field.method != "none") : a;
  p.preconditionable = !sense;
  p.solver_stage = sense ? "SENSE CG" : "CG";
  if (sense) p.note = std::to_string(coils.size()) + " coils";
  if (!sense && res.field.method == "none") {  // the book's two stages
    VecPtr mu;
    stages.run("cmpMu", [&] { mu = plan.mu(s0.data); });
    stages.run("cmpFhD", [&] { p.rhs = plan.fhd_of_mu(*mu); });
  } else {
    stages.run("cmpFhD", [&] {
      const VecPtr y = sense ? stacked_data(dev, coils) : dev.upload(s0.data);
      p.rhs = dev.zeros(plan.grid().voxels());
      p.model->adjoint(*y, *p.rhs);
    });
    stages.last().note = (sense ? std::to_string(coils.size()) + " coils, E^H y" : std::string())
                       + (res.field.method == "none" ? "" : (sense ? ", " : "") + res.field.method + " field model");
  }
  q_stage(plan, stages, res.q_cached);
  if (res.field.method == "segmented") {  // its L x L Toeplitz kernels (T itself is made in the solver's stage)
    stages.run("Q (segments)", [&] { p.model->normal(); });
    stages.last().note = std::to_string(res.field.segments * res.field.segments) + " Q's";
  }
  return p;
}

}  // namespace fhd
