#pragma once
// FFTs along one axis of a strided volume, by kernels of our own, with what
// the callers need around each transform fused into the same pass: which
// positions of a line hold data (the rest read as zero, and only the kept
// positions are written), a coil map, a spectrum multiply between a forward
// and an inverse transform, and the NUFFT's deapodization. cuFFT transforms
// every position of the whole grid and leaves that work to passes of their
// own; the Toeplitz product (cuda/plan/toeplitz_lines.hpp) and the NUFFT's
// fine grid (cuda/nufft/nufft.cu) move about half the bytes this way.
//
// Lengths: powers of two from 16 to 512. Directions as cuFFT's, unnormalized:
// forward exp(-i), inverse exp(+i).
#include <cuda_runtime.h>

namespace fhd::gpu::lines {

bool supported_length(int len);

// Where a pass's lines are: line (u, w), position p at u su + w sw + p sp.
struct Lines {
  long long su = 0, sw = 0, sp = 0;
};

// Which positions of a line of L hold the n values of the other side:
// Low, the first n (the Toeplitz's padded corner); Centered, mode i at
// position (i - n/2) mod L (the NUFFT's fine grid).
enum class Place { Low, Centered };

// The spectrum of a Convolve pass, laid out as its input: real (a Hermitian
// kernel's) or complex; exactly one pointer is set.
struct Spectrum {
  const float2* complex = nullptr;
  const float* real = nullptr;
};

struct Pass {
  const float2* src = nullptr;
  Lines in;
  int n_in = 0;  // values per line read from src
  Place place_in = Place::Low;
  float2* dst = nullptr;
  Lines out;
  int n_out = 0;  // values per line written to dst
  Place place_out = Place::Low;
  int nu = 1, nw = 1;               // lines: u < nu, w < nw
  // Low passes only (the Toeplitz's): Forward, times the input; Inverse,
  // conj times the output.
  const float2* map = nullptr;
  // Centered passes only (the NUFFT's): Forward, input times d0[i] d1[u]
  // d2[w]; Inverse, the output.
  const float* deapod[3] = {};
  Spectrum spectrum;                // Convolve only
  bool accumulate = false;          // add into dst; Low passes only
};

// The common case's fields: src, dst, their layouts and counts, the lines.
inline Pass pass(const float2* src, Lines in, int n_in, float2* dst, Lines out, int n_out, int nu, int nw) {
  Pass p;
  p.src = src;
  p.in = in;
  p.n_in = n_in;
  p.dst = dst;
  p.out = out;
  p.n_out = n_out;
  p.nu = nu;
  p.nw = nw;
  return p;
}

// Forward or inverse transform of each line; Convolve: forward, spectrum
// multiply, inverse, in one kernel (src may equal dst: each line is read
// whole before it is written). `contiguous`: the lines run along the fastest
// axis (sp 1), else consecutive u must be adjacent in memory (su 1).
enum class Mode { Forward, Inverse, Convolve };
void run(Mode mode, bool contiguous, int len, const Pass& p, cudaStream_t s);

}  // namespace fhd::gpu::lines
