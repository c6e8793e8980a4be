// The NUFFT plan for Python: a thin owner of the C interface's plan
// (capi/fhdrecon_nufft.h). Arrays arrive through nanobind's ndarray (the
// buffer protocol for NumPy, DLPack for CuPy and PyTorch) and are used where
// they are, host or device, without a copy. The Python class fhdrecon.Plan
// (python/fhdrecon/_plan.py) adds FINUFFT's shapes, dtypes and axis order.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "common.hpp"
#include "fhdrecon_nufft.h"

namespace fhd::py {
namespace {

using Array = nb::ndarray<nb::c_contig>;

[[noreturn]] void raise(int code) {
  const std::string msg = std::string(fhd_nufft_error_message(code)) + ": " + fhd_nufft_last_error();
  if (code == FHD_NUFFT_ERR_ARGUMENT || code == FHD_NUFFT_ERR_TOLERANCE || code == FHD_NUFFT_ERR_NO_POINTS)
    throw nb::value_error(msg.c_str());
  if (code == FHD_NUFFT_ERR_MEMORY) throw std::bad_alloc();
  throw std::runtime_error(msg);
}

// One plan's calls run one at a time: the C interface's plan keeps its points
// and work buffers, and two threads in it at once crashed or mixed their
// results. The GIL is released first, so separate plans still run in parallel
// (and a thread waiting here does not hold the GIL the running one needs).
class NufftHandle {
 public:
  // n_modes in the C interface's order (first fastest).
  NufftHandle(int type, const std::vector<int64_t>& n_modes, int isign, int n_trans, double eps, int device,
              std::uintptr_t stream, double upsampfac)
      : type_(type), dim_(int(n_modes.size())), n_trans_(n_trans), device_(device) {
    fhd_nufft_opts o;
    fhd_nufft_default_opts(&o);
    o.upsampfac = upsampfac;
    o.stream = reinterpret_cast<void*>(stream);
    modes_ = 1;
    for (int64_t n : n_modes) modes_ *= std::size_t(n > 0 ? n : 0);
    const int ier = fhd_nufft_makeplan(type, dim_, n_modes.data(), isign, n_trans, eps, device, &plan_, &o);
    if (ier) raise(ier);
  }
  ~NufftHandle() {
    if (plan_) fhd_nufft_destroy(plan_);
  }
  NufftHandle(const NufftHandle&) = delete;
  NufftHandle& operator=(const NufftHandle&) = delete;

  // Points in the C interface's order (x first fastest), float32, contiguous.
  void setpts(const Array& x, const Array& y, const nb::object& z_obj) {
    const Array* pts[3] = {&x, &y, nullptr};
    Array z;
    if (dim_ == 3) {
      z = nb::cast<Array>(z_obj);
      pts[2] = &z;
    }
    const std::size_t m = x.size();
    for (int a = 0; a < dim_; ++a) {
      check_place(*pts[a], "points");
      if (pts[a]->dtype() != nb::dtype<float>())
        throw nb::type_error("points must be float32 (fhdrecon computes in single precision)");
      if (pts[a]->size() != m) throw nb::value_error("x, y (and z) must hold the same number of points");
    }
    int ier;
    {
      nb::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mutex_);
      ier = fhd_nufft_setpts(plan_, int64_t(m), static_cast<const float*>(x.data()),
                             static_cast<const float*>(y.data()),
                             dim_ == 3 ? static_cast<const float*>(z.data()) : nullptr);
      if (!ier) m_ = m;
    }
    if (ier) raise(ier);
  }

  // c: n_trans x M, f: n_trans x modes, complex64, contiguous, where the plan computes.
  void execute(Array c, Array f) {
    check_place(c, "c");
    check_place(f, "f");
    if (c.dtype() != nb::dtype<std::complex<float>>() || f.dtype() != nb::dtype<std::complex<float>>())
      throw nb::type_error("data must be complex64 (fhdrecon computes in single precision)");
    if (f.size() != modes_ * std::size_t(n_trans_))
      throw nb::value_error(("f holds " + std::to_string(f.size()) + " values: expected n_trans x modes = " +
                             std::to_string(modes_ * std::size_t(n_trans_)))
                                .c_str());
    int ier = 0;
    std::size_t expected = 0;
    {
      nb::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mutex_);
      // M read under the lock: another thread's setpts may have changed it.
      expected = m_ * std::size_t(n_trans_);
      if (c.size() == expected)
        ier = fhd_nufft_execute(plan_, static_cast<float*>(c.data()), static_cast<float*>(f.data()));
    }
    if (c.size() != expected)
      throw nb::value_error(("c holds " + std::to_string(c.size()) + " values: expected n_trans x M = " +
                             std::to_string(expected))
                                .c_str());
    if (ier) raise(ier);
  }

  int device() const { return device_; }
  int type() const { return type_; }

 private:
  // Arrays must live where the plan computes: host memory for the CPU plan,
  // that GPU's memory for a GPU plan.
  void check_place(const Array& a, const char* what) const {
    const bool on_gpu = a.device_type() == nb::device::cuda::value;
    const bool on_host = a.device_type() == nb::device::cpu::value;
    if (device_ < 0 && !on_host)
      throw nb::value_error((std::string(what) + " is not in host memory but the plan runs on the CPU").c_str());
    if (device_ >= 0 && !(on_gpu && a.device_id() == device_))
      throw nb::value_error(
          (std::string(what) + " is not in the memory of GPU " + std::to_string(device_) + ", where the plan runs")
              .c_str());
  }

  fhd_nufft_plan plan_ = nullptr;
  std::mutex mutex_;  // held by setpts and execute (see the class's comment)
  int type_, dim_, n_trans_, device_;
  std::size_t modes_ = 0, m_ = 0;
};

}  // namespace

void bind_nufft(nb::module_& m) {
  nb::class_<NufftHandle>(m, "NufftHandle",
                          "The C interface's plan (modes and points first-fastest); see fhdrecon.Plan")
      .def(nb::init<int, const std::vector<int64_t>&, int, int, double, int, std::uintptr_t, double>(),
           nb::arg("type"), nb::arg("n_modes"), nb::arg("isign"), nb::arg("n_trans"), nb::arg("eps"),
           nb::arg("device"), nb::arg("stream") = 0, nb::arg("upsampfac") = 0.0)
      .def("setpts", &NufftHandle::setpts, nb::arg("x").noconvert(), nb::arg("y").noconvert(),
           nb::arg("z").none() = nb::none())
      .def("execute", &NufftHandle::execute, nb::arg("c").noconvert(), nb::arg("f").noconvert())
      .def_prop_ro("device", &NufftHandle::device)
      .def_prop_ro("type", &NufftHandle::type);
  m.def("has_cuda", [] { return fhd_nufft_has_cuda() != 0; }, "True when this build has the CUDA backend");
}

}  // namespace fhd::py
