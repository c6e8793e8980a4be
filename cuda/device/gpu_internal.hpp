#pragma once
// Pieces of the GPU device shared between cuda/'s translation units. Not part
// of the public interface: app/ and tests use cuda/device/gpu_device.hpp.
#include <cuda_runtime.h>
#include <cufft.h>

#include <memory>
#include <string>
#include <vector>

#include "cuda/device/blocks.hpp"
#include "cuda/device/device_buffer.hpp"
#include "recon/device/device.hpp"
#include "recon/gridding/grid_kernel.hpp"

namespace fhd::gpu {

// The device pointer of a GPU vector.
inline float2* dptr(DeviceVector& v) { return reinterpret_cast<float2*>(v.data()); }
inline const float2* dptr(const DeviceVector& v) { return reinterpret_cast<const float2*>(v.data()); }

// The CUDA device and stream of a GPU Device (std::invalid_argument for another kind).
int device_id(const Device& dev);
cudaStream_t stream_of(const Device& dev);
// A vector of `dev`'s that another device's code may not take (std::invalid_argument).
void require_gpu(const Device& dev, const DeviceVector& v, const char* where);

// Makes a device current for one call (the caller's thread may have used another since).
struct DeviceScope {
  explicit DeviceScope(int device) { CUDA_CHECK(cudaSetDevice(device)); }
  explicit DeviceScope(const Device& dev) : DeviceScope(device_id(dev)) {}
};

// A trajectory on the device: k in cycles/FOV, one array per axis.
struct DeviceTrajectory {
  DeviceBuffer<float> kx, ky, kz;
  std::size_t m = 0;
};
// The device arrays behind a GPU device's Points (std::invalid_argument for another's).
const DeviceTrajectory& on_device(const Points& k);

// ---- coil_maps.cu
// out[c] (grid.voxels() each, on the device; cleared here, so they may come
// uninitialized) = maps_lowres's map of coil c from
// its Hann-windowed calibration data (recon/coils/coil_maps.hpp, windowed_calibration).
void lowres_maps(const std::vector<std::vector<cfloat>>& windowed, const ImageGrid& cal, const ImageGrid& grid,
                 double crop, const std::vector<float2*>& out, cudaStream_t s);

// ---- vector_ops.cu
void launch_axpy(double2 a, const float2* x, float2* y, std::size_t n, cudaStream_t s);  // y = a x + y
void launch_xpay(const float2* x, double2 a, float2* y, std::size_t n, cudaStream_t s);  // y = x + a y
void launch_axpby(double2 a, const float2* x, double2 b, float2* y, std::size_t n, cudaStream_t s);  // y = a x + b y
void launch_scale(double2 b, float2* y, std::size_t n, cudaStream_t s);  // y = b y
// y = s x or conj(s) x, elementwise; y may be x.
void launch_multiply(const float2* s, const float2* x, float2* y, bool conjugate, std::size_t n, cudaStream_t st);
void launch_real_to_complex(const float* w, float2* out, std::size_t n, cudaStream_t s);  // (w, 0)
void launch_fill(float2 value, float2* out, std::size_t n, cudaStream_t s);
// Q's weights |Phi|^2 as m complex values on the device (w empty: all 1),
// made there: building them on the host cost the 1.5M-sample Q 7 ms of page
// faults and a 12 MB upload. Throws InputError unless w is empty or has m values.
DeviceBuffer<float2> complex_weights(const std::vector<float>& w, std::size_t m, cudaStream_t s);

// sum conj(x) y in double, two passes of fixed shape (deterministic: the same
// inputs give the same bits), one 16-byte copy back to the host.
class DotReducer {
 public:
  DotReducer();
  ~DotReducer();
  DotReducer(const DotReducer&) = delete;
  DotReducer& operator=(const DotReducer&) = delete;
  cdouble dot(const float2* x, const float2* y, std::size_t n, cudaStream_t s);
  // dot(a, b) and dot(c, d) with one wait (Device::dot2).
  std::pair<cdouble, cdouble> dot2(const float2* a, const float2* b, const float2* c, const float2* d, std::size_t n,
                                   cudaStream_t s);
  // sum (|x_i| - ref_i.x)^2 (Device::magnitude_sse), same two passes.
  double magnitude_sse(const float2* x, const float2* ref, std::size_t n, cudaStream_t s);

 private:
  cdouble finish(cudaStream_t s);  // pass two and the copy back
  DeviceBuffer<double2> partial_;
  double2* host_ = nullptr;  // pinned, so the copy back is a plain DMA
};

// ---- plan/toeplitz.cu
// Batched transforms over a strided layout (cufftPlanMany's advanced
// layout, the same for input and output, in place).
struct FftLayout {
  std::vector<long long> n;  // lengths, slowest axis first
  long long stride = 1;      // between consecutive elements of one transform
  long long dist = 0;        // between the starts of consecutive transforms
  long long batch = 1;
};

// A cuFFT C2C plan over a grid (x fastest), axes of length 1 dropped. Its work
// area is a DeviceBuffer, so a plan too large for the card fails with the
// out-of-memory DeviceError naming it. Callers check their own buffers before
// making one, without the work area: cufftEstimate took 1-3 ms a call, and
// these power-of-two in-place plans need no work area on the H100.
class CufftPlan {
 public:
  CufftPlan(const ImageGrid& dims, cudaStream_t s, const std::string& what);
  CufftPlan(const FftLayout& layout, cudaStream_t s, const std::string& what);
  ~CufftPlan();
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  // In place; direction CUFFT_FORWARD (exp -i) or CUFFT_INVERSE (exp +i, unnormalized).
  void exec(float2* data, int direction);

 private:
  cufftHandle h_ = 0;
  bool identity_ = false;  // every axis has length 1
  DeviceBuffer<char> work_;
};

// The centered DFT of `in` (dims), keeping only its central `window`
// (window.n <= dims.n per axis; window == dims keeps all) in `out`; inverse
// (exp +i) or forward (exp -i), unnormalized. `work` holds dims.voxels()
// elements and is overwritten; out may be in.
void centered_dft_window(const float2* in, float2* work, const ImageGrid& dims, const ImageGrid& window,
                         float2* out, bool inverse, cudaStream_t s);

// ---- gridding/gridding.cu
// Atomic: global atomics only. Privatized: every tile through shared memory
// (where the tile fits, else atomics). Hybrid: tiles with many samples
// privately, the others with global atomics. Auto: the measured fastest (Atomic).
enum class ScatterMethod { Auto, Atomic, Privatized, Hybrid };
// The device part alone: adds the samples `values` (device) onto `grid`
// (device, over.voxels(), zeroed by the caller). The atomic method is
// asynchronous; the privatized one reads its launch size back and waits for
// its kernels before freeing its bins.
void grid_scatter_device(const DeviceTrajectory& traj, const float2* values, const ImageGrid& image,
                         const ImageGrid& over, const GridKernel& kernel, ScatterMethod method, float2* grid,
                         cudaStream_t s);
// The scattered grid left on the device (zeroed, then the samples added).
DeviceBuffer<float2> grid_scatter_on_device(const DeviceTrajectory& traj, const std::vector<cfloat>& weighted_data,
                                            const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel,
                                            ScatterMethod method, cudaStream_t s);
std::vector<cfloat> grid_scatter(const DeviceTrajectory& traj, const std::vector<cfloat>& weighted_data,
                                 const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel,
                                 ScatterMethod method, cudaStream_t s);

}  // namespace fhd::gpu
