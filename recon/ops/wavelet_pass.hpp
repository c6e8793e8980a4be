#pragma once
// One pass of the periodic db4 transform (recon/ops/wavelet.hpp) along one
// axis of the active box, written once for the host and the GPU: each output
// value is a gather of 8 inputs, so both run it per element, out of place.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/types.hpp"

#ifdef __CUDACC__
#define FHD_HD __host__ __device__
#else
#define FHD_HD
#endif

namespace fhd {

struct WaveletPass {
  int len[3];   // the whole grid, x fastest
  int box[3];   // the active low-pass block at the grid's low corner
  int axis;     // 0 x, 1 y, 2 z
  bool inverse; // synthesis
};

// Output value v of the pass from `in` (interleaved re, im): analysis puts the
// low-pass a_i at box position i and the high-pass d_i at n/2 + i along the
// axis; synthesis is its transpose; outside the box values pass through.
FHD_HD inline void wavelet_value(const float* in, const WaveletPass& p, std::size_t v, float& re, float& im) {
  const float h[8] = {0.23037781330885523f,  0.7148465705525415f,   0.6308807679295904f,  -0.02798376941698385f,
                      -0.18703481171888114f, 0.030841381835986965f, 0.032883011666982945f, -0.010597401784997278f};
  const std::size_t nx = std::size_t(p.len[0]), ny = std::size_t(p.len[1]);
  const int c[3] = {int(v % nx), int((v / nx) % ny), int(v / (nx * ny))};
  if (c[0] >= p.box[0] || c[1] >= p.box[1] || c[2] >= p.box[2]) {
    re = in[2 * v];
    im = in[2 * v + 1];
    return;
  }
  const int n = p.box[p.axis], half = n / 2, pos = c[p.axis];
  const std::size_t stride = p.axis == 0 ? 1 : p.axis == 1 ? nx : nx * ny;
  const std::size_t base = v - std::size_t(pos) * stride;
  float sr = 0.f, si = 0.f;
  if (!p.inverse) {
    const bool low = pos < half;
    const int i = low ? pos : pos - half;
    for (int k = 0; k < 8; ++k) {
      const float w = low ? h[k] : ((k % 2) ? -h[7 - k] : h[7 - k]);  // g_k = (-1)^k h_{7-k}
      const std::size_t at = base + std::size_t((2 * i + k) % n) * stride;
      sr += w * in[2 * at];
      si += w * in[2 * at + 1];
    }
  } else {
    for (int k = 0; k < 8; ++k) {
      if ((pos - k) % 2 != 0) continue;  // n is even: parity survives the wrap
      const int i = ((pos - k) % n + n) % n / 2;
      const float g = (k % 2) ? -h[7 - k] : h[7 - k];
      const std::size_t a = base + std::size_t(i) * stride, d = base + std::size_t(half + i) * stride;
      sr += h[k] * in[2 * a] + g * in[2 * d];
      si += h[k] * in[2 * a + 1] + g * in[2 * d + 1];
    }
  }
  re = sr;
  im = si;
}

// The passes of one transform: per level the box shrinks by 2 along every
// axis of length > 1; analysis goes x, y, z per level, synthesis the reverse.
inline std::vector<WaveletPass> wavelet_passes(const ImageGrid& grid, int levels, bool inverse) {
  const int n[3] = {grid.nx, grid.ny, grid.nz};
  std::vector<WaveletPass> out;
  for (int l = 0; l < levels; ++l)
    for (int axis = 0; axis < 3; ++axis) {
      if (n[axis] == 1) continue;
      WaveletPass p;
      for (int a = 0; a < 3; ++a) p.box[a] = n[a] == 1 ? 1 : n[a] >> l;
      p.len[0] = grid.nx, p.len[1] = grid.ny, p.len[2] = grid.nz;
      p.axis = axis;
      p.inverse = inverse;
      out.push_back(p);
    }
  if (inverse) std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace fhd
