// The CPU device: host vectors, OpenMP loops; elementwise work in double,
// rounded once to float; sums in double.
#include "recon/device/cpu_device.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "recon/device/cpu_threads.hpp"
#include "recon/device/kernels.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fhd {

int cpu_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

namespace {

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

// The CPU's work is done when its call returns: the host clock.
class HostMark : public TimeMark {
 public:
  double since(const TimeMark& earlier) override {
    return std::chrono::duration<double>(t_ - static_cast<const HostMark&>(earlier).t_).count();
  }

 private:
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

class CpuDevice : public Device {
 public:
  std::string name() const override {
#ifdef FHD_HAVE_CBLAS
    const char* blas = "OpenBLAS";
#else
    const char* blas = "no BLAS";
#endif
    return "cpu (" + std::to_string(cpu_threads()) + " threads, FFTW, " + blas + ")";
  }
  DeviceKind kind() const override { return DeviceKind::Cpu; }
  void synchronize() override {}
  std::unique_ptr<TimeMark> mark() override { return std::make_unique<HostMark>(); }

  VecPtr zeros(std::size_t n) override {
    auto mem = std::make_shared<std::vector<cfloat>>(n);
    return std::make_unique<DeviceVector>(*this, mem->data(), n, mem);
  }
  void to_device(const cfloat* host, DeviceVector& dst) override {
    cfloat* d = mine(dst, "to_device");
    std::copy(host, host + dst.size(), d);
  }
  void to_host(const DeviceVector& src, cfloat* host) override {
    const cfloat* s = mine(src, "to_host");
    std::copy(s, s + src.size(), host);
  }
  void copy(const DeviceVector& src, DeviceVector& dst) override {
    require_same_size(src, dst, "copy");
    if (src.device().kind() != DeviceKind::Cpu) {  // another device's vector: it copies to the host
      src.device().to_host(src, mine(dst, "copy"));
      return;
    }
    if (src.data() != dst.data()) std::copy(src.data(), src.data() + src.size(), mine(dst, "copy"));
  }
  std::unique_ptr<Points> upload_points(const Trajectory& traj) override {
    if (traj.ky.size() != traj.size() || (traj.kz.size() != traj.size() && !traj.kz.empty()))
      throw InputError("trajectory", "kx/ky/kz lengths",
                       std::to_string(traj.size()) + "/" + std::to_string(traj.ky.size()) + "/" +
                           std::to_string(traj.kz.size()),
                       "must be equal (kz may be empty for 2D)");
    Trajectory t = traj;
    if (t.kz.empty()) t.kz.assign(t.size(), 0.0f);  // the CPU computes from the host copy
    return std::make_unique<Points>(std::move(t));
  }

  // One parallel region per call (dot2: one for both dots), none for short vectors.
  void axpby(cdouble a, const DeviceVector& x, cdouble b, DeviceVector& y) override {
    require_same_size(x, y, "axpby");
    const cfloat* xs = mine(x, "axpby");
    cfloat* ys = mine(y, "axpby");
    const std::ptrdiff_t n = std::ptrdiff_t(y.size());
    if (a == 0.0 && b == 0.0) {
      std::fill(ys, ys + n, cfloat(0.0f));
    } else if (a == 0.0) {
#pragma omp parallel for schedule(static) if (n >= kSerialBelow)
      for (std::ptrdiff_t i = 0; i < n; ++i) ys[i] = cfloat(b * cdouble(ys[i]));
    } else if (b == 1.0) {
#pragma omp parallel for schedule(static) if (n >= kSerialBelow)
      for (std::ptrdiff_t i = 0; i < n; ++i) ys[i] = cfloat(a * cdouble(xs[i]) + cdouble(ys[i]));
    } else {
#pragma omp parallel for schedule(static) if (n >= kSerialBelow)
      for (std::ptrdiff_t i = 0; i < n; ++i) ys[i] = cfloat(a * cdouble(xs[i]) + b * cdouble(ys[i]));
    }
  }
  void multiply(const DeviceVector& s, const DeviceVector& x, DeviceVector& y, bool conjugate) override {
    require_same_size(s, x, "multiply");
    require_same_size(x, y, "multiply");
    const cfloat* ss = mine(s, "multiply");
    const cfloat* xs = mine(x, "multiply");
    cfloat* ys = mine(y, "multiply");
    const std::ptrdiff_t n = std::ptrdiff_t(x.size());
#pragma omp parallel for schedule(static) if (n >= kSerialBelow)
    for (std::ptrdiff_t i = 0; i < n; ++i) ys[i] = (conjugate ? std::conj(ss[i]) : ss[i]) * xs[i];
  }
  cdouble dot(const DeviceVector& x, const DeviceVector& y) override { return dot2(x, y, x, y).first; }
  // Both dots in one pass over the threads' blocks: preconditioned CG asks for
  // r.r and r.z together every iteration.
  std::pair<cdouble, cdouble> dot2(const DeviceVector& a, const DeviceVector& b, const DeviceVector& c,
                                   const DeviceVector& d) override {
    require_same_size(a, b, "dot");
    require_same_size(c, d, "dot");
    const cfloat *as = mine(a, "dot"), *bs = mine(b, "dot"), *cs = mine(c, "dot"), *ds = mine(d, "dot");
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
  double magnitude_sse(const DeviceVector& x, const DeviceVector& ref) override {
    require_same_size(x, ref, "magnitude_sse");
    const cfloat* xs = mine(x, "magnitude_sse");
    const cfloat* rs = mine(ref, "magnitude_sse");
    const std::ptrdiff_t n = std::ptrdiff_t(x.size());
    double sse = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sse) if (n >= kSerialBelow)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      const double e = std::abs(cdouble(xs[i])) - double(rs[i].real());
      sse += e * e;
    }
    return sse;
  }

 private:
  cfloat* mine(DeviceVector& v, const char* where) const {
    require_on(*this, v, where);
    return v.data();
  }
  const cfloat* mine(const DeviceVector& v, const char* where) const {
    require_on(*this, v, where);
    return v.data();
  }
};

}  // namespace

cfloat* host_data(DeviceVector& v) {
  if (v.device().kind() != DeviceKind::Cpu)
    throw std::invalid_argument("a CPU operation got a vector of the device " + v.device().name());
  return v.data();
}

const cfloat* host_data(const DeviceVector& v) { return host_data(const_cast<DeviceVector&>(v)); }

std::unique_ptr<Device> make_cpu_device() {
  install_cpu_kernels();
  size_openmp_to_process();  // the CPUs this process may use, unless OMP_NUM_THREADS says
  return std::make_unique<CpuDevice>();
}

}  // namespace fhd
