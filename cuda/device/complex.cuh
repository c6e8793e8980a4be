#pragma once
// Complex float arithmetic on float2 in device code, for the kernels that
// multiply by maps and spectra (cuda/plan/toeplitz.cu, cuda/fft/line_fft.cu).
#include <cuda_runtime.h>

namespace fhd::gpu {

__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// conj(a) b
__device__ __forceinline__ float2 cmulc(float2 a, float2 b) {
  return make_float2(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}
__device__ __forceinline__ float2 scale(float2 a, float r) { return make_float2(r * a.x, r * a.y); }

}  // namespace fhd::gpu
