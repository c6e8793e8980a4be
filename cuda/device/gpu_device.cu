// The GPU device: recon's Device on CUDA. All work runs on the device's one
// stream; the host waits only where a result comes back (to_host, dot's
// scalar, synchronize), so a solver's vector work stays on the device.
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cuda/gather/fhd_launchers.cuh"
#include "cuda/device/gpu_device.hpp"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/device/staged_upload.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "recon/ops/device_stack.hpp"

namespace fhd {
namespace gpu {
namespace {

// An empty kernel: asking for its attributes fails when the device cannot run
// the code this build embeds (sm_90 machine code and compute_90 PTX).
__global__ void probe_kernel() {}

// "NVIDIA H100 80GB HBM3 (device 0, sm_90, 79.1 GiB free)"; throws DeviceError.
std::string describe(int device) {
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  CUDA_CHECK(cudaSetDevice(device));
  const std::size_t free = free_device_bytes();
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s (device %d, sm_%d%d, %.1f GiB free)", p.name, device, p.major, p.minor,
                double(free) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// The lowest architecture this build embeds code for (FHD_CUDA_ARCHS, CMake's
// CMAKE_CUDA_ARCHITECTURES with commas, e.g. "90" or "80,90-real"); 0 when
// unknown ("native", "all"): no limit is then checked.
int lowest_built_arch() {
#ifdef FHD_CUDA_ARCHS
  const std::string list = FHD_CUDA_ARCHS;
  int lowest = 0;
  for (std::size_t at = 0; at < list.size();) {
    std::size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const int arch = std::atoi(list.substr(at, end - at).c_str());
    if (arch <= 0) return 0;
    lowest = lowest == 0 ? arch : std::min(lowest, arch);
    at = end + 1;
  }
  return lowest;
#else
  return 0;
#endif
}

// The driver, `device` among those present and its properties: why not, or
// "" with `p` filled. Makes no context. Never throws.
std::string missing_reason(int device, cudaDeviceProp& p) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA driver or device: ") + cudaGetErrorString(e);
  }
  if (count == 0) return "no CUDA device found";
  if (device < 0 || device >= count)
    return "no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " present)";
  e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string("cannot query CUDA device: ") + cudaGetErrorString(e);
  }
  return "";
}

// Why `device` cannot be used, or "" when it can. Never throws.
std::string unusable_reason(int device) {
  cudaDeviceProp p{};
  if (std::string why = missing_reason(device, p); !why.empty()) return why;
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return std::string("cannot use CUDA device: ") + cudaGetErrorString(e);
  cudaFuncAttributes a{};
  e = cudaFuncGetAttributes(&a, probe_kernel);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) +
           ") cannot run this build's sm_90 code: " + cudaGetErrorString(e);
  }
  return "";
}

// A trajectory on the device, with the host copy every Points keeps.
class GpuPoints : public Points {
 public:
  GpuPoints(const Trajectory& t, cudaStream_t s) : Points(t) {
    const std::size_t m = t.kx.size();
    const std::string what = "the trajectory (" + std::to_string(m) + " samples)";
    require_free(3.0 * m * sizeof(float), what);
    dev.kx.allocate(m, what);
    dev.ky.allocate(m, what);
    dev.kz.allocate(m, what);
    upload(t.kx.data(), m, dev.kx.get(), s);
    upload(t.ky.data(), m, dev.ky.get(), s);
    if (t.kz.empty()) {
      if (m) CUDA_CHECK(cudaMemsetAsync(dev.kz.get(), 0, m * sizeof(float), s));
    } else {
      upload(t.kz.data(), m, dev.kz.get(), s);
    }
    dev.m = m;
    CUDA_CHECK(cudaStreamSynchronize(s));  // the host copy may go before the upload ends otherwise
  }
  DeviceTrajectory dev;
};

// Work queued on stream `later` (of device b) after what is queued now on
// stream `first` (of device a): an event recorded there, waited for here. The
// event is released at once; CUDA keeps it until the wait is done.
void order_after(int a, cudaStream_t first, int b, cudaStream_t later) {
  cudaEvent_t e;
  {
    DeviceScope scope(a);
    CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecordWithFlags(e, first, 0));  // not cudaEventRecord: the timeline's stage marks
  }
  DeviceScope scope(b);
  const cudaError_t waited = cudaStreamWaitEvent(later, e, 0);
  cudaEventDestroy(e);
  CUDA_CHECK(waited);
}

// A CUDA event recorded on the device's stream (with timing).
class GpuMark : public TimeMark {
 public:
  GpuMark(int device, cudaStream_t s) : device_(device) {
    DeviceScope scope(device);
    CUDA_CHECK(cudaEventCreate(&e_));
    CUDA_CHECK(cudaEventRecord(e_, s));
  }
  ~GpuMark() override { cudaEventDestroy(e_); }
  GpuMark(const GpuMark&) = delete;
  GpuMark& operator=(const GpuMark&) = delete;
  double since(const TimeMark& earlier) override {
    DeviceScope scope(device_);
    const auto* a = dynamic_cast<const GpuMark*>(&earlier);
    if (!a) throw std::invalid_argument("gpu mark: the earlier mark is another device's");
    CUDA_CHECK(cudaEventSynchronize(e_));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a->e_, e_));
    return double(ms) * 1e-3;
  }

 private:
  int device_;
  cudaEvent_t e_ = nullptr;
};

class GpuDevice : public Device {
 public:
  GpuDevice(int device, const GpuOptions& options) : device_(device), tune_dir_(options.tune_dir) {
    const std::string why = unusable_reason(device);
    if (!why.empty()) throw DeviceError("GPU device: " + why);
    desc_ = describe(device);
    CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
    dot_ = std::make_unique<DotReducer>();
    staging_ = std::make_unique<StagedUpload>();
  }
  ~GpuDevice() override {
    cudaSetDevice(device_);
    cudaStreamSynchronize(s_);
    dot_.reset();
    staging_.reset();
    try {
      release_blas_handle(s_);
    } catch (const std::exception&) {  // a destructor must not throw; the handle only leaks
    }
    cudaStreamDestroy(s_);
  }

  std::string name() const override { return "gpu " + std::to_string(device_) + ": " + desc_; }
  DeviceKind kind() const override { return DeviceKind::Gpu; }
  void synchronize() override {
    DeviceScope scope(device_);
    CUDA_CHECK(cudaStreamSynchronize(s_));
  }

  std::unique_ptr<TimeMark> mark() override { return std::make_unique<GpuMark>(device_, s_); }

  VecPtr zeros(std::size_t n) override {
    DeviceScope scope(device_);
    auto mem = std::make_shared<DeviceBuffer<float2>>(n, "a vector of " + std::to_string(n) + " elements");
    if (n) CUDA_CHECK(cudaMemsetAsync(mem->get(), 0, mem->bytes(), s_));
    return std::make_unique<DeviceVector>(*this, reinterpret_cast<cfloat*>(mem->get()), n, mem);
  }
  void to_device(const cfloat* host, DeviceVector& dst) override {
    DeviceScope scope(device_);
    require_gpu(*this, dst, "to_device");
    staging_->run(host, dptr(dst), dst.size() * sizeof(float2), s_);
  }
  void to_host(const DeviceVector& src, cfloat* host) override {
    DeviceScope scope(device_);
    require_gpu(*this, src, "to_host");
    gpu::download(dptr(src), src.size(), reinterpret_cast<float2*>(host), s_);
  }
  // A host vector comes by an upload (waited for). Another GPU's vector by a
  // peer copy queued on the streams, the host waiting for nothing: an event on
  // its stream that this stream waits for, the copy on this stream, and an
  // event here its stream waits for, so its later work (a write, a free, which
  // waits for its device) comes after the copy. SENSE across GPUs waited for
  // each part's device and each copy in every CG iteration before.
  void copy(const DeviceVector& src, DeviceVector& dst) override {
    DeviceScope scope(device_);
    require_same_size(src, dst, "copy");
    require_gpu(*this, dst, "copy");
    if (src.device().kind() == DeviceKind::Cpu) return to_device(src.data(), dst);
    const int from = device_id(src.device());
    if (&src.device() == this) {
      if (src.data() != dst.data() && src.size())
        CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.size() * sizeof(float2), cudaMemcpyDeviceToDevice, s_));
      return;
    }
    order_after(from, stream_of(src.device()), device_, s_);
    if (src.size())
      CUDA_CHECK(cudaMemcpyPeerAsync(dst.data(), device_, src.data(), from, src.size() * sizeof(float2), s_));
    order_after(device_, s_, from, stream_of(src.device()));
  }
  std::unique_ptr<Points> upload_points(const Trajectory& t) override {
    DeviceScope scope(device_);
    const std::size_t m = t.kx.size();
    if (t.ky.size() != m || (t.kz.size() != m && !t.kz.empty()))
      throw InputError("trajectory", "kx/ky/kz lengths",
                       std::to_string(m) + "/" + std::to_string(t.ky.size()) + "/" + std::to_string(t.kz.size()),
                       "must be equal (kz may be empty for 2D)");
    return std::make_unique<GpuPoints>(t, s_);
  }

  void axpby(cdouble a, const DeviceVector& x, cdouble b, DeviceVector& y) override {
    DeviceScope scope(device_);
    require_same_size(x, y, "axpby");
    check(x, y, "axpby");
    const std::size_t n = y.size();
    if (a == 0.0 && b == 0.0) {
      if (n) CUDA_CHECK(cudaMemsetAsync(dptr(y), 0, n * sizeof(float2), s_));
    } else if (a == 0.0) {
      launch_scale(d2(b), dptr(y), n, s_);
    } else if (b == 1.0) {
      launch_axpy(d2(a), dptr(x), dptr(y), n, s_);
    } else if (a == 1.0) {
      launch_xpay(dptr(x), d2(b), dptr(y), n, s_);
    } else {
      launch_axpby(d2(a), dptr(x), d2(b), dptr(y), n, s_);
    }
  }
  void multiply(const DeviceVector& s, const DeviceVector& x, DeviceVector& y, bool conjugate) override {
    DeviceScope scope(device_);
    require_same_size(s, x, "multiply");
    require_same_size(x, y, "multiply");
    check(s, x, "multiply");
    require_gpu(*this, y, "multiply");
    launch_multiply(dptr(s), dptr(x), dptr(y), conjugate, x.size(), s_);
  }
  cdouble dot(const DeviceVector& x, const DeviceVector& y) override {
    DeviceScope scope(device_);
    require_same_size(x, y, "dot");
    check(x, y, "dot");
    return dot_->dot(dptr(x), dptr(y), x.size(), s_);
  }
  std::pair<cdouble, cdouble> dot2(const DeviceVector& a, const DeviceVector& b, const DeviceVector& c,
                                   const DeviceVector& d) override {
    DeviceScope scope(device_);
    require_same_size(a, b, "dot2");
    require_same_size(a, c, "dot2");
    require_same_size(a, d, "dot2");
    check(a, b, "dot2");
    check(c, d, "dot2");
    return dot_->dot2(dptr(a), dptr(b), dptr(c), dptr(d), a.size(), s_);
  }
  double magnitude_sse(const DeviceVector& x, const DeviceVector& ref) override {
    DeviceScope scope(device_);
    require_same_size(x, ref, "magnitude_sse");
    check(x, ref, "magnitude_sse");
    return dot_->magnitude_sse(dptr(x), dptr(ref), x.size(), s_);
  }

  int id() const { return device_; }
  cudaStream_t stream() const { return s_; }
  const std::string& tune_dir() const { return tune_dir_; }

 private:
  static double2 d2(cdouble v) { return make_double2(v.real(), v.imag()); }
  void check(const DeviceVector& a, const DeviceVector& b, const char* where) const {
    require_gpu(*this, a, where);
    require_gpu(*this, b, where);
  }

  int device_;
  std::string tune_dir_;  // GpuOptions::tune_dir
  std::string desc_;
  cudaStream_t s_ = nullptr;
  std::unique_ptr<DotReducer> dot_;
  std::unique_ptr<StagedUpload> staging_;  // to_device of large vectors
};

const GpuDevice& as_gpu_device(const Device& dev) {
  const auto* g = dynamic_cast<const GpuDevice*>(&dev);
  if (!g) throw std::invalid_argument("a GPU operation got the device " + dev.name());
  return *g;
}

}  // namespace

int device_id(const Device& dev) { return as_gpu_device(dev).id(); }
cudaStream_t stream_of(const Device& dev) { return as_gpu_device(dev).stream(); }
std::string gpu_tune_dir(const Device& dev) { return as_gpu_device(dev).tune_dir(); }

void require_gpu(const Device& dev, const DeviceVector& v, const char* where) {
  if (&v.device() != &dev)
    throw std::invalid_argument(std::string("gpu ") + where + ": got a vector of the device " + v.device().name() +
                                ", expected " + dev.name());
}

const DeviceTrajectory& on_device(const Points& k) {
  const auto* p = dynamic_cast<const GpuPoints*>(&k);
  if (!p) throw std::invalid_argument("gpu: got points that another device uploaded");
  return p->dev;
}

}  // namespace gpu

void reset_devices(const std::vector<int>& devices) {
  for (int d : devices) {
    CUDA_CHECK(cudaSetDevice(d));
    gpu::forget_pools(d);
    CUDA_CHECK(cudaDeviceReset());
  }
}

bool gpu_present(std::string* why) {
  cudaDeviceProp p{};
  std::string reason = gpu::missing_reason(0, p);
  const int cc = 10 * p.major + p.minor, lowest = gpu::lowest_built_arch();
  if (reason.empty() && lowest > 0 && cc < lowest)
    reason = std::string(p.name) + " (sm_" + std::to_string(cc) + ") cannot run this build's sm_" +
             std::to_string(lowest) + " code";
  if (why) *why = reason.empty() ? std::string(p.name) + " (sm_" + std::to_string(cc) + ")" : reason;
  return reason.empty();
}

bool gpu_usable(std::string* why) {
  try {
    const std::string reason = gpu::unusable_reason(0);
    if (why) *why = reason.empty() ? gpu::describe(0) : reason;
    return reason.empty();
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

std::unique_ptr<Device> make_gpu_device(int device, const GpuOptions& options) {
  gpu::install_gpu_kernels();
  return std::make_unique<gpu::GpuDevice>(device, options);
}

// Peer access where the devices allow it (NVLink or PCIe P2P): copies
// between them then skip the host. Already enabled, or not possible, is fine.
// FHD_PEER_ACCESS=0 leaves it off (a diagnostic: every cudaMalloc of a
// device with peers also maps the memory into them; docs/gpu-backend.md).
namespace {

// What each pool of a device with peers is grown by: FHD_POOL_RESERVE_MB
// (0: none), else 2 GiB; at most a sixteenth of the device's memory. Idle
// pool memory still counts as free and is trimmed for an allocation that
// finds too little (cuda/device/pools.hpp).
std::size_t pool_reserve_bytes() {
  std::size_t mb = 2048;
  if (const char* v = std::getenv("FHD_POOL_RESERVE_MB")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0' && n <= (1ULL << 20)) mb = std::size_t(n);
  }
  return mb << 20;
}

}  // namespace

void enable_peer_access(const std::vector<int>& devices) {
  const char* peer = std::getenv("FHD_PEER_ACCESS");
  if (peer && std::string(peer) == "0") return;
  for (int a : devices)
    for (int b : devices) {
      int can = 0;
      if (a == b || cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) continue;
      CUDA_CHECK(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) CUDA_CHECK(e);
      cudaGetLastError();
      gpu::note_peer_access(a, b);  // memory from now on in pools, mapped into a peer only where it may be read
    }
  // Each device's pools made and grown now, beside the host's work: their
  // first growth cost the first stages of every run (8-coil SENSE at 128^3 on
  // 2 H200s: 22 ms making the plan, every stage 0.101-0.109 s against
  // 0.084-0.089 with 2 GiB kept; docs/performance.md).
  const std::size_t bytes = pool_reserve_bytes();
  on_each(devices.size(), [&](std::size_t i) {
    CUDA_CHECK(cudaSetDevice(devices[i]));
    std::size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    gpu::reserve_pools(std::min(bytes, total / 16));
  });
}

std::vector<std::unique_ptr<Device>> make_gpu_devices(const std::vector<int>& devices, const GpuOptions& options) {
  if (devices.empty()) throw InputError("gpus", "devices", "none", "needs at least one GPU");
  // Side by side: each device makes its context (about 0.45 s an H200 on the
  // 2-GPU host, one after another before); the first failure is rethrown
  // after every one has ended.
  std::vector<std::unique_ptr<Device>> out(devices.size());
  on_each(devices.size(), [&](std::size_t i) { out[i] = make_gpu_device(devices[i], options); });
  enable_peer_access(devices);
  return out;
}

}  // namespace fhd
