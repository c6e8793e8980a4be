#pragma once
// Between the C interface (capi/nufft_c.cpp) and its GPU half
// (capi/nufft_c_gpu.cu, built only with CUDA): the GPU plan is opaque here so
// that the CPU-only build compiles without CUDA headers.
#include <cstddef>

#include "core/types.hpp"

namespace fhd::capi {

struct GpuNufft;

// Each throws fhd::InputError / fhd::DeviceError like the C++ layers below.
GpuNufft* gpu_make(int device, const ImageGrid& modes, double tol, double sigma, void* stream);
// Device arrays of m points in radians, one per computed axis (pts[2] null in
// 2D); k_axis = wrap(sign x) * scale[axis] (cycles/FOV), wrap to [-pi, pi).
// names[axis]: the caller's name of pts[axis] ('x', 'y' or 'z'), for errors.
void gpu_setpts(GpuNufft* p, std::size_t m, const float* const pts[3], const char* names, double sign,
                const double scale[3]);
// Device arrays: n_trans vectors of c (points) and f (modes), interleaved complex.
void gpu_execute(GpuNufft* p, int type, int n_trans, float* c, float* f);
void gpu_destroy(GpuNufft* p) noexcept;
// Throws InputError when device is not a GPU of this host.
void gpu_check_device(int device);

}  // namespace fhd::capi
