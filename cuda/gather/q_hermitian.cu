// Q on the doubled grid from about half of its points: Q(-y) = conj(Q(y)) for
// real weights. The kernel table computes boxes of the doubled grid; a box that
// does not start at the grid's corner is reached by shifting the coordinates,
// which is a phase on the weights: sum w exp(i2pi k.(y + d)) = sum (w e^{i2pi k.d}) e^{i2pi k.y}.
#include "cuda/device/check.hpp"
#include "cuda/gather/q_hermitian.hpp"

namespace fhd::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocks(std::size_t n) { return unsigned((n + kThreads - 1) / kThreads); }

// w_out = w * exp(i 2 pi k.d), in double: k.d reaches tens of turns and the
// reduced phase must stay accurate to float rounding.
__global__ void phase_shift(const float* kx, const float* ky, const float* kz, const float2* w, double dx,
                            double dy, double dz, float2* out, std::size_t m) {
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  double t = double(kx[i]) * dx + double(ky[i]) * dy + double(kz[i]) * dz;
  t -= rint(t);
  double s, c;
  sincospi(2.0 * t, &s, &c);
  out[i] = make_float2(float(w[i].x * c - w[i].y * s), float(w[i].x * s + w[i].y * c));
}

struct Boxes {
  const float2* half;   // mirror-axis index 0..n (n+1 slices)
  const float2* face0;  // first other axis at index 0, mirror index n+1..2n-1
  const float2* face1;  // second other axis at index 0 (3D only; first axis from 1), same mirror range
};

// Fills the doubled grid (L = 2n on every axis; a 2D grid has lz = 1 and mirrors y).
__global__ void assemble(Boxes b, int lx, int ly, int lz, float2* q) {
  std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  std::size_t total = std::size_t(lx) * ly * lz;
  if (i >= total) return;
  const bool is3d = lz > 1;
  int jx = int(i % lx), jy = int((i / lx) % ly), jz = int(i / (std::size_t(lx) * ly));
  int jm = is3d ? jz : jy, lm = is3d ? lz : ly, n = lm / 2;
  if (jm <= n) {  // in the half box, which has the grid's layout with n+1 mirror slices
    q[i] = b.half[i];
    return;
  }
  int r = jm - n - 1;  // row within the faces
  if (jx == 0) {
    q[i] = b.face0[is3d ? std::size_t(r) * ly + jy : std::size_t(r)];
    return;
  }
  if (is3d && jy == 0) {
    q[i] = b.face1[std::size_t(r) * (lx - 1) + (jx - 1)];
    return;
  }
  std::size_t mx = lx - jx, my = is3d ? ly - jy : ly - jy, mz = is3d ? lz - jz : 0;
  std::size_t src = mx + std::size_t(lx) * (my + std::size_t(ly) * mz);
  float2 v = b.half[src];
  q[i] = make_float2(v.x, -v.y);
}

}  // namespace

void launch_phase_shift(const SampleSet& s, double dx, double dy, double dz, float2* out, cudaStream_t st) {
  if (s.m == 0) return;
  phase_shift<<<blocks(s.m), kThreads, 0, st>>>(s.kx, s.ky, s.kz, s.w, dx, dy, dz, out, s.m);
  CUDA_CHECK_LAUNCH();
}

void launch_assemble_q(const float2* half, const float2* face0, const float2* face1, int lx, int ly, int lz,
                       float2* q, cudaStream_t st) {
  std::size_t total = std::size_t(lx) * ly * lz;
  assemble<<<blocks(total), kThreads, 0, st>>>(Boxes{half, face0, face1}, lx, ly, lz, q);
  CUDA_CHECK_LAUNCH();
}

}  // namespace fhd::gpu
