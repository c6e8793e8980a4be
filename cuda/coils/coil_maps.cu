// SENSE's low-resolution coil maps on the device (recon/coils/coil_maps.hpp,
// maps_lowres): each coil's Hann-windowed calibration data placed on the grid,
// a centred inverse FFT, the root sum of squares over coils, and each image
// divided by it where it reaches the crop. The maps stay where SENSE uses them.
#include <string>

#include "core/error.hpp"
#include "cuda/device/complex.cuh"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/fft/line_fft.hpp"
#include "cuda/ops/gpu_kernels.hpp"

namespace fhd::gpu {
namespace {

constexpr unsigned kThreads = 256;

// grid (zeroed) at frequency f = q - c/2 per axis (its FFT position f mod n)
// = cal[q] times the phase that centres the inverse transform's output:
// sum_f X_f e^{i 2 pi f (x - n/2) / n} = sum_f (X_f e^{-i 2 pi f (n/2) / n}) e^{i 2 pi f x / n}.
__global__ void place_kernel(const float2* __restrict__ cal, int3 c, int3 n, float2* __restrict__ grid) {
  const std::size_t total = std::size_t(c.x) * c.y * c.z;
  GRID_STRIDE(i, total) {
    const int q[3] = {int(i % c.x), int((i / c.x) % c.y), int(i / (std::size_t(c.x) * c.y))};
    const int cl[3] = {c.x, c.y, c.z}, nl[3] = {n.x, n.y, n.z};
    int at[3];
    double turns = 0;  // the phase in half turns (sincospi)
    for (int a = 0; a < 3; ++a) {
      const int f = q[a] - cl[a] / 2;
      at[a] = ((f % nl[a]) + nl[a]) % nl[a];
      turns -= 2.0 * f * (nl[a] / 2) / nl[a];
    }
    double s, co;
    sincospi(turns, &s, &co);
    const float2 v = cal[i];
    grid[at[0] + std::size_t(n.x) * (at[1] + std::size_t(n.y) * at[2])] =
        make_float2(float(v.x * co - v.y * s), float(v.x * s + v.y * co));
  }
}

// The line FFTs' input: cal[q] times the same centring phase, in place. The
// values stay at q (the first c positions of each line, "Low"), frequency f =
// q - c/2 moved up by c/2, so the output is shifted by the phase
// e^{i 2 pi (c/2) x / n}, which normalize_kernel takes off (`shift`).
__global__ void centre_kernel(float2* __restrict__ cal, int3 c, int3 n) {
  const std::size_t total = std::size_t(c.x) * c.y * c.z;
  GRID_STRIDE(i, total) {
    const int q[3] = {int(i % c.x), int((i / c.x) % c.y), int(i / (std::size_t(c.x) * c.y))};
    const int cl[3] = {c.x, c.y, c.z}, nl[3] = {n.x, n.y, n.z};
    double turns = 0;
    for (int a = 0; a < 3; ++a) turns -= 2.0 * (q[a] - cl[a] / 2) * (nl[a] / 2) / nl[a];
    double s, co;
    sincospi(turns, &s, &co);
    const float2 v = cal[i];
    cal[i] = make_float2(float(v.x * co - v.y * s), float(v.x * s + v.y * co));
  }
}

// rss[v] = sqrt(sum over coils |img_c[v]|^2); *peak = its maximum (non-negative
// floats order as their bit patterns, so an integer atomicMax takes it).
__global__ void rss_kernel(float2* const* __restrict__ img, int coils, std::size_t n, float* __restrict__ rss,
                           unsigned* __restrict__ peak) {
  float top = 0;
  GRID_STRIDE(v, n) {
    float sum = 0;
    for (int c = 0; c < coils; ++c) {
      const float2 x = img[c][v];
      sum += x.x * x.x + x.y * x.y;
    }
    rss[v] = sqrtf(sum);
    top = fmaxf(top, rss[v]);
  }
  atomicMax(peak, __float_as_uint(top));
}

// img_c[v] / rss[v] where rss[v] >= crop * peak and > 0, else 0 (maps_lowres's rule),
// times e^{-i 2 pi sum_a shift_a x_a / n_a} (the line FFTs' shift; 0: none).
__global__ void normalize_kernel(float2* const* __restrict__ img, int coils, int3 n, int3 shift,
                                 const float* __restrict__ rss, const unsigned* __restrict__ peak, float crop) {
  const float top = __uint_as_float(*peak), keep = crop * top, floor = 1e-9f * top;
  const std::size_t total = std::size_t(n.x) * n.y * n.z;
  const bool shifted = shift.x || shift.y || shift.z;
  GRID_STRIDE(v, total) {
    const float r = rss[v];
    float2 f = make_float2(r >= keep && r > 0.0f ? 1.0f / fmaxf(r, floor) : 0.0f, 0.0f);  // 0/0: all-zero data
    if (shifted && f.x != 0.0f) {
      const int x = int(v % n.x), y = int((v / n.x) % n.y), z = int(v / (std::size_t(n.x) * n.y));
      const double turns = -2.0 * (double(shift.x) * x / n.x + double(shift.y) * y / n.y + double(shift.z) * z / n.z);
      double s, co;
      sincospi(turns, &s, &co);
      f = make_float2(float(f.x * co), float(f.x * s));
    }
    for (int c = 0; c < coils; ++c) img[c][v] = cmul(f, img[c][v]);
  }
}

// Whether lines_inverse takes these sizes: every axis of the grid (a 2D
// grid's z aside) a length the line FFTs take, and the calibration no larger.
bool line_path(const ImageGrid& cal, const ImageGrid& grid) {
  const int c[3] = {cal.nx, cal.ny, cal.nz}, n[3] = {grid.nx, grid.ny, grid.nz};
  for (int a = 0; a < 3; ++a) {
    if (n[a] == 1 && a == 2 && c[a] == 1) continue;  // 2D
    if (!lines::supported_length(n[a]) || c[a] > n[a]) return false;
  }
  return true;
}

// The inverse FFT of one coil's c-sized data, centred (centre_kernel), into
// its n-sized image by line FFTs: along x for the c.y x c.z lines that hold
// data, along y for the c.z planes, along z for all; each pass reads only the
// positions that hold values, writes every one, so nothing is zeroed. With
// cuFFT (its plan for the whole grid made per call, every voxel zeroed and
// transformed) this part of the stage took 7-13 ms at 8 coils on 128^3, 5-8 ms
// so (docs/performance.md).
void lines_inverse(const float2* small, const ImageGrid& cal, const ImageGrid& grid, float2* out, cudaStream_t s) {
  using lines::Lines;
  const long long nx = grid.nx, nxy = nx * grid.ny, cx = cal.nx, cxy = cx * cal.ny;
  lines::run(lines::Mode::Inverse, true, grid.nx,
             lines::pass(small, Lines{cx, cxy, 1}, cal.nx, out, Lines{nx, nxy, 1}, grid.nx, cal.ny, cal.nz), s);
  lines::run(lines::Mode::Inverse, false, grid.ny,
             lines::pass(out, Lines{1, nxy, nx}, cal.ny, out, Lines{1, nxy, nx}, grid.ny, grid.nx, cal.nz), s);
  if (grid.nz > 1)
    lines::run(lines::Mode::Inverse, false, grid.nz,
               lines::pass(out, Lines{1, nx, nxy}, cal.nz, out, Lines{1, nx, nxy}, grid.nz, grid.nx, grid.ny), s);
}

}  // namespace

void lowres_maps(const std::vector<std::vector<cfloat>>& windowed, const ImageGrid& cal, const ImageGrid& grid, double crop,
                 const std::vector<float2*>& out, cudaStream_t s) {
  if (windowed.size() != out.size() || windowed.empty())
    throw InputError("gpu coil maps", "coils", std::to_string(out.size()),
                     "must equal the calibration's " + std::to_string(windowed.size()) + " (and be at least 1)");
  const std::size_t n = grid.voxels();
  const std::string what = "the low-resolution coil maps on " + dims_string(grid);
  const bool by_lines = line_path(cal, grid);
  std::unique_ptr<CufftPlan> plan = by_lines ? nullptr : std::make_unique<CufftPlan>(grid, s, what);
  DeviceBuffer<float2> small(cal.voxels(), what + " (calibration data)", Reach::DeviceOnly);
  const int3 c3 = make_int3(cal.nx, cal.ny, cal.nz), n3 = make_int3(grid.nx, grid.ny, grid.nz);
  for (std::size_t c = 0; c < out.size(); ++c) {
    if (windowed[c].size() != cal.voxels())
      throw InputError("gpu coil maps", "calibration size", std::to_string(windowed[c].size()),
                       "expected " + std::to_string(cal.voxels()));
    upload(reinterpret_cast<const float2*>(windowed[c].data()), cal.voxels(), small.get(), s);
    if (by_lines) {
      centre_kernel<<<blocks_for(cal.voxels(), kThreads), kThreads, 0, s>>>(small.get(), c3, n3);
      CUDA_CHECK_LAUNCH();
      lines_inverse(small.get(), cal, grid, out[c], s);
      continue;
    }
    CUDA_CHECK(cudaMemsetAsync(out[c], 0, n * sizeof(float2), s));
    place_kernel<<<blocks_for(cal.voxels(), kThreads), kThreads, 0, s>>>(small.get(), c3, n3, out[c]);
    CUDA_CHECK_LAUNCH();
    plan->exec(out[c], CUFFT_INVERSE);  // unnormalized, as the host's FFTW backward pass
  }
  DeviceBuffer<float2*> images(out.size(), what + " (coil pointers)");
  upload(out.data(), out.size(), images.get(), s);
  DeviceBuffer<float> rss(n, what + " (root sum of squares)", Reach::DeviceOnly);
  DeviceBuffer<unsigned> peak(1, what + " (peak)");
  CUDA_CHECK(cudaMemsetAsync(peak.get(), 0, sizeof(unsigned), s));
  rss_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(images.get(), int(out.size()), n, rss.get(), peak.get());
  CUDA_CHECK_LAUNCH();
  const int3 shift = by_lines ? make_int3(cal.nx / 2, cal.ny / 2, cal.nz / 2) : make_int3(0, 0, 0);
  normalize_kernel<<<blocks_for(n, kThreads), kThreads, 0, s>>>(images.get(), int(out.size()), n3, shift, rss.get(),
                                                                 peak.get(), float(crop));
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));  // the buffers above go at return
}

namespace {

// The maps are made where SENSE uses them: at 128^3 with 8 coils the host
// maps and their 128 MB upload took 0.3 s, five times the single-coil run.
class GpuMaps : public MapsKernels {
 public:
  explicit GpuMaps(Device& dev) : dev_(dev) {}
  std::vector<std::shared_ptr<DeviceVector>> lowres(const Calibration& cal, const ImageGrid& grid,
                                                    double crop) override {
    DeviceScope scope(dev_);
    std::vector<std::shared_ptr<DeviceVector>> maps;
    std::vector<float2*> out;
    const std::size_t n = grid.voxels();
    require_free(double(cal.kspace.size()) * double(n) * sizeof(float2), "the coil maps");
    // One allocation for every coil's map (each a view that keeps it alive):
    // a synchronous cudaMalloc per coil was host time inside the coil maps stage.
    auto mem = std::make_shared<DeviceBuffer<float2>>(n * cal.kspace.size(), "the coil maps");
    for (std::size_t c = 0; c < cal.kspace.size(); ++c) {  // not zeroed here: gpu::lowres_maps clears them
      float2* at = mem->get() + c * n;
      out.push_back(at);
      maps.push_back(std::make_shared<DeviceVector>(dev_, reinterpret_cast<cfloat*>(at), n, mem));
    }
    gpu::lowres_maps(windowed_calibration(cal), cal.size, grid, crop, out, stream_of(dev_));
    return maps;
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<MapsKernels> make_gpu_maps(Device& dev) { return std::make_unique<GpuMaps>(dev); }

}  // namespace fhd::gpu
