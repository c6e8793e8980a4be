// The CPU backend: OpenMP loops, FFTW single precision, BLAS for the separable
// FhD/Q. Vectors are plain host arrays (CpuVector).
#include "recon/cpu_backend.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "recon/cpu_fhd.hpp"
#include "recon/cpu_threads.hpp"
#include "core/error.hpp"
#include "recon/gridding_cpu.hpp"
#include "recon/nufft_cpu.hpp"
#include "recon/toeplitz.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fhd {

CpuVector& as_cpu(BackendVector& v) {
  auto* c = dynamic_cast<CpuVector*>(&v);
  if (!c) throw std::invalid_argument("cpu backend: vector belongs to another backend");
  return *c;
}

const CpuVector& as_cpu(const BackendVector& v) { return as_cpu(const_cast<BackendVector&>(v)); }

namespace {

int thread_count() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void check_same_size(const BackendVector& a, const BackendVector& b, const char* op) {
  if (a.size() != b.size()) throw std::invalid_argument(std::string("cpu backend ") + op + ": sizes differ");
}

// Per axis: output index j takes input index perm[j] of a centered transform.
// x_j = sum_k X_k e^{+i2pi (k-h)(j-h)/n}, h = n/2: feed X_k at (k - h) mod n,
// run the plain inverse DFT, read result j at (j - h) mod n. Any n, odd too.
std::vector<int> shift_by(int n, int h) {
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = (i - h + n) % n;
  return perm;
}

void permute(const std::vector<cfloat>& in, std::vector<cfloat>& out, const ImageGrid& d, bool scatter) {
  const std::vector<int> px = shift_by(d.nx, d.nx / 2), py = shift_by(d.ny, d.ny / 2), pz = shift_by(d.nz, d.nz / 2);
#pragma omp parallel for collapse(2)
  for (int iz = 0; iz < d.nz; ++iz)
    for (int iy = 0; iy < d.ny; ++iy)
      for (int ix = 0; ix < d.nx; ++ix) {
        const std::size_t a = ix + d.nx * (iy + std::size_t(d.ny) * iz);
        const std::size_t b = px[ix] + d.nx * (py[iy] + std::size_t(d.ny) * pz[iz]);
        if (scatter)
          out[b] = in[a];
        else
          out[a] = in[b];
      }
}

// Vectors shorter than this run on the calling thread: a parallel region
// costs a wake-up of every thread (and, on shared cores, a wait for the last
// of them to be scheduled), more than 64 KB of axpy takes.
const std::ptrdiff_t kSerialBelow = 1 << 13;

// sum conj(x) y in double over [0, n).
cdouble dot_range(const cfloat* xs, const cfloat* ys, std::ptrdiff_t n) {
  double re = 0.0, im = 0.0;
#pragma omp simd reduction(+ : re, im)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const double ar = xs[i].real(), ai = xs[i].imag(), br = ys[i].real(), bi = ys[i].imag();
    re += ar * br + ai * bi;  // conj(x) y
    im += ar * bi - ai * br;
  }
  return {re, im};
}

// Host vectors; elementwise ops in double, rounded once to float. One
// parallel region per call (dot2: one for both dots), none for short vectors.
class CpuVectorOps : public VectorOps {
 public:
  VecPtr upload(const std::vector<cfloat>& host) override { return std::make_unique<CpuVector>(host); }
  VecPtr zeros(std::size_t n) override { return std::make_unique<CpuVector>(std::vector<cfloat>(n)); }
  std::vector<cfloat> download(const BackendVector& v) override { return as_cpu(v).data; }
  void copy(const BackendVector& src, BackendVector& dst) override {
    check_same_size(src, dst, "copy");
    as_cpu(dst).data = as_cpu(src).data;
  }
  void axpy(cdouble a, const BackendVector& x, BackendVector& y) override {
    check_same_size(x, y, "axpy");
    const cfloat* xs = as_cpu(x).data.data();
    cfloat* ys = as_cpu(y).data.data();
    const std::ptrdiff_t n = std::ptrdiff_t(y.size());
#pragma omp parallel for schedule(static) if (n >= kSerialBelow)
    for (std::ptrdiff_t i = 0; i < n; ++i) ys[i] = cfloat(a * cdouble(xs[i]) + cdouble(ys[i]));
  }
  void xpay(const BackendVector& x, cdouble a, BackendVector& y) override {
    check_same_size(x, y, "xpay");
    const cfloat* xs = as_cpu(x).data.data();
    cfloat* ys = as_cpu(y).data.data();
    const std::ptrdiff_t n = std::ptrdiff_t(y.size());
#pragma omp parallel for schedule(static) if (n >= kSerialBelow)
    for (std::ptrdiff_t i = 0; i < n; ++i) ys[i] = cfloat(cdouble(xs[i]) + a * cdouble(ys[i]));
  }
  cdouble dot(const BackendVector& x, const BackendVector& y) override {
    check_same_size(x, y, "dot");
    return dot2(x, y, x, y).first;
  }
  // Both dots in one pass over the threads' blocks: preconditioned CG asks
  // for r.r and r.z together every iteration.
  std::pair<cdouble, cdouble> dot2(const BackendVector& a, const BackendVector& b, const BackendVector& c,
                                   const BackendVector& d) override {
    check_same_size(a, b, "dot");
    check_same_size(c, d, "dot");
    const cfloat *as = as_cpu(a).data.data(), *bs = as_cpu(b).data.data();
    const cfloat *cs = as_cpu(c).data.data(), *ds = as_cpu(d).data.data();
    const std::ptrdiff_t n1 = std::ptrdiff_t(a.size()), n2 = std::ptrdiff_t(c.size());
    const bool same = as == cs && bs == ds;
    double r1 = 0, i1 = 0, r2 = 0, i2 = 0;
#pragma omp parallel reduction(+ : r1, i1, r2, i2) if (std::max(n1, n2) >= kSerialBelow)
    {
#ifdef _OPENMP
      const std::ptrdiff_t t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
      const std::ptrdiff_t t = 0, nt = 1;
#endif
      // Fixed blocks per thread: the same sums, in the same order, every call.
      const std::ptrdiff_t b1 = n1 * t / nt, e1 = n1 * (t + 1) / nt, b2 = n2 * t / nt, e2 = n2 * (t + 1) / nt;
      const cdouble s1 = dot_range(as + b1, bs + b1, e1 - b1);
      const cdouble s2 = same ? s1 : dot_range(cs + b2, ds + b2, e2 - b2);
      r1 += s1.real();
      i1 += s1.imag();
      r2 += s2.real();
      i2 += s2.imag();
    }
    return {{r1, i1}, {r2, i2}};
  }
  void multiply(const BackendVector& s, const BackendVector& x, BackendVector& y, bool conjugate) override {
    check_same_size(s, x, "multiply");
    check_same_size(x, y, "multiply");
    const cfloat* ss = as_cpu(s).data.data();
    const cfloat* xs = as_cpu(x).data.data();
    cfloat* ys = as_cpu(y).data.data();
    const std::ptrdiff_t n = std::ptrdiff_t(x.size());
#pragma omp parallel for schedule(static) if (n >= kSerialBelow)
    for (std::ptrdiff_t i = 0; i < n; ++i) ys[i] = (conjugate ? std::conj(ss[i]) : ss[i]) * xs[i];
  }
  double magnitude_sse(const BackendVector& x, const BackendVector& ref) override {
    check_same_size(x, ref, "magnitude_sse");
    const cfloat* xs = as_cpu(x).data.data();
    const cfloat* rs = as_cpu(ref).data.data();
    const std::ptrdiff_t n = std::ptrdiff_t(x.size());
    double sse = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sse) if (n >= kSerialBelow)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const double d = std::abs(cdouble(xs[i])) - double(rs[i].real());
      sse += d * d;
    }
    return sse;
  }
};

nufft::Options nufft_options(const FhdOptions& opt) {
  nufft::Options o;
  o.tol = opt.nufft_tol;
  return o;
}

// The CPU's uploaded trajectory keeps its NUFFT plans for the image grid (one
// per grid and tolerance): fhd() per coil and forward() per residual then sort
// the points once. Q's plan (the doubled grid, 8x the fine grid) is made and
// dropped per call: Q is computed once per trajectory. A plan is not
// re-entrant, so each is used under its own lock.
class CpuPoints : public Points {
 public:
  using Points::Points;
  template <class F>
  auto with_plan(const ImageGrid& grid, const FhdOptions& opt, F f) {
    std::unique_lock<std::mutex> cache_lock(lock_);
    Entry& e = plans_[{grid.nx, grid.ny, grid.nz, opt.nufft_tol}];
    cache_lock.unlock();
    std::lock_guard<std::mutex> guard(e.lock);
    if (!e.plan) e.plan = std::make_unique<nufft::CpuPlan>(host(), grid, grid, nufft_options(opt));
    return f(*e.plan);
  }

 private:
  struct Entry {
    std::mutex lock;
    std::unique_ptr<nufft::CpuPlan> plan;
  };
  std::mutex lock_;
  std::map<std::tuple<int, int, int, double>, Entry> plans_;
};

CpuPoints& as_cpu_points(const Points& k) {
  auto* p = dynamic_cast<const CpuPoints*>(&k);
  if (!p) throw std::invalid_argument("cpu backend: points uploaded to another backend");
  return const_cast<CpuPoints&>(*p);
}

class CpuBackend : public Backend {
 public:
  std::string name() const override {
#ifdef FHD_HAVE_CBLAS
    const char* blas = "OpenBLAS";
#else
    const char* blas = "no BLAS";
#endif
    return "cpu (" + std::to_string(thread_count()) + " threads, FFTW, " + blas + ")";
  }
  bool is_gpu() const override { return false; }
  VectorOps& vec() override { return vec_; }

  // The CPU computes from the host copy every Points holds.
  std::unique_ptr<Points> upload_points(const Trajectory& traj) override {
    if (traj.ky.size() != traj.size() || (traj.kz.size() != traj.size() && !traj.kz.empty()))
      throw InputError("trajectory", "kx/ky/kz lengths", std::to_string(traj.size()),
                       "must be equal (kz may be empty for 2D)");
    Trajectory t = traj;
    if (t.kz.empty()) t.kz.assign(t.size(), 0.0f);
    return std::make_unique<CpuPoints>(std::move(t));
  }

  std::vector<cfloat> mu(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) override {
    if (phi.empty()) return data;
    if (phi.size() != data.size())
      throw InputError("mu", "phi length", std::to_string(phi.size()),
                       "must equal the data length " + std::to_string(data.size()));
    std::vector<cfloat> out(data.size());
    for (std::size_t m = 0; m < data.size(); ++m) out[m] = std::conj(phi[m]) * data[m];
    return out;
  }

  std::vector<cfloat> fhd(const Points& k, const std::vector<cfloat>& mu, const ImageGrid& grid,
                          const FhdOptions& opt) override {
    check_samples(k, mu.size(), "fhd", "mu length");
    if (opt.method == FhdMethod::Nufft)
      return as_cpu_points(k).with_plan(grid, opt, [&](nufft::CpuPlan& p) { return p.type1(mu); });
    return cpu_fhd(k.host(), mu, grid, opt);
  }
  std::vector<cfloat> forward(const Points& k, const std::vector<cfloat>& image, const ImageGrid& grid,
                              const FhdOptions& opt) override {
    if (opt.method != FhdMethod::Nufft) return Backend::forward(k, image, grid, opt);
    if (image.size() != grid.voxels())
      throw InputError("forward", "image length", std::to_string(image.size()),
                       "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
    return as_cpu_points(k).with_plan(grid, opt, [&](nufft::CpuPlan& p) { return p.type2(image); });
  }
  std::vector<cfloat> q(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                        const FhdOptions& opt) override {
    if (!w.empty()) check_samples(k, w.size(), "q", "weights length");
    if (opt.method == FhdMethod::Nufft) return nufft::q_by_nufft(k.host(), w, grid, nufft_options(opt));
    return cpu_q(k.host(), w, grid, opt);
  }
  std::unique_ptr<NormalOperator> normal(const std::vector<cfloat>& q, const ImageGrid& grid,
                                         double lambda) override {
    return std::make_unique<ToeplitzOperator>(q, grid, lambda);
  }

  std::vector<cfloat> grid_scatter(const Points& k, const std::vector<cfloat>& weighted_data, const ImageGrid& image,
                                   const ImageGrid& over, const GridKernel& kernel) override {
    check_samples(k, weighted_data.size(), "grid_scatter", "data length");
    return cpu_grid_scatter(k.host(), weighted_data, image, over, kernel);
  }

  void centered_idft(std::vector<cfloat>& grid, const ImageGrid& dims) override {
    if (grid.size() != dims.voxels()) throw std::invalid_argument("centered_idft: grid size does not match dims");
    std::vector<cfloat> work(grid.size());
    permute(grid, work, dims, true);
    FftwPlan(dims, work.data(), true).execute();
    permute(work, grid, dims, false);
  }

 private:
  static void check_samples(const Points& k, std::size_t n, const char* where, const char* field) {
    if (n != k.size())
      throw InputError(where, field, std::to_string(n),
                       "must equal the trajectory's " + std::to_string(k.size()) + " samples");
  }

  CpuVectorOps vec_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() {
  size_openmp_to_process();  // the CPUs this process may use, unless OMP_NUM_THREADS says
  return std::make_unique<CpuBackend>();
}

}  // namespace fhd
