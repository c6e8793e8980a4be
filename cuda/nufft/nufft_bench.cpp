// `fhdrecon bench-nufft` (cuda/nufft/nufft_bench.hpp). Host code: plans, events,
// and the float64 subset checks (OpenMP over the checked outputs).
#include "cuda/nufft/nufft_bench.hpp"

#include <cstdint>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include "cuda/device/device_buffer.hpp"
#include "phantom/trajectory.hpp"

namespace fhd::gpu {
namespace {

constexpr int kSets = 3;  // input sets rotated between timed runs
constexpr double kTwoPi = 6.283185307179586;

class EventPair {
 public:
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&a_));
    CUDA_CHECK(cudaEventCreate(&b_));
  }
  ~EventPair() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  // Median, min and max of `reps` timed calls of run(set) after one warm-up.
  template <class F>
  void time(int reps, cudaStream_t s, F&& run, NufftBenchRow& row) {
    run(0);
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      CUDA_CHECK(cudaEventRecord(a_, s));
      run((r + 1) % kSets);
      CUDA_CHECK(cudaEventRecord(b_, s));
      CUDA_CHECK(cudaEventSynchronize(b_));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, a_, b_));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    row.ms = ms[ms.size() / 2];
    row.ms_min = ms.front();
    row.ms_max = ms.back();
  }

 private:
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

struct PhaseEvents {
  cudaEvent_t e[4] = {};
  PhaseEvents() {
    for (auto& x : e) CUDA_CHECK(cudaEventCreate(&x));
  }
  ~PhaseEvents() {
    for (auto& x : e) cudaEventDestroy(x);
  }
  PhaseEvents(const PhaseEvents&) = delete;
  PhaseEvents& operator=(const PhaseEvents&) = delete;
};

std::vector<cfloat> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d;
  std::vector<cfloat> v(n);
  for (auto& x : v) x = {d(rng), d(rng)};
  return v;
}

Trajectory make_points(const NufftBenchOptions& o) {
  if (o.points == "radial") {
    TrajectorySpec spec;
    spec.kind = "radial3d";
    spec.nx = spec.ny = spec.nz = o.matrix;
    spec.readout = o.readout;
    spec.spokes = o.spokes;
    return make_trajectory(spec);
  }
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<float> d(-0.5f * o.matrix, 0.5f * o.matrix);
  Trajectory t;
  t.resize(o.samples);
  for (std::size_t i = 0; i < o.samples; ++i) {
    t.kx[i] = d(rng);
    t.ky[i] = d(rng);
    t.kz[i] = d(rng);
  }
  return t;
}

double rel(const std::vector<cdouble>& ref, const std::vector<cfloat>& got) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(cdouble(got[i]) - ref[i]);
    den += std::norm(ref[i]);
  }
  return std::sqrt(num / den);
}

std::vector<std::size_t> random_indices(std::size_t n, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<std::size_t> idx(count);
  for (auto& i : idx) i = pick(rng);
  return idx;
}

// Type 1 (and Q) on `count` random outputs of `modes` (coordinates (i - len/2)/N).
double check_type1(const Trajectory& t, const std::vector<cfloat>& c, const std::vector<cfloat>& out,
                   const ImageGrid& modes, const ImageGrid& image, int count, std::uint64_t seed) {
  const std::vector<std::size_t> idx = random_indices(modes.voxels(), count, seed);
  std::vector<cdouble> ref(count);
  std::vector<cfloat> got(count);
#pragma omp parallel for schedule(dynamic)
  for (int j = 0; j < count; ++j) {
    const std::size_t o = idx[j];
    const int ix = int(o % modes.nx), iy = int((o / modes.nx) % modes.ny), iz = int(o / (std::size_t(modes.nx) * modes.ny));
    const double x = axis_coord(ix, modes.nx, image.nx), y = axis_coord(iy, modes.ny, image.ny),
                 z = axis_coord(iz, modes.nz, image.nz);
    cdouble s = 0;
    for (std::size_t m = 0; m < t.size(); ++m)
      s += cdouble(c[m]) * std::polar(1.0, kTwoPi * (double(t.kx[m]) * x + double(t.ky[m]) * y + double(t.kz[m]) * z));
    ref[j] = s;
    got[j] = out[o];
  }
  return rel(ref, got);
}

// Type 2 on `count` random points: separable sums over the modes in double.
double check_type2(const Trajectory& t, const std::vector<cfloat>& f, const std::vector<cfloat>& out,
                   const ImageGrid& g, int count, std::uint64_t seed) {
  const std::vector<std::size_t> idx = random_indices(t.size(), count, seed);
  std::vector<cdouble> ref(count);
  std::vector<cfloat> got(count);
#pragma omp parallel for schedule(dynamic)
  for (int j = 0; j < count; ++j) {
    const std::size_t m = idx[j];
    auto axis = [&](float k, int n) {
      std::vector<cdouble> e(n);
      for (int i = 0; i < n; ++i) e[i] = std::polar(1.0, -kTwoPi * double(k) * axis_coord(i, n, n));
      return e;
    };
    const auto ex = axis(t.kx[m], g.nx), ey = axis(t.ky[m], g.ny), ez = axis(g.nz > 1 ? t.kz[m] : 0.f, g.nz);
    cdouble s = 0;
    for (int iz = 0; iz < g.nz; ++iz)
      for (int iy = 0; iy < g.ny; ++iy) {
        cdouble r = 0;
        const cfloat* row = f.data() + std::size_t(g.nx) * (iy + std::size_t(g.ny) * iz);
        for (int ix = 0; ix < g.nx; ++ix) r += ex[ix] * cdouble(row[ix]);
        s += r * ey[iy] * ez[iz];
      }
    ref[j] = s;
    got[j] = out[m];
  }
  return rel(ref, got);
}

NufftMethod spread_method(const std::string& name) {
  return name == "gather"   ? NufftMethod::Gather
         : name == "global" ? NufftMethod::Global
         : name == "shared" ? NufftMethod::Shared
                            : NufftMethod::Auto;
}

struct Variant {
  std::string name;
  NufftOptions opt;
};

std::vector<Variant> sweep_variants(double tol) {
  auto with = [tol](NufftMethod m, int bx, int by, int bz, int threads, int chunk) {
    NufftOptions o;
    o.tol = tol;
    o.spread = m == NufftMethod::Auto || interpolation_only(m) ? NufftMethod::Shared : m;  // spreading: shared
    o.interp = m;
    o.bin[0] = bx;
    o.bin[1] = by;
    o.bin[2] = bz;
    o.threads = threads;
    o.chunk = chunk;
    return o;
  };
  return {{"global (no privatization)", with(NufftMethod::Global, 0, 0, 0, 512, 128)},
          {"interpolation by rows, global", with(NufftMethod::Rows, 16, 16, 8, 512, 128)},
          {"shared 16x16x8 t512 c128", with(NufftMethod::Shared, 16, 16, 8, 512, 128)},
          {"shared 8x8x8 t512 c128", with(NufftMethod::Shared, 8, 8, 8, 512, 128)},
          {"shared 16x16x4 t512 c128", with(NufftMethod::Shared, 16, 16, 4, 512, 128)},
          {"shared 32x16x8 t512 c128", with(NufftMethod::Shared, 32, 16, 8, 512, 128)},
          {"shared 32x32x8 t512 c128", with(NufftMethod::Shared, 32, 32, 8, 512, 128)},
          {"shared 16x16x16 t512 c128", with(NufftMethod::Shared, 16, 16, 16, 512, 128)},
          {"shared 16x16x8 t512 c512", with(NufftMethod::Shared, 16, 16, 8, 512, 512)},
          {"shared 16x16x8 t512 c64", with(NufftMethod::Shared, 16, 16, 8, 512, 64)},
          {"shared 16x16x8 t256 c64", with(NufftMethod::Shared, 16, 16, 8, 256, 64)},
          {"shared 16x16x8 t256 c256", with(NufftMethod::Shared, 16, 16, 8, 256, 256)},
          {"shared 16x16x8 t1024 c256", with(NufftMethod::Shared, 16, 16, 8, 1024, 256)}};
}

class Bench {
 public:
  Bench(const NufftBenchOptions& o, const std::function<void(const NufftBenchRow&)>& progress)
      : o_(o), progress_(progress), grid_{o.matrix, o.matrix, o.matrix}, traj_(make_points(o)) {
    m_ = traj_.size();
    const std::string what = "bench-nufft points and values";
    kx_.allocate(m_, what);
    ky_.allocate(m_, what);
    kz_.allocate(m_, what);
    upload(traj_.kx.data(), m_, kx_.get(), s_);
    upload(traj_.ky.data(), m_, ky_.get(), s_);
    upload(traj_.kz.data(), m_, kz_.get(), s_);
    for (int i = 0; i < kSets; ++i) {
      hc_[i] = random_values(m_, o.seed + 10 + i);
      hf_[i] = random_values(grid_.voxels(), o.seed + 20 + i);
      c_[i].allocate(m_, what);
      f_[i].allocate(grid_.voxels(), what);
      upload(reinterpret_cast<const float2*>(hc_[i].data()), m_, c_[i].get(), s_);
      upload(reinterpret_cast<const float2*>(hf_[i].data()), grid_.voxels(), f_[i].get(), s_);
    }
    // Q's weights |Phi|^2 stand-in: positive, real.
    std::mt19937_64 rng(o.seed + 30);
    std::uniform_real_distribution<float> d(0.5f, 1.5f);
    hw_.resize(m_);
    for (auto& w : hw_) w = cfloat(d(rng), 0.f);
    w_.allocate(m_, what);
    upload(reinterpret_cast<const float2*>(hw_.data()), m_, w_.get(), s_);
    out_f_.allocate(grid_.voxels(), what);
    out_c_.allocate(m_, what);
    CUDA_CHECK(cudaStreamSynchronize(s_));
  }

  std::vector<NufftBenchRow> rows;

  void run() {
    for (double sigma : o_.sigmas)
      for (double tol : o_.tols) {
        NufftOptions opt;
        opt.tol = tol;
        opt.sigma = sigma;
        opt.spread = spread_method(o_.spread);
        guarded("type1", "default", opt, [&](NufftBenchRow& r) { operators(opt, r); });
        if (o_.q) guarded("q", "default", opt, [&](NufftBenchRow& r) { q(opt, r); });
      }
    if (o_.sweep && !o_.tols.empty())
      for (const Variant& v : sweep_variants(o_.tols.back())) {
        guarded("type1", v.name, v.opt, [&](NufftBenchRow& r) { operators(v.opt, r); });
        // Q spreads the same points onto a fine grid 8x larger: sparser bins.
        if (o_.q) guarded("q", v.name, v.opt, [&](NufftBenchRow& r) { q(v.opt, r); });
      }
  }

 private:
  template <class F>
  void guarded(const std::string& op, const std::string& variant, const NufftOptions& opt, F&& f) {
    NufftBenchRow r;
    r.op = op;
    r.variant = variant;
    r.tol = opt.tol;
    r.sigma = opt.sigma;
    try {
      f(r);
    } catch (const std::exception& e) {
      r.error = e.what();
      add(r);
    }
  }

  void add(const NufftBenchRow& r) {
    rows.push_back(r);
    if (progress_) progress_(r);
  }

  // Plan and set_points apart, as cuFINUFFT reports them (host clock, the
  // stream synchronized after each).
  std::unique_ptr<NufftPlan> make_plan(const ImageGrid& modes, const NufftOptions& opt, NufftBenchRow& r) {
    CUDA_CHECK(cudaStreamSynchronize(s_));
    const auto t0 = std::chrono::steady_clock::now();
    auto plan = std::make_unique<NufftPlan>(modes, grid_, opt, s_);
    CUDA_CHECK(cudaStreamSynchronize(s_));
    const auto t1 = std::chrono::steady_clock::now();
    plan->set_points(kx_.get(), ky_.get(), kz_.get(), m_);
    CUDA_CHECK(cudaStreamSynchronize(s_));
    r.plan_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    r.setpts_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    r.width = plan->width();
    r.sigma = plan->sigma();
    r.fine = plan->fine();
    r.points = m_;
    return plan;
  }

  // Plan + set_points + first execute (which makes the fine grid and cuFFT
  // plan) on fresh plans, as cuFINUFFT's peer script times its plan, setpts
  // and execute: one warm-up (the process's first cuFFT plan and kernel loads),
  // then the medians of kPlanReps into plan_ms, setpts_ms and total_ms (their
  // sum, median of the sums). Returns the last plan.
  template <class F>
  std::unique_ptr<NufftPlan> fresh_plan(const ImageGrid& modes, const NufftOptions& opt, NufftBenchRow& r, F&& run) {
    constexpr int kPlanReps = 3;
    std::vector<double> plan, setpts, total;
    std::unique_ptr<NufftPlan> p;
    for (int i = 0; i <= kPlanReps; ++i) {
      p.reset();
      p = make_plan(modes, opt, r);
      CUDA_CHECK(cudaStreamSynchronize(s_));
      const auto t0 = std::chrono::steady_clock::now();
      run(*p);
      CUDA_CHECK(cudaStreamSynchronize(s_));
      const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (i == 0) continue;
      plan.push_back(r.plan_ms);
      setpts.push_back(r.setpts_ms);
      total.push_back(r.plan_ms + r.setpts_ms + first);
    }
    for (auto* v : {&plan, &setpts, &total}) std::sort(v->begin(), v->end());
    r.plan_ms = plan[kPlanReps / 2];
    r.setpts_ms = setpts[kPlanReps / 2];
    r.total_ms = total[kPlanReps / 2];
    return p;
  }

  // Rows of one execute's phases (cudaEvents; `names` in order), after the
  // operator's row.
  template <class F>
  void phases(const NufftBenchRow& r, NufftPlan& plan, const char* const names[3], F&& run) {
    PhaseEvents ev;
    plan.set_phase_events(ev.e);
    run();
    plan.set_phase_events(nullptr);
    CUDA_CHECK(cudaEventSynchronize(ev.e[3]));
    for (int i = 0; i < 3; ++i) {
      NufftBenchRow p = r;
      p.variant = std::string("phase: ") + names[i];
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, ev.e[i], ev.e[i + 1]));
      p.ms = p.ms_min = p.ms_max = p.reuse_ms = ms;
      p.total_ms = p.plan_ms = p.setpts_ms = 0;
      p.relerr = 0;
      add(p);
    }
  }

  // Type 1 then type 2 on one plan; the type-1 row is `r`.
  void operators(const NufftOptions& opt, NufftBenchRow& r) {
    auto plan = fresh_plan(grid_, opt, r, [&](NufftPlan& p) { p.type1(c_[0].get(), out_f_.get()); });
    const double pairs = double(grid_.voxels()) * double(m_);
    ev_.time(o_.reps, s_, [&](int k) { plan->type1(c_[k].get(), out_f_.get()); }, r);
    r.reuse_ms = r.ms;
    r.pairs_per_s = pairs / (r.ms * 1e-3);
    plan->type1(c_[0].get(), out_f_.get());
    std::vector<cfloat> f(grid_.voxels());
    download(out_f_.get(), f.size(), reinterpret_cast<float2*>(f.data()), s_);
    r.relerr = check_type1(traj_, hc_[0], f, grid_, grid_, o_.check, o_.seed + 40);
    add(r);
    static const char* const type1_phases[3] = {"zero + spread", "FFT", "deapodize"};
    phases(r, *plan, type1_phases, [&] { plan->type1(c_[0].get(), out_f_.get()); });

    // Type 2 on plans of its own, so its first execute pays its own set-up.
    NufftBenchRow r2 = r;
    r2.op = "type2";
    plan.reset();
    plan = fresh_plan(grid_, opt, r2, [&](NufftPlan& p) { p.type2(f_[0].get(), out_c_.get()); });
    ev_.time(o_.reps, s_, [&](int k) { plan->type2(f_[k].get(), out_c_.get()); }, r2);
    r2.reuse_ms = r2.ms;
    r2.pairs_per_s = pairs / (r2.ms * 1e-3);
    plan->type2(f_[0].get(), out_c_.get());
    std::vector<cfloat> c(m_);
    download(out_c_.get(), c.size(), reinterpret_cast<float2*>(c.data()), s_);
    r2.relerr = check_type2(traj_, hf_[0], c, grid_, o_.check, o_.seed + 50);
    add(r2);
    static const char* const type2_phases[3] = {"deapodize + pad", "FFT", "interpolate"};
    phases(r2, *plan, type2_phases, [&] { plan->type2(f_[0].get(), out_c_.get()); });
    if (o_.transforms > 1 && r.variant == "default") {
      batched(opt, r, true);
      batched(opt, r2, false);
    }
  }

  // Issue 25: n transforms (coils) in one call against n single calls on one
  // plan. Both rows: plan + set_points + the median execute of all n, so the
  // printed ratio of totals is plan-inclusive (the execute column is raw).
  void batched(const NufftOptions& opt, const NufftBenchRow& base, bool type1) {
    const int n = o_.transforms;
    NufftBenchRow rb = base, rs = base;
    rb.variant = "batched";
    rs.variant = std::to_string(n) + " single calls";
    rb.transforms = rs.transforms = n;
    rb.op = rs.op = base.op + " x" + std::to_string(n);  // the CPU bench's names (app/nufft_report.cpp pairs them)
    try {
      auto plan = make_plan(grid_, opt, rb);
      rs.plan_ms = rb.plan_ms;
      rs.setpts_ms = rb.setpts_ms;
      const std::size_t vox = grid_.voxels(), len_in = type1 ? m_ : vox, len_out = type1 ? vox : m_;
      DeviceBuffer<float2> in(len_in * n, "bench-nufft batch input"), out(len_out * n, "bench-nufft batch output");
      for (int t = 0; t < n; ++t)
        CUDA_CHECK(cudaMemcpyAsync(in.get() + t * len_in, (type1 ? c_[t % kSets] : f_[t % kSets]).get(),
                                   len_in * sizeof(float2), cudaMemcpyDeviceToDevice, s_));
      auto one = [&](int t) {
        if (type1)
          plan->type1(in.get() + t * len_in, out.get() + t * len_out);
        else
          plan->type2(in.get() + t * len_in, out.get() + t * len_out);
      };
      ev_.time(o_.reps, s_, [&](int) { for (int t = 0; t < n; ++t) one(t); }, rs);
      ev_.time(o_.reps, s_, [&](int) {
        if (type1)
          plan->type1(in.get(), out.get(), n);
        else
          plan->type2(in.get(), out.get(), n);
      }, rb);
      for (NufftBenchRow* r : {&rs, &rb}) {  // relerr: the single transform's (batches equal singles: tests/gpu)
        r->total_ms = r->plan_ms + r->setpts_ms + r->ms;
        r->reuse_ms = r->ms;
        r->pairs_per_s = double(n) * double(vox) * double(m_) / (r->ms * 1e-3);
      }
      add(rs);
      add(rb);
    } catch (const std::exception& e) {
      rb.error = e.what();
      add(rb);
    }
  }

  void q(const NufftOptions& opt, NufftBenchRow& r) {
    const ImageGrid d = grid_.doubled();
    DeviceBuffer<float2> out(d.voxels(), "bench-nufft Q");
    auto plan = fresh_plan(d, opt, r, [&](NufftPlan& p) { p.type1(w_.get(), out.get()); });
    ev_.time(o_.reps, s_, [&](int) { plan->type1(w_.get(), out.get()); }, r);
    r.pairs_per_s = double(d.voxels()) * double(m_) / (r.ms * 1e-3);
    r.reuse_ms = r.ms;
    std::vector<cfloat> qh(d.voxels());
    download(out.get(), qh.size(), reinterpret_cast<float2*>(qh.data()), s_);
    r.relerr = check_type1(traj_, hw_, qh, d, grid_, o_.check, o_.seed + 60);
    add(r);
  }

  NufftBenchOptions o_;
  std::function<void(const NufftBenchRow&)> progress_;
  ImageGrid grid_;
  Trajectory traj_;
  std::size_t m_ = 0;
  OwnedStream s_;
  EventPair ev_;
  DeviceBuffer<float> kx_, ky_, kz_;
  std::vector<cfloat> hc_[kSets], hf_[kSets], hw_;
  DeviceBuffer<float2> c_[kSets], f_[kSets], w_, out_f_, out_c_;
};

}  // namespace

NufftBenchResult run_nufft_bench(const NufftBenchOptions& opt, const std::function<void(const NufftBenchRow&)>& progress) {
  int dev = 0;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  NufftBenchResult res;
  res.device = prop.name;
  res.options = opt;
  Bench b(opt, progress);
  b.run();
  res.rows = std::move(b.rows);
  return res;
}

}  // namespace fhd::gpu
