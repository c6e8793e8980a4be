// Probe (not part of the build): type 2's interpolation of 8 transforms, the
// fine grids apart (one launch, blockIdx.y the transform) against the grids
// interleaved by 4 and by 8 (each tap's load brings 4 or 8 transforms).
// nvcc -O3 -arch=sm_90 scripts/device/interp_probe.cu -o /tmp/probe && /tmp/probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <random>
#include <vector>

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e = (x);                                                           \
    if (e != cudaSuccess) {                                                        \
      printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));             \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

constexpr int W = 7, L = 8, T = 8;
struct G {
  int nf;
  float half_w, inv_half_w, beta;
};

__device__ __forceinline__ int wrapi(int i, int n) {
  i %= n;
  return i < 0 ? i + n : i;
}
__device__ __forceinline__ float tapw(float u, float i0, int t, const G& g) {
  const float x = (i0 + float(t) - u) * g.inv_half_w;
  const float r = 1.f - x * x;
  return r > 0.f ? expf(g.beta * (sqrtf(r) - 1.f)) : 0.f;
}

struct Tap {
  float w;
  int cell;
};
__device__ __forceinline__ Tap lane_tap(float u, int nf, int lane, const G& g) {
  const float i0 = ceilf(u - g.half_w);
  return {lane < W ? tapw(u, i0, lane, g) : 0.f, wrapi(int(i0) + lane, nf)};
}

// Q transforms per cell, interleaved (Q = 1: one grid; blockIdx.y picks the group of Q).
template <int Q>
__global__ void interp(const float4* __restrict__ pts, std::size_t m, G g, const float2* __restrict__ fine,
                       float2* __restrict__ c, std::size_t fs) {
  c += blockIdx.y * Q * m;
  fine += blockIdx.y * Q * fs;
  const int lane = threadIdx.x % L;
  const unsigned mask = ((1u << L) - 1u) << (threadIdx.x % 32 / L * L);
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x / L;
  const int nf = g.nf;
  for (std::size_t s = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / L; s < m; s += stride) {
    const float4 pt = pts[s];
    const Tap tx = lane_tap(pt.x, nf, lane, g), ty = lane_tap(pt.y, nf, lane, g), tz = lane_tap(pt.z, nf, lane, g);
    float2 acc[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) acc[q] = make_float2(0.f, 0.f);
#pragma unroll
    for (int dz = 0; dz < W; ++dz) {
      const float wz = __shfl_sync(mask, tz.w, dz, L);
      const std::size_t zoff = std::size_t(__shfl_sync(mask, tz.cell, dz, L)) * nf;
      float2 zacc[Q];
#pragma unroll
      for (int q = 0; q < Q; ++q) zacc[q] = make_float2(0.f, 0.f);
#pragma unroll
      for (int dy = 0; dy < W; ++dy) {
        const float wy = __shfl_sync(mask, ty.w, dy, L);
        const int iy = __shfl_sync(mask, ty.cell, dy, L);
        if (lane < W) {
          const std::size_t cell = (zoff + iy) * nf + tx.cell;
          if (Q == 1) {
            const float2 t = __ldg(fine + cell);
            zacc[0].x += t.x * wy;
            zacc[0].y += t.y * wy;
          } else {
            const float4* p = reinterpret_cast<const float4*>(fine + cell * Q);
#pragma unroll
            for (int h = 0; h < Q / 2; ++h) {
              const float4 t = __ldg(p + h);
              zacc[2 * h].x += t.x * wy;
              zacc[2 * h].y += t.y * wy;
              zacc[2 * h + 1].x += t.z * wy;
              zacc[2 * h + 1].y += t.w * wy;
            }
          }
        }
      }
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        acc[q].x += zacc[q].x * wz;
        acc[q].y += zacc[q].y * wz;
      }
    }
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      acc[q].x *= tx.w;
      acc[q].y *= tx.w;
#pragma unroll
      for (int off = L / 2; off > 0; off /= 2) {
        acc[q].x += __shfl_xor_sync(mask, acc[q].x, off, L);
        acc[q].y += __shfl_xor_sync(mask, acc[q].y, off, L);
      }
    }
    if (lane == 0) {
      const unsigned idx = __float_as_uint(pt.w);
#pragma unroll
      for (int q = 0; q < Q; ++q) c[q * m + idx] = acc[q];
    }
  }
}

// Separate grids -> interleaved by Q (what the FFT's last pass would write).
template <int Q>
__global__ void interleave(const float2* __restrict__ in, float2* __restrict__ out, std::size_t fs) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < fs * T;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t t = i / fs, cell = i % fs, grp = t / Q, q = t % Q;
    out[grp * Q * fs + cell * Q + q] = in[i];
  }
}

template <int Q>
float time_it(const float4* pts, std::size_t m, G g, const float2* fine, float2* c, std::size_t fs) {
  const unsigned threads = 256;
  const unsigned blocks = unsigned((m * L + threads - 1) / threads);
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < 11; ++r) {
    CK(cudaEventRecord(a));
    interp<Q><<<dim3(blocks, T / Q), threads>>>(pts, m, g, fine, c, fs);
    CK(cudaGetLastError());
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main(int argc, char** argv) {
  const int nf = argc > 1 ? atoi(argv[1]) : 256;
  const std::size_t m = argc > 2 ? std::size_t(atoll(argv[2])) : 1048576;
  const bool radial = argc > 3 && argv[3][0] == 'r';
  const std::size_t fs = std::size_t(nf) * nf * nf;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> U(0.f, float(nf));
  std::vector<float4> p(m);
  for (std::size_t i = 0; i < m; ++i) {
    float x, y, z;
    if (radial) {  // spokes through the centre
      const std::size_t spoke = i / 256, k = i % 256;
      std::mt19937_64 r2(spoke);
      std::normal_distribution<float> N;
      float dx = N(r2), dy = N(r2), dz = N(r2), n = std::sqrt(dx * dx + dy * dy + dz * dz);
      const float rad = (float(k) - 128.f) / 256.f * nf * 0.5f;
      x = nf / 2 + rad * dx / n, y = nf / 2 + rad * dy / n, z = nf / 2 + rad * dz / n;
    } else {
      x = U(rng), y = U(rng), z = U(rng);
    }
    float wbits;
    const unsigned ui = unsigned(i);
    std::memcpy(&wbits, &ui, 4);
    p[i] = make_float4(x, y, z, wbits);
  }
  auto key = [&](const float4& q) {
    return (std::size_t(q.z) / 8 * (nf / 16) + std::size_t(q.y) / 16) * (nf / 16) + std::size_t(q.x) / 16;
  };
  std::stable_sort(p.begin(), p.end(), [&](const float4& a, const float4& b) { return key(a) < key(b); });
  std::vector<float2> f(fs * T);
  for (auto& v : f) v = make_float2(U(rng) / nf - 0.5f, U(rng) / nf - 0.5f);
  float4* dp;
  float2 *dsep, *dq4, *dq8, *c1, *c4, *c8;
  CK(cudaMalloc(&dp, m * sizeof(float4)));
  CK(cudaMalloc(&dsep, fs * T * sizeof(float2)));
  CK(cudaMalloc(&dq4, fs * T * sizeof(float2)));
  CK(cudaMalloc(&dq8, fs * T * sizeof(float2)));
  CK(cudaMalloc(&c1, m * T * sizeof(float2)));
  CK(cudaMalloc(&c4, m * T * sizeof(float2)));
  CK(cudaMalloc(&c8, m * T * sizeof(float2)));
  CK(cudaMemcpy(dp, p.data(), m * sizeof(float4), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dsep, f.data(), fs * T * sizeof(float2), cudaMemcpyHostToDevice));
  interleave<4><<<4096, 256>>>(dsep, dq4, fs);
  interleave<8><<<4096, 256>>>(dsep, dq8, fs);
  CK(cudaGetLastError());
  const float w = W;
  G g{nf, w / 2, 2 / w, 2.30f * w};
  const float t1 = time_it<1>(dp, m, g, dsep, c1, fs);
  const float t2 = time_it<2>(dp, m, g, dq4 /*unused layout*/, c4, fs);
  const float t4 = time_it<4>(dp, m, g, dq4, c4, fs);
  const float t8 = time_it<8>(dp, m, g, dq8, c8, fs);
  std::vector<float2> h1(m * T), h4(m * T), h8(m * T);
  CK(cudaMemcpy(h1.data(), c1, m * T * sizeof(float2), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h4.data(), c4, m * T * sizeof(float2), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(h8.data(), c8, m * T * sizeof(float2), cudaMemcpyDeviceToHost));
  double d4 = 0, d8 = 0, n1 = 0;
  for (std::size_t i = 0; i < m * T; ++i) {
    d4 = std::max(d4, double(std::abs(h1[i].x - h4[i].x) + std::abs(h1[i].y - h4[i].y)));
    d8 = std::max(d8, double(std::abs(h1[i].x - h8[i].x) + std::abs(h1[i].y - h8[i].y)));
    n1 = std::max(n1, double(std::abs(h1[i].x)));
  }
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  interleave<4><<<4096, 256>>>(dsep, dq4, fs);
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ti = 0;
  CK(cudaEventElapsedTime(&ti, a, b));
  printf("nf %d m %zu %s, 8 transforms: apart %.3f ms, pairs %.3f, quads %.3f, eights %.3f ms; interleave pass %.3f ms;"
         " max diff quads %.2e eights %.2e (max |c| %.2e)\n",
         nf, m, radial ? "radial" : "uniform", t1, t2, t4, t8, ti, d4, d8, n1);
  return 0;
}
