#pragma once
// The device seam (docs/architecture.md): where vectors live and the BLAS-1
// work every solver needs, on the CPU (recon/device/cpu_device.cpp: OpenMP)
// or a GPU (cuda/device/gpu_device.cu: CUDA, one stream per device). Nothing
// feature-specific: an operator family that needs code of its own per device
// (the NUFFT, the exact gather, the Toeplitz FFT pair, finite differences,
// wavelets, ...) declares an interface and registers one implementation per
// device kind (recon/device/kernels.hpp); Device::kernels<K>() hands out this
// device's instance. recon/ never includes a CUDA header.
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/trajectory.hpp"
#include "recon/device/vector.hpp"

namespace fhd {

enum class DeviceKind { Cpu, Gpu };

// A trajectory uploaded once to where its device computes (the host copy for
// the CPU, device arrays for a GPU). Operators take it explicitly.
class Points {
 public:
  explicit Points(Trajectory host) : host_(std::move(host)) {}
  virtual ~Points() = default;
  std::size_t size() const { return host_.size(); }
  const Trajectory& host() const { return host_; }  // the k values, for host-side work (DCF, checks)

 private:
  Trajectory host_;
};

// A mark on a device's timeline: the moment the work enqueued before it is done.
class TimeMark {
 public:
  virtual ~TimeMark() = default;
  // Seconds from `earlier` (a mark of the same device) to this one; waits for this one.
  virtual double since(const TimeMark& earlier) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  // For logs: "cpu (2 threads, FFTW, OpenBLAS)", "gpu 0: NVIDIA H100 ...".
  virtual std::string name() const = 0;
  virtual DeviceKind kind() const = 0;
  bool is_gpu() const { return kind() == DeviceKind::Gpu; }
  // Returns when everything enqueued on this device has finished.
  virtual void synchronize() = 0;
  // A mark after the work enqueued so far, without waiting for it: stage
  // times are taken when the device has finished each stage (a GPU's kernels
  // run asynchronously) without the host stopping between stages.
  virtual std::unique_ptr<TimeMark> mark() = 0;

  // ---- memory
  virtual VecPtr zeros(std::size_t n) = 0;
  virtual void to_device(const cfloat* host, DeviceVector& dst) = 0;  // dst.size() values
  virtual void to_host(const DeviceVector& src, cfloat* host) = 0;    // src.size() values
  // dst = src, of equal sizes; src may live on another device (peer copy).
  // In the order of each device's queued work: the copy runs after what is
  // queued so far on src's device and on this one, and src's device runs its
  // later work after it (src may be written or freed at once). Between GPUs
  // the host does not wait for it; a CPU device copies at once.
  virtual void copy(const DeviceVector& src, DeviceVector& dst) = 0;
  // Checks the lengths (InputError; kz may be empty for 2D) and uploads k.
  virtual std::unique_ptr<Points> upload_points(const Trajectory& traj) = 0;

  // ---- BLAS-1, elementwise in double rounded once to float; sums in double
  virtual void axpby(cdouble a, const DeviceVector& x, cdouble b, DeviceVector& y) = 0;  // y = a x + b y
  // y_i = s_i x_i, or conj(s_i) x_i; y may be x.
  virtual void multiply(const DeviceVector& s, const DeviceVector& x, DeviceVector& y, bool conjugate) = 0;
  virtual cdouble dot(const DeviceVector& x, const DeviceVector& y) = 0;  // sum conj(x) y
  // dot(a, b) and dot(c, d) together: preconditioned CG needs r.r and r.z each
  // iteration, and on a GPU each dot waits for the device (a second wait was a
  // quarter of PCG's time per iteration at 64^3).
  virtual std::pair<cdouble, cdouble> dot2(const DeviceVector& a, const DeviceVector& b, const DeviceVector& c,
                                           const DeviceVector& d) = 0;
  // sum (|x_i| - Re ref_i)^2: a magnitude image's squared error against a real
  // reference, so PSNR per iteration brings one scalar to the host.
  virtual double magnitude_sse(const DeviceVector& x, const DeviceVector& ref) = 0;

  // ---- conveniences over the above
  VecPtr upload(const std::vector<cfloat>& host);
  VecPtr upload(const cfloat* host, std::size_t n);  // any host buffer (a shared Q)
  std::vector<cfloat> download(const DeviceVector& v);
  void download_into(const DeviceVector& v, std::vector<cfloat>& out);  // out resized
  VecPtr clone(const DeviceVector& v);
  void axpy(cdouble a, const DeviceVector& x, DeviceVector& y) { axpby(a, x, 1.0, y); }
  void xpay(const DeviceVector& x, cdouble a, DeviceVector& y) { axpby(1.0, x, a, y); }
  void scale(cdouble a, DeviceVector& x) { axpby(0.0, x, a, x); }
  void set_zero(DeviceVector& x);

  // This device's implementation of the operator family K, made at first use
  // (recon/device/kernels.hpp). Throws std::logic_error when none is registered.
  template <class K>
  K& kernels() {
    return *static_cast<K*>(kernel_instance(typeid(K)));
  }

 private:
  void* kernel_instance(std::type_index family);
  std::mutex kernels_mutex_;
  std::unordered_map<std::type_index, std::shared_ptr<void>> kernels_;
};

// The CPU device (recon/device/cpu_device.cpp). GPUs: cuda/device/gpu_device.hpp;
// app/ chooses for --device auto|cpu|gpu.
std::unique_ptr<Device> make_cpu_device();

// Throws std::invalid_argument unless v lives on `dev` (a vector from another
// device reached an operator), naming `where`.
void require_on(const Device& dev, const DeviceVector& v, const char* where);
// Throws std::invalid_argument unless a and b have the same size.
void require_same_size(const DeviceVector& a, const DeviceVector& b, const char* where);

}  // namespace fhd
