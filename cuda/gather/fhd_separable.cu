// Step 8 of the ladder: the separable form (docs/conventions.md). On the Cartesian
// grid exp(i2pi k.x) = ex ey ez, so with p = iy + ly*iz
//   out[ix, p] = sum_m Ex[ix, m] * B[m, p],   B[m, p] = w_m Ey[iy, m] Ez[iz, m],
// one complex matrix product per chunk of K samples (cuBLAS, column-major:
// out is lx x P with ld lx, exactly our x-fastest layout). Sines and cosines
// are needed per axis only (K (lx+ly+lz) per chunk); B is formed by a
// product kernel that only multiplies two table entries and writes B in the
// layout the GEMM reads (write-bandwidth bound).
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "cuda/device/pools.hpp"
#include "cuda/gather/fhd_common.cuh"
#include "cuda/gather/fhd_launchers.cuh"

namespace fhd::gpu {
namespace {

// Bytes of B per (chunk, slab): larger P is done in column slabs.
constexpr std::size_t kBBudget = std::size_t(512) << 20;

// One cuBLAS handle per (device, stream), made on first use. A handle's
// workspace must not serve two streams' queued GEMMs, and a backend runs all
// its work on one stream; the backend releases the handle before it destroys
// the stream (release_blas_handle). A handle per host thread, as before,
// leaked its 64 MB workspace on every --gpus call, whose slabs run on threads
// of their own (compute-sanitizer: 177 allocations, 3.8 GB, in the
// conformance tests). Never destroyed during static teardown, after the CUDA
// runtime may be gone.
std::mutex g_blas_mutex;
std::map<std::pair<int, cudaStream_t>, cublasHandle_t> g_blas_handles;

cublasHandle_t blas_handle(cudaStream_t st) {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(g_blas_mutex);
  cublasHandle_t& h = g_blas_handles[{dev, st}];
  if (h) return h;
  cublasStatus_t made = cublas().create(&h);
  if (made == CUBLAS_STATUS_ALLOC_FAILED) {  // the pools' idle memory may be what it lacks
    trim_pools();
    made = cublas().create(&h);
  }
  CUDA_CHECK(made);
  return h;
}

// Workspace comes from the stream-ordered pool; keep freed blocks in the pool
// so each launch does not map and unmap hundreds of MB again.
void keep_pool_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaMemPool_t pool;
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    std::uint64_t keep = UINT64_MAX;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  });
}

template <TrigMode T>
__device__ __forceinline__ float2 axis_phasor(float k, int i, int len, int n) {
  float s, c;
  if constexpr (T == TrigMode::Double) {
    double sd, cd;
    turn_sincos_d(double(k) * coord_d(i, len, n), &sd, &cd);
    s = float(sd), c = float(cd);
  } else {
    // One product per axis: |k x| <= N/2 * 1 cycle, rounding far below the 3-term sum.
    turn_sincos<T>(k * float(coord_d(i, len, n)), &s, &c);
  }
  return make_float2(c, s);
}

// Ex[ix + lx*j] (GEMM's A, column-major), Ty[iy*K + j], Tz[iz*K + j] * w_j.
template <TrigMode T>
__global__ void axis_tables_kernel(SampleSet s, std::size_t m0, int K, OutGrid g, float2* ex,
                                   float2* ty, float2* tz) {
  const std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t nxk = std::size_t(g.lx) * K, nyk = std::size_t(g.ly) * K, nzk = std::size_t(g.lz) * K;
  if (e < nxk) {
    const int ix = int(e % g.lx), j = int(e / g.lx);
    ex[e] = axis_phasor<T>(s.kx[m0 + j], ix, g.lx, g.nx);
  } else if (e < nxk + nyk) {
    const std::size_t f = e - nxk;
    const int iy = int(f / K), j = int(f % K);
    ty[f] = axis_phasor<T>(s.ky[m0 + j], iy, g.ly, g.ny);
  } else if (e < nxk + nyk + nzk) {
    const std::size_t f = e - nxk - nyk;
    const int iz = int(f / K), j = int(f % K);
    const float2 v = axis_phasor<T>(s.kz[m0 + j], iz, g.lz, g.nz);
    const float2 w = s.w[m0 + j];
    tz[f] = make_float2(w.x * v.x - w.y * v.y, w.x * v.y + w.y * v.x);
  }
}

// B[j + K*(p - p0)] = Ty[iy, j] * Tz[iz, j]: one block per column p, threads
// along j (coalesced reads of both tables and coalesced writes of B).
__global__ void product_kernel(const float2* __restrict__ ty, const float2* __restrict__ tz, int K,
                               int ly, std::size_t p0, float2* __restrict__ b) {
  const std::size_t p = p0 + blockIdx.x;
  const int iy = int(p % ly), iz = int(p / ly);
  const float2* y = ty + std::size_t(iy) * K;
  const float2* z = tz + std::size_t(iz) * K;
  float2* col = b + std::size_t(blockIdx.x) * K;
  for (int j = threadIdx.x; j < K; j += blockDim.x) {
    const float2 u = y[j], v = z[j];
    col[j] = make_float2(u.x * v.x - u.y * v.y, u.x * v.y + u.y * v.x);
  }
}

enum class Gemm { Fp32, Fp32Gauss, Tf32 };

void gemm(cublasHandle_t h, Gemm kind, int lx, int np, int K, const float2* ex, const float2* b,
          bool first, float2* c) {
  const cuComplex one = make_cuComplex(1.f, 0.f), zero = make_cuComplex(0.f, 0.f);
  const cuComplex* beta = first ? &zero : &one;
  auto A = reinterpret_cast<const cuComplex*>(ex);
  auto B = reinterpret_cast<const cuComplex*>(b);
  auto C = reinterpret_cast<cuComplex*>(c);
  switch (kind) {
    case Gemm::Fp32:
      CUDA_CHECK(cublas().cgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, lx, np, K, &one, A, lx, B, K, beta, C, lx));
      return;
    case Gemm::Fp32Gauss:
      CUDA_CHECK(cublas().cgemm3m(h, CUBLAS_OP_N, CUBLAS_OP_N, lx, np, K, &one, A, lx, B, K, beta, C, lx));
      return;
    case Gemm::Tf32:
      CUDA_CHECK(cublas().gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, lx, np, K, &one, A, CUDA_C_32F, lx, B,
                              CUDA_C_32F, K, beta, C, CUDA_C_32F, lx, CUBLAS_COMPUTE_32F_FAST_TF32,
                              CUBLAS_GEMM_DEFAULT));
      return;
  }
}

template <TrigMode T>
void launch_tables(const SampleSet& s, std::size_t m0, int K, const OutGrid& g, float2* ex,
                   float2* ty, float2* tz, cudaStream_t st) {
  const std::size_t n = std::size_t(g.lx + g.ly + g.lz) * K;
  axis_tables_kernel<T><<<blocks_covering(n, 256), 256, 0, st>>>(s, m0, K, g, ex, ty, tz);
  CUDA_CHECK_LAUNCH();
}

void launch_separable(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                      const LaunchConfig& cfg, Gemm kind, cudaStream_t st) {
  const SeparableDefaults d;
  if (s.m == 0) {
    CUDA_CHECK(cudaMemsetAsync(out, 0, g.points() * sizeof(float2), st));
    return;
  }
  if (kind == Gemm::Fp32 && cfg.coarsen == 3) kind = Gemm::Fp32Gauss;
  const int threads = cfg.threads > 0 ? cfg.threads : 256;
  const int K = int(std::min<std::size_t>(cfg.tile > 0 ? cfg.tile : d.tile, s.m));
  const std::size_t P = std::size_t(g.ly) * g.lz;
  const std::size_t slab = std::max<std::size_t>(1, std::min(P, kBBudget / (std::size_t(K) * sizeof(float2))));
  if (slab > std::size_t(INT32_MAX) || g.lx > INT32_MAX / 2)
    throw InputError("separable", "grid", std::to_string(g.points()), "too large for one GEMM");
  keep_pool_memory();
  cublasHandle_t h = blas_handle(st);
  CUDA_CHECK(cublas().set_stream(h, st));
  float2 *ex, *ty, *tz, *b;
  CUDA_CHECK(malloc_async(reinterpret_cast<void**>(&ex), std::size_t(g.lx) * K * sizeof(float2), st));
  CUDA_CHECK(malloc_async(reinterpret_cast<void**>(&ty), std::size_t(g.ly) * K * sizeof(float2), st));
  CUDA_CHECK(malloc_async(reinterpret_cast<void**>(&tz), std::size_t(g.lz) * K * sizeof(float2), st));
  CUDA_CHECK(malloc_async(reinterpret_cast<void**>(&b), slab * K * sizeof(float2), st));
  for (std::size_t m0 = 0; m0 < s.m; m0 += K) {
    const int k = int(std::min<std::size_t>(K, s.m - m0));
    switch (trig) {
      case TrigMode::Double: launch_tables<TrigMode::Double>(s, m0, k, g, ex, ty, tz, st); break;
      case TrigMode::Single: launch_tables<TrigMode::Single>(s, m0, k, g, ex, ty, tz, st); break;
      case TrigMode::Sfu: launch_tables<TrigMode::Sfu>(s, m0, k, g, ex, ty, tz, st); break;
    }
    for (std::size_t p0 = 0; p0 < P; p0 += slab) {
      const int np = int(std::min(slab, P - p0));
      last_launch() = {reinterpret_cast<const void*>(product_kernel), threads, 0};
      product_kernel<<<np, threads, 0, st>>>(ty, tz, k, g.ly, p0, b);
      CUDA_CHECK_LAUNCH();
      gemm(h, kind, g.lx, np, k, ex, b, m0 == 0, out + p0 * g.lx);
    }
  }
  for (float2* p : {ex, ty, tz, b}) CUDA_CHECK(cudaFreeAsync(p, st));
}

}  // namespace

void release_blas_handle(cudaStream_t st) {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(g_blas_mutex);
  auto it = g_blas_handles.find({dev, st});
  if (it == g_blas_handles.end()) return;  // no GEMM ran on it: cuBLAS need not even be loaded
  const cublasHandle_t h = it->second;
  g_blas_handles.erase(it);
  if (h) CUDA_CHECK(cublas().destroy(h));  // 0: its creation failed
}

void launch_separable_fp32(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                           const LaunchConfig& cfg, cudaStream_t st) {
  launch_separable(s, g, out, trig, cfg, Gemm::Fp32, st);
}
void launch_separable_tf32(const SampleSet& s, const OutGrid& g, float2* out, TrigMode trig,
                           const LaunchConfig& cfg, cudaStream_t st) {
  launch_separable(s, g, out, trig, cfg, Gemm::Tf32, st);
}

}  // namespace fhd::gpu
