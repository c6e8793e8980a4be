// The exact off-resonance model on the GPU (recon/field.hpp): the gather of
// cmpFhD with the extra phase f_n t_m, no approximation.
//   adjoint: x_n = sum_m d_m exp(+i 2 pi (k_m . r_n + f_n t_m)), one thread per voxel;
//   forward: d_m = sum_n x_n exp(-i 2 pi (k_m . r_n + f_n t_m)), one thread per sample.
// The other side of each sum is staged through shared memory in tiles. Phases
// are reduced in cycles (t -= rint(t)) before sincospif, as every kernel here
// (docs/conventions.md); sums are float within a tile, double across tiles.
#include "cuda/gpu_internal.hpp"

namespace fhd::gpu {
namespace {

constexpr int kTile = 256;

__device__ inline float coord(int i, int n) { return float(i - n / 2) / float(n); }

__device__ inline void voxel_coords(std::size_t v, int nx, int ny, int nz, float& x, float& y, float& z) {
  const int ix = int(v % nx), iy = int((v / nx) % ny), iz = int(v / (std::size_t(nx) * ny));
  x = coord(ix, nx);
  y = coord(iy, ny);
  z = coord(iz, nz);
}

__global__ void field_adjoint_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                     const float* __restrict__ kz, const float* __restrict__ t,
                                     const float2* __restrict__ d, std::size_t m, const float* __restrict__ hz,
                                     float2* __restrict__ out, int nx, int ny, int nz) {
  __shared__ float skx[kTile], sky[kTile], skz[kTile], st[kTile];
  __shared__ float2 sd[kTile];
  const std::size_t voxels = std::size_t(nx) * ny * nz;
  const std::size_t v = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  float x = 0, y = 0, z = 0, f = 0;
  if (v < voxels) {
    voxel_coords(v, nx, ny, nz, x, y, z);
    f = hz[v];
  }
  double re = 0, im = 0;
  for (std::size_t base = 0; base < m; base += kTile) {
    const std::size_t j = base + threadIdx.x;
    if (threadIdx.x < kTile && j < m) {
      skx[threadIdx.x] = kx[j];
      sky[threadIdx.x] = ky[j];
      skz[threadIdx.x] = kz[j];
      st[threadIdx.x] = t[j];
      sd[threadIdx.x] = d[j];
    }
    __syncthreads();
    const int n = m - base < std::size_t(kTile) ? int(m - base) : kTile;
    float tr = 0, ti = 0;
    for (int i = 0; i < n; ++i) {
      float p = skx[i] * x + sky[i] * y + skz[i] * z + f * st[i];
      p -= rintf(p);
      float s, c;
      sincospif(2.0f * p, &s, &c);
      tr += sd[i].x * c - sd[i].y * s;
      ti += sd[i].x * s + sd[i].y * c;
    }
    re += tr;
    im += ti;
    __syncthreads();
  }
  if (v < voxels) out[v] = make_float2(float(re), float(im));
}

__global__ void field_forward_kernel(const float* __restrict__ kx, const float* __restrict__ ky,
                                     const float* __restrict__ kz, const float* __restrict__ t, std::size_t m,
                                     const float2* __restrict__ img, const float* __restrict__ hz,
                                     float2* __restrict__ out, int nx, int ny, int nz) {
  __shared__ float sx[kTile], sy[kTile], sz[kTile], sf[kTile];
  __shared__ float2 simg[kTile];
  const std::size_t voxels = std::size_t(nx) * ny * nz;
  const std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  float k0 = 0, k1 = 0, k2 = 0, tj = 0;
  if (j < m) {
    k0 = kx[j];
    k1 = ky[j];
    k2 = kz[j];
    tj = t[j];
  }
  double re = 0, im = 0;
  for (std::size_t base = 0; base < voxels; base += kTile) {
    const std::size_t v = base + threadIdx.x;
    if (threadIdx.x < kTile && v < voxels) {
      voxel_coords(v, nx, ny, nz, sx[threadIdx.x], sy[threadIdx.x], sz[threadIdx.x]);
      sf[threadIdx.x] = hz[v];
      simg[threadIdx.x] = img[v];
    }
    __syncthreads();
    const int n = voxels - base < std::size_t(kTile) ? int(voxels - base) : kTile;
    float tr = 0, ti = 0;
    for (int i = 0; i < n; ++i) {
      float p = k0 * sx[i] + k1 * sy[i] + k2 * sz[i] + sf[i] * tj;
      p -= rintf(p);
      float s, c;
      sincospif(2.0f * p, &s, &c);  // exp(-i 2 pi p) = c - i s
      tr += simg[i].x * c + simg[i].y * s;
      ti += simg[i].y * c - simg[i].x * s;
    }
    re += tr;
    im += ti;
    __syncthreads();
  }
  if (j < m) out[j] = make_float2(float(re), float(im));
}

}  // namespace

void launch_field_adjoint(const DeviceTrajectory& k, const float* t, const float2* d, const float* hz, float2* out,
                          const ImageGrid& g, cudaStream_t s) {
  const std::size_t voxels = g.voxels();
  if (voxels == 0) return;
  field_adjoint_kernel<<<blocks_covering(voxels, kTile), kTile, 0, s>>>(k.kx.get(), k.ky.get(), k.kz.get(), t, d, k.m, hz,
                                                                  out, g.nx, g.ny, g.nz);
  CUDA_CHECK_LAUNCH();
}

void launch_field_forward(const DeviceTrajectory& k, const float* t, const float2* img, const float* hz, float2* out,
                          const ImageGrid& g, cudaStream_t s) {
  if (k.m == 0) return;
  field_forward_kernel<<<blocks_covering(k.m, kTile), kTile, 0, s>>>(k.kx.get(), k.ky.get(), k.kz.get(), t, k.m, img, hz,
                                                               out, g.nx, g.ny, g.nz);
  CUDA_CHECK_LAUNCH();
}

}  // namespace fhd::gpu
