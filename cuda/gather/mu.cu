// cmpMu (PMPP chapter 17): Mu_m = conj(Phi_m) * D_m, one thread per sample.
// Memory-bound: 16 bytes in (8 without phi), 8 out per sample.
#include "cuda/device/gpu_internal.hpp"

namespace fhd::gpu {
namespace {

__global__ void mu_kernel(const float2* __restrict__ phi, const float2* __restrict__ d,
                          float2* __restrict__ mu, std::size_t m) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < m;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float2 di = d[i];
    if (phi == nullptr) {
      mu[i] = di;
      continue;
    }
    const float2 p = phi[i];
    // rMu = rPhi*rD + iPhi*iD, iMu = rPhi*iD - iPhi*rD (docs/conventions.md)
    mu[i] = make_float2(p.x * di.x + p.y * di.y, p.x * di.y - p.y * di.x);
  }
}

}  // namespace

void launch_mu(const float2* phi, const float2* d, float2* mu, std::size_t m, cudaStream_t s) {
  if (m == 0) return;
  constexpr unsigned threads = 256;
  mu_kernel<<<blocks_for(m, threads), threads, 0, s>>>(phi, d, mu, m);
  CUDA_CHECK_LAUNCH();
}

}  // namespace fhd::gpu
