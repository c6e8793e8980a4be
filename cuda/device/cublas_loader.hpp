#pragma once
// cuBLAS, loaded on first use. Linking it makes every process load
// libcublasLt at start-up (0.09 s and 210 MB resident, measured on the CPU
// machine), though only the exact separable kernels call a GEMM: --version,
// CPU runs and --fhd nufft runs paid for it. dlopen on first use moves that
// cost to the first exact GEMM.
#include <cublas_v2.h>

namespace fhd::gpu {

// cublasGemmEx is overloaded in C++ (a cudaDataType compute-type wrapper);
// the library's symbol takes cublasComputeType_t.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                    const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasCgemm_v2) cgemm;
  decltype(&cublasCgemm3m) cgemm3m;
  GemmExFn gemm_ex;
  decltype(&cublasGetStatusString) status_string;
};

// The library's functions; loads it once (thread-safe). Throws DeviceError
// naming the library and the loader's reason when it cannot be loaded.
const CublasApi& cublas();

// Whether this process has loaded cuBLAS (tests check start-up stays free of it).
bool cublas_loaded();

}  // namespace fhd::gpu
