#pragma once
// Every CUDA runtime, cuFFT and cuBLAS call and every kernel launch is checked;
// a failure becomes a DeviceError naming the call, file and line.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <string>

#include "core/error.hpp"
#include "cuda/device/cublas_loader.hpp"

namespace fhd::gpu {

[[noreturn]] inline void fail(const std::string& what, const char* file, int line) {
  throw DeviceError(std::string("CUDA: ") + what + " (" + file + ":" + std::to_string(line) + ")");
}

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so the caller can go on
    fail(std::string("out of GPU memory in ") + call, file, line);
  }
  fail(std::string(call) + ": " + cudaGetErrorString(e), file, line);
}
inline void check(cufftResult e, const char* call, const char* file, int line) {
  if (e != CUFFT_SUCCESS) fail(std::string(call) + ": cuFFT error " + std::to_string(int(e)), file, line);
}
inline void check(cublasStatus_t e, const char* call, const char* file, int line) {
  if (e != CUBLAS_STATUS_SUCCESS)
    fail(std::string(call) + ": " + cublas().status_string(e), file, line);
}

}  // namespace fhd::gpu

#define CUDA_CHECK(call) ::fhd::gpu::check((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: catches bad configurations at once (errors inside
// the kernel surface at the next synchronizing call, itself checked).
#define CUDA_CHECK_LAUNCH() ::fhd::gpu::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
