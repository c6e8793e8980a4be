// The C interface of the NUFFT plan (capi/fhdrecon_nufft.h): FINUFFT's
// conventions mapped onto the project's (docs/python.md, "Conventions"):
//   FINUFFT point x (radians, period 2 pi) -> k = x N / (2 pi) cycles/FOV,
//   FINUFFT mode k_d (modeord 0, -floor(N/2)..)  -> our index i = k_d + N/2,
//     which is our x_i = (i - N/2)/N, so exp(i k_d x_j) = exp(i 2 pi k_j x_i),
//   FINUFFT's first dimension fastest -> our x fastest (same memory),
//   the sign: ours is + for type 1 and - for type 2; the other sign is the
//     same transform of the mirrored points (k -> -k).
#include "capi/fhdrecon_nufft.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "capi/nufft_c_internal.hpp"
#include "core/error.hpp"
#include "recon/nufft/nufft_cpu.hpp"
#include "recon/nufft/nufft_kernel.hpp"

namespace {

using fhd::cfloat;
using fhd::ImageGrid;

constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr double kMinTol = 1e-7;  // single precision's floor (the CLI's --nufft-tol range)

thread_local std::string last_error;

// An error with its C code.
struct Failure {
  int code;
  std::string message;
};

[[noreturn]] void fail(int code, const std::string& message) { throw Failure{code, message}; }

// Runs f, turning every exception into a code and this thread's last_error.
template <class F>
int guarded(F&& f) {
  try {
    f();
    last_error.clear();
    return FHD_NUFFT_OK;
  } catch (const Failure& e) {
    last_error = e.message;
    return e.code;
  } catch (const fhd::InputError& e) {
    last_error = e.what();
    return FHD_NUFFT_ERR_ARGUMENT;
  } catch (const fhd::DeviceError& e) {
    last_error = e.what();
    return std::strstr(e.what(), "out of GPU memory") ? FHD_NUFFT_ERR_MEMORY : FHD_NUFFT_ERR_DEVICE;
  } catch (const std::bad_alloc&) {
    last_error = "out of host memory";
    return FHD_NUFFT_ERR_MEMORY;
  } catch (const std::exception& e) {
    last_error = e.what();
    return FHD_NUFFT_ERR_INTERNAL;
  } catch (...) {
    last_error = "unknown exception";
    return FHD_NUFFT_ERR_INTERNAL;
  }
}

// x in radians -> [-pi, pi), FINUFFT's periodic domain.
inline double wrap_radians(double x) { return x - kTwoPi * std::floor((x + kTwoPi / 2) / kTwoPi); }

}  // namespace

struct fhd_nufft_plan_s {
  int type = 1;
  int dim = 2;
  int n_trans = 1;
  bool mirror = false;  // isign opposite to ours: transform the points -k
  double tol = 1e-6;
  double sigma = 2.0;
  int device = FHD_NUFFT_CPU;
  ImageGrid modes;  // the computed axes' modes: N1 = nx (fastest), N2 = ny, N3 = nz (1 in 2D)
  // The axes computed are the caller's axes of 2 or more modes, in order:
  // axis[i] is the caller's axis (0 = x) of computed axis i, `used` of them.
  int used = 2;
  int axis[3] = {0, 1, 2};
  std::size_t m = 0;
  bool has_points = false;
  std::unique_ptr<fhd::nufft::CpuPlan> cpu;
  fhd::capi::GpuNufft* gpu = nullptr;

  ~fhd_nufft_plan_s() {
    if (gpu) fhd::capi::gpu_destroy(gpu);
  }
  int n(int axis) const { return axis == 0 ? modes.nx : axis == 1 ? modes.ny : modes.nz; }
  // k = wrap(sign x) * scale: radians to cycles/FOV, mirrored for the other sign.
  double sign() const { return mirror ? -1.0 : 1.0; }
  double scale(int axis) const { return n(axis) / kTwoPi; }
};

namespace {

void check_plan_args(int type, int dim, const int64_t* n_modes, int isign, int n_trans, double tol) {
  if (type != 1 && type != 2)
    fail(FHD_NUFFT_ERR_ARGUMENT, "type = " + std::to_string(type) + ": must be 1 or 2 (type 3 is not offered)");
  if (dim != 2 && dim != 3) fail(FHD_NUFFT_ERR_ARGUMENT, "dim = " + std::to_string(dim) + ": must be 2 or 3");
  if (!n_modes) fail(FHD_NUFFT_ERR_ARGUMENT, "n_modes = NULL: must point at dim values");
  for (int a = 0; a < dim; ++a)
    if (n_modes[a] < 1 || n_modes[a] > 65536)
      fail(FHD_NUFFT_ERR_ARGUMENT,
           "n_modes[" + std::to_string(a) + "] = " + std::to_string(n_modes[a]) + ": must lie in 1..65536");
  if (isign != 0 && isign != 1 && isign != -1)
    fail(FHD_NUFFT_ERR_ARGUMENT, "isign = " + std::to_string(isign) + ": must be +1, -1 or 0 (the type's default)");
  if (n_trans < 1) fail(FHD_NUFFT_ERR_ARGUMENT, "n_trans = " + std::to_string(n_trans) + ": must be >= 1");
  if (!(tol > 0 && tol <= 1e-1))
    fail(FHD_NUFFT_ERR_TOLERANCE, "tol = " + std::to_string(tol) + ": must lie in (0, 0.1]");
}

// An axis of one mode holds k = 0 alone, where exp(i k x) = 1 for every point,
// so it is dropped, as if absent: FINUFFT takes n_modes of 1, our NUFFT needs 2 or
// more along x and y (it failed at setpts with "internal error"). A dropped axis
// has stride 0 in the mode array, so its memory order stays. Two axes must remain.
void compact_axes(fhd_nufft_plan_s& p, int dim, const int64_t* n_modes) {
  int n[3] = {1, 1, 1};
  std::string all;
  p.used = 0;
  for (int a = 0; a < dim; ++a) {
    all += (a ? ", " : "") + std::to_string(n_modes[a]);
    if (n_modes[a] > 1) {
      p.axis[p.used] = a;
      n[p.used++] = int(n_modes[a]);
    }
  }
  if (p.used < 2)
    fail(FHD_NUFFT_ERR_ARGUMENT, "n_modes = (" + all +
                                     "): at least two axes need 2 or more modes (an axis of 1 mode is dropped; "
                                     "a 1D transform is not offered)");
  p.modes = {n[0], n[1], n[2]};
}

void check_opts(const fhd_nufft_opts& o) {
  if (o.modeord != 0)
    fail(FHD_NUFFT_ERR_ARGUMENT,
         "modeord = " + std::to_string(o.modeord) + ": only 0 (modes -N/2 .. N/2-1) is supported");
  if (o.upsampfac != 0 && o.upsampfac != 2.0 && o.upsampfac != 1.25)
    fail(FHD_NUFFT_ERR_ARGUMENT, "upsampfac = " + std::to_string(o.upsampfac) + ": must be 2.0 or 1.25 (0 = 2.0)");
}

// A NaN or infinite point has no place on the periodic domain: its wrapped
// value is NaN, whose grid index is undefined (std::length_error or a
// segfault at execute before this check).
[[noreturn]] void not_finite(char name, std::size_t j, float v) {
  fail(FHD_NUFFT_ERR_ARGUMENT, std::string(1, name) + "[" + std::to_string(j) + "] = " +
                                   (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf") + ": points must be finite");
}

// Host points in radians -> the CPU plan's trajectory (cycles/FOV); throws on
// the first point that is not finite. src: the computed axes' points, names[a]
// the caller's name of src[a].
fhd::Trajectory host_trajectory(const fhd_nufft_plan_s& p, std::size_t m, const float* const src[3],
                                const char* names) {
  fhd::Trajectory t;
  t.resize(m);
  std::vector<float>* k[3] = {&t.kx, &t.ky, &t.kz};
  for (int a = 0; a < p.used; ++a) {
    const double s = p.scale(a);
    for (std::size_t j = 0; j < m; ++j) {
      if (!std::isfinite(src[a][j])) not_finite(names[a], j, src[a][j]);
      (*k[a])[j] = float(wrap_radians(p.sign() * src[a][j]) * s);
    }
  }
  return t;
}

void cpu_execute(fhd_nufft_plan_s& p, float* c, float* f) {
  auto* cc = reinterpret_cast<cfloat*>(c);
  auto* ff = reinterpret_cast<cfloat*>(f);
  // The n_trans transforms in one call: the points are sorted once and each
  // point's kernel values computed once for all of them.
  if (p.type == 1)
    p.cpu->type1(cc, ff, p.n_trans);
  else
    p.cpu->type2(ff, cc, p.n_trans);
}

}  // namespace

extern "C" {

void fhd_nufft_default_opts(fhd_nufft_opts* opts) {
  if (!opts) return;
  opts->modeord = 0;
  opts->upsampfac = 0.0;
  opts->stream = nullptr;
}

int fhd_nufft_makeplan(int type, int dim, const int64_t* n_modes, int isign, int n_trans, double tol, int device,
                       fhd_nufft_plan* plan, const fhd_nufft_opts* opts) {
  return guarded([&] {
    if (!plan) fail(FHD_NUFFT_ERR_ARGUMENT, "plan = NULL: must point at an fhd_nufft_plan");
    *plan = nullptr;
    check_plan_args(type, dim, n_modes, isign, n_trans, tol);
    fhd_nufft_opts o;
    fhd_nufft_default_opts(&o);
    if (opts) o = *opts;
    check_opts(o);
    auto p = std::make_unique<fhd_nufft_plan_s>();
    p->type = type;
    p->dim = dim;
    p->n_trans = n_trans;
    const int ours = type == 1 ? 1 : -1;
    p->mirror = isign != 0 && isign != ours;
    p->tol = std::max(tol, kMinTol);
    // Both engines take 1.25 as 2.0 below the tolerance single precision reaches with it.
    p->sigma = o.upsampfac == 0 || p->tol < fhd::nufft::kMinTolSigma125 ? 2.0 : o.upsampfac;
    compact_axes(*p, dim, n_modes);
    p->device = device;
    if (device < FHD_NUFFT_CPU)
      fail(FHD_NUFFT_ERR_ARGUMENT, "device = " + std::to_string(device) + ": must be -1 (CPU) or a GPU id >= 0");
    if (device >= 0) {
      if (!fhd_nufft_has_cuda())
        fail(FHD_NUFFT_ERR_NO_GPU, "device = " + std::to_string(device) + ": this fhdrecon was built without CUDA");
      try {  // no driver, no GPU or no such id: the header's "no such GPU", for a caller falling back to the CPU
        fhd::capi::gpu_check_device(device);
      } catch (const Failure&) {
        throw;
      } catch (const std::exception& e) {
        fail(FHD_NUFFT_ERR_NO_GPU, e.what());
      }
      p->gpu = fhd::capi::gpu_make(device, p->modes, p->tol, p->sigma, o.stream);
    } else {
      (void)fhd::nufft::kernel_for(p->tol, p->sigma);  // the tolerance and factor are usable
    }
    *plan = p.release();
  });
}

int fhd_nufft_setpts(fhd_nufft_plan plan, int64_t M, const float* x, const float* y, const float* z) {
  return guarded([&] {
    if (!plan) fail(FHD_NUFFT_ERR_ARGUMENT, "plan = NULL");
    if (M < 0) fail(FHD_NUFFT_ERR_ARGUMENT, "M = " + std::to_string(M) + ": must be >= 0");
    if (M > 0 && (!x || !y || (plan->dim == 3 && !z)))
      fail(FHD_NUFFT_ERR_ARGUMENT, "points: x, y" + std::string(plan->dim == 3 ? " and z" : "") + " must not be NULL");
    plan->has_points = false;
    plan->m = std::size_t(M);
    // The computed axes' points; an axis of one mode's are not read (exp(i 0 x) = 1).
    const float* given[3] = {x, y, z};
    const float* pts[3] = {nullptr, nullptr, nullptr};
    char names[4] = "xyz";
    for (int a = 0; a < plan->used; ++a) pts[a] = given[plan->axis[a]], names[a] = "xyz"[plan->axis[a]];
    if (plan->gpu) {
      const double s[3] = {plan->scale(0), plan->scale(1), plan->scale(2)};
      fhd::capi::gpu_setpts(plan->gpu, plan->m, pts, names, plan->sign(), s);
    } else {
      fhd::Trajectory t = host_trajectory(*plan, plan->m, pts, names);
      fhd::nufft::Options opt;
      opt.tol = plan->tol;
      opt.sigma = plan->sigma;
      plan->cpu.reset();  // one fine grid at a time
      plan->cpu = std::make_unique<fhd::nufft::CpuPlan>(t, plan->modes, plan->modes, opt);
    }
    plan->has_points = true;
  });
}

int fhd_nufft_execute(fhd_nufft_plan plan, float* c, float* f) {
  return guarded([&] {
    if (!plan) fail(FHD_NUFFT_ERR_ARGUMENT, "plan = NULL");
    if (!plan->has_points) fail(FHD_NUFFT_ERR_NO_POINTS, "execute before setpts");
    if ((!c && plan->m > 0) || !f) fail(FHD_NUFFT_ERR_ARGUMENT, "c and f must not be NULL");
    if (plan->gpu)
      fhd::capi::gpu_execute(plan->gpu, plan->type, plan->n_trans, c, f);
    else
      cpu_execute(*plan, c, f);
  });
}

int fhd_nufft_destroy(fhd_nufft_plan plan) {
  return guarded([&] { delete plan; });
}

const char* fhd_nufft_error_message(int code) {
  switch (code) {
    case FHD_NUFFT_OK: return "success";
    case FHD_NUFFT_ERR_ARGUMENT: return "an argument is out of range";
    case FHD_NUFFT_ERR_TOLERANCE: return "the tolerance is out of range";
    case FHD_NUFFT_ERR_NO_POINTS: return "execute before setpts";
    case FHD_NUFFT_ERR_NO_GPU: return "no such GPU, or the library was built without CUDA";
    case FHD_NUFFT_ERR_DEVICE: return "a CUDA call failed";
    case FHD_NUFFT_ERR_MEMORY: return "out of memory";
    case FHD_NUFFT_ERR_INTERNAL: return "internal error";
    default: return "unknown error code";
  }
}

const char* fhd_nufft_last_error(void) { return last_error.c_str(); }

int fhd_nufft_has_cuda(void) {
#ifdef FHD_HAVE_CUDA
  return 1;
#else
  return 0;
#endif
}

}  // extern "C"

#ifndef FHD_HAVE_CUDA
// The CPU-only build: makeplan refuses device >= 0 before these are reached.
namespace fhd::capi {
GpuNufft* gpu_make(int, const ImageGrid&, double, double, void*) { fail(FHD_NUFFT_ERR_NO_GPU, "no CUDA"); }
void gpu_setpts(GpuNufft*, std::size_t, const float* const*, const char*, double, const double*) {
  fail(FHD_NUFFT_ERR_NO_GPU, "no CUDA");
}
void gpu_execute(GpuNufft*, int, int, float*, float*) { fail(FHD_NUFFT_ERR_NO_GPU, "no CUDA"); }
void gpu_destroy(GpuNufft*) noexcept {}
void gpu_check_device(int) { fail(FHD_NUFFT_ERR_NO_GPU, "no CUDA"); }
}  // namespace fhd::capi
#endif
