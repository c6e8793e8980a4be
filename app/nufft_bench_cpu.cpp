// `fhdrecon bench-nufft --device cpu` (app/nufft_bench_cpu.hpp).
#include "app/nufft_bench_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "phantom/trajectory.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/nufft/nufft_cpu.hpp"

namespace fhd::app {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Gaussian real and imaginary parts, from the top bits of the generator (as
// phantom/trajectory.cpp's uniform numbers): the same values on every library.
std::vector<cfloat> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto gauss = [&rng] {  // Box-Muller
    const double u = (double(rng() >> 11) + 0.5) / 9007199254740992.0, v = double(rng() >> 11) / 9007199254740992.0;
    return float(std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v));
  };
  std::vector<cfloat> vals(n);
  for (auto& x : vals) x = {gauss(), gauss()};
  return vals;
}

// 3D radial spokes (--spokes x --readout), or `samples` uniform random k in
// [-N/2, N/2)^3: phantom/trajectory's radial3d and random kinds.
Trajectory make_points(const NufftBenchOptions& o) {
  TrajectorySpec spec;
  spec.nx = spec.ny = spec.nz = o.matrix;
  spec.seed = o.seed;
  if (o.points == "radial") {
    spec.kind = "radial3d";
    spec.readout = o.readout;
    spec.spokes = o.spokes;
  } else {
    spec.kind = "random";
    spec.readout = 1;
    spec.spokes = int(o.samples);
  }
  return make_trajectory(spec);
}

// float32 kx[M], ky[M], kz[M], little-endian as this machine writes them.
void write_points(const Trajectory& t, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  for (const std::vector<float>* k : {&t.kx, &t.ky, &t.kz})
    f.write(reinterpret_cast<const char*>(k->data()), std::streamsize(k->size() * sizeof(float)));
  if (!f) throw InputError(path, "--points-out", path, "could not be written");
}

std::vector<std::size_t> random_indices(std::size_t n, int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<std::size_t> idx(static_cast<std::size_t>(count));
  for (auto& i : idx) i = pick(rng);
  return idx;
}

double rel(const std::vector<cdouble>& ref, const cfloat* got, const std::vector<std::size_t>& at) {
  double num = 0, den = 0;
  for (std::size_t j = 0; j < ref.size(); ++j) {
    num += std::norm(cdouble(got[at[j]]) - ref[j]);
    den += std::norm(ref[j]);
  }
  return std::sqrt(num / den);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

enum class Op { Type1, Type2, Q };

class CpuBench {
 public:
  CpuBench(const NufftBenchOptions& o, const std::function<void(const NufftBenchRow&)>& progress)
      : o_(o), progress_(progress), grid_{o.matrix, o.matrix, o.matrix}, traj_(make_points(o)) {
    const int n = std::max(1, o.transforms);
    c_ = random_values(traj_.size() * n, o.seed + 10);
    c2_.assign(c_.size(), cfloat(0, 0));
    f_ = random_values(grid_.voxels() * n, o.seed + 20);
    w_.assign(traj_.size(), 1.0f);
    wc_.assign(w_.begin(), w_.end());
    if (!o.points_out.empty()) write_points(traj_, o.points_out);
  }

  std::vector<NufftBenchRow> run() {
    std::vector<NufftBenchRow> rows;
    for (double tol : o_.tols)
      for (double sigma : o_.sigmas) {
        nufft::Options opt;
        opt.tol = tol;
        opt.sigma = sigma;
        add(rows, time_op(Op::Type1, opt, 1, false));
        add(rows, time_op(Op::Type2, opt, 1, false));
        if (o_.q) add(rows, time_op(Op::Q, opt, 1, false));
        if (o_.transforms > 1)
          for (Op op : {Op::Type1, Op::Type2}) {
            add(rows, time_op(op, opt, o_.transforms, true));
            add(rows, time_op(op, opt, o_.transforms, false));
          }
      }
    return rows;
  }

 private:
  void add(std::vector<NufftBenchRow>& rows, NufftBenchRow r) {
    if (progress_) progress_(r);
    rows.push_back(std::move(r));
  }

  // One call of `op` on n transforms (n = 1 unless batched or single calls).
  void execute(nufft::CpuPlan& plan, Op op, int n, int first) {
    const std::size_t m = traj_.size(), v = plan.modes().voxels();
    if (op == Op::Type2) {
      plan.type2(f_.data() + first * grid_.voxels(), c2_.data() + first * m, n);
      return;
    }
    if (op == Op::Q) {
      out_.resize(std::max(out_.size(), v));
      plan.type1(wc_.data(), out_.data(), 1);
      return;
    }
    out_.resize(std::max(out_.size(), v * (first + n)));
    plan.type1(c_.data() + first * m, out_.data() + first * v, n);
  }

  NufftBenchRow time_op(Op op, const nufft::Options& opt, int n, bool batched) {
    NufftBenchRow r;
    r.op = op == Op::Type1 ? "type1" : op == Op::Type2 ? "type2" : "q";
    r.variant = n == 1 ? "default" : batched ? "batched" : std::to_string(n) + " single calls";
    if (n > 1) r.op += " x" + std::to_string(n);
    r.transforms = n;
    r.tol = opt.tol;
    r.sigma = opt.sigma;
    r.points = traj_.size();
    const ImageGrid modes = op == Op::Q ? grid_.doubled() : grid_;
    try {
      std::vector<double> plan, setpts, exec, reuse, total;
      for (int rep = 0; rep < o_.reps; ++rep) {
        double p = 0, s = 0, e = 0, again = 0;
        const int calls = batched || n == 1 ? 1 : n;
        for (int call = 0; call < calls; ++call) {
          auto t0 = Clock::now();
          nufft::CpuPlan pl(modes, grid_, opt);
          p += ms_since(t0);
          t0 = Clock::now();
          pl.set_points(traj_);
          s += ms_since(t0);
          t0 = Clock::now();
          execute(pl, op, batched ? n : 1, call);
          e += ms_since(t0);
          if (call == 0) {
            t0 = Clock::now();
            execute(pl, op, batched ? n : 1, call);
            again = ms_since(t0);
            r.width = pl.kernel().width;
            r.fine = pl.fine();
          }
        }
        plan.push_back(p);
        setpts.push_back(s);
        exec.push_back(e);
        reuse.push_back(again);
        total.push_back(p + s + e);
      }
      r.plan_ms = median(plan);
      r.setpts_ms = median(setpts);
      r.ms = median(exec);
      r.ms_min = *std::min_element(exec.begin(), exec.end());
      r.ms_max = *std::max_element(exec.begin(), exec.end());
      r.reuse_ms = median(reuse);
      r.total_ms = median(total);
      r.pairs_per_s = double(modes.voxels()) * traj_.size() * n / (r.total_ms * 1e-3);
      r.relerr = check(op, modes);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    return r;
  }

  // The last call's first transform against the float64 direct sum.
  double check(Op op, const ImageGrid& modes) {
    if (op == Op::Type2) {
      const auto at = random_indices(traj_.size(), o_.check, o_.seed + 30);
      const std::vector<cfloat> f(f_.begin(), f_.begin() + grid_.voxels());
      return rel(forward_reference(traj_, f, grid_, at), c2_.data(), at);
    }
    const auto at = random_indices(modes.voxels(), o_.check, o_.seed + 40);
    if (op == Op::Q) return rel(q_reference(traj_, w_, grid_, at), out_.data(), at);
    const std::vector<cfloat> c(c_.begin(), c_.begin() + traj_.size());
    return rel(fhd_reference(traj_, c, grid_, at), out_.data(), at);
  }

  NufftBenchOptions o_;
  std::function<void(const NufftBenchRow&)> progress_;
  ImageGrid grid_;
  Trajectory traj_;
  // c_: type 1's strengths, fixed; c2_: type 2's output (written into c_, it
  // made every later type 1 row transform type 2's last output).
  std::vector<cfloat> c_, c2_, f_, out_, wc_;
  std::vector<float> w_;
};

}  // namespace

NufftBenchResult run_cpu_nufft_bench(const NufftBenchOptions& o,
                                     const std::function<void(const NufftBenchRow&)>& progress) {
  NufftBenchResult res;
  res.options = o;
  const nufft::CpuPlan probe(ImageGrid{8, 8, 8}, ImageGrid{8, 8, 8}, nufft::Options{});
  res.device = "cpu (" + std::to_string(probe.threads()) + " threads, " + probe.simd() + " spreading, FFTW)";
  res.rows = CpuBench(o, progress).run();
  return res;
}

}  // namespace fhd::app
