#include "cuda/device/cublas_loader.hpp"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>

#include "core/error.hpp"

namespace fhd::gpu {
namespace {

// The soname of the toolkit we were built with (libcublas.so.13 for CUDA 13).
std::string library_name() { return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR); }

std::atomic<bool> g_loaded{false};

template <typename F>
void resolve(void* lib, const char* symbol, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  if (!fn) throw DeviceError("cuBLAS: " + library_name() + " has no " + symbol);
}

CublasApi load() {
  void* lib = dlopen(library_name().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw DeviceError("cuBLAS: cannot load " + library_name() + " (the exact separable kernels need it): " +
                      (why ? why : "unknown reason"));
  }
  CublasApi api{};
  resolve(lib, "cublasCreate_v2", api.create);
  resolve(lib, "cublasDestroy_v2", api.destroy);
  resolve(lib, "cublasSetStream_v2", api.set_stream);
  resolve(lib, "cublasCgemm_v2", api.cgemm);
  resolve(lib, "cublasCgemm3m", api.cgemm3m);
  resolve(lib, "cublasGemmEx", api.gemm_ex);
  resolve(lib, "cublasGetStatusString", api.status_string);
  g_loaded = true;
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CublasApi& cublas() {
  static const CublasApi api = load();  // a failed load throws and is retried next call
  return api;
}

bool cublas_loaded() { return g_loaded; }

}  // namespace fhd::gpu
