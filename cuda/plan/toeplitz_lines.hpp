#pragma once
// The Toeplitz product crop(IFFT(spectrum * FFT(pad(x)))) by FFTs of our own,
// one axis at a time, for 2D and 3D grids whose doubled lengths are powers of
// two from 16 to 512. cuFFT's pair on the doubled grid moves about 1.6 GB per
// product at 128^3 (the embed, five passes, the multiply, the crop); these
// five line passes move about 0.6 GB, because the work each pass fuses is
// what the FFT pair cannot see (issue 25, docs/performance.md):
//   - the forward x pass reads only the n nonzero inputs of each line (the
//     zero half of pad(x) is never written) and multiplies by a coil's map;
//   - the forward y pass runs on the n lower z slabs only;
//   - the z pass is forward, spectrum multiply and inverse in one kernel: the
//     last forward axis is the first inverse one, so a line never leaves the
//     chip between them, and it keeps only the n outputs the crop reads;
//   - the inverse y pass keeps the n lower rows, and the inverse x pass keeps
//     the crop, multiplies by the map's conjugate and adds into y.
// The passes are cuda/fft/line_fft.hpp's.
#include <cuda_runtime.h>

#include <string>

#include "core/types.hpp"
#include "cuda/device/device_buffer.hpp"
#include "cuda/fft/line_fft.hpp"

namespace fhd::gpu {

// The doubled grid's spectrum, x fastest, the inverse's 1/L folded in: real
// (a Hermitian Q's) or complex.
using lines::Spectrum;

class LineToeplitz {
 public:
  // 2D or 3D grids whose doubled lengths are each a power of two in [16, 512].
  static bool supports(const ImageGrid& n);
  // Bytes of scratch the passes hold: 2 n and 4 n voxels in 3D, 2 n in 2D.
  static double scratch_bytes(const ImageGrid& n);

  LineToeplitz(const ImageGrid& n, cudaStream_t s, const std::string& what);

  // y = conj(map) . crop(IFFT(spectrum * FFT(pad(map . x)))), or y += that
  // when `accumulate`; map null means all ones. x and y may not alias when
  // accumulating over coils (x is read again after y is written).
  void apply(const float2* x, const float2* map, const Spectrum& spectrum, float2* y, bool accumulate);

 private:
  ImageGrid n_, len_;
  cudaStream_t s_;
  DeviceBuffer<float2> rows_;    // after the x pass: 2nx x ny x nz
  DeviceBuffer<float2> slabs_;   // after the y pass (3D): 2nx x 2ny x nz
};

}  // namespace fhd::gpu
