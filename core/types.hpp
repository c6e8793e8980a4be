#pragma once
// Types every layer shares (docs/conventions.md): complex scalars, the image grid,
// the trig mode of the FhD/Q kernels.
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace fhd {

using cfloat = std::complex<float>;
using cdouble = std::complex<double>;

// Image matrix. A 2D problem has nz = 1. Storage is x fastest:
// index = ix + nx * (iy + ny * iz)  (BART's column-major order).
struct ImageGrid {
  int nx = 1, ny = 1, nz = 1;
  std::size_t voxels() const { return std::size_t(nx) * ny * nz; }
  bool is3d() const { return nz > 1; }
  // The doubled grid of Q: 2N per axis, except an axis of length 1 stays 1.
  ImageGrid doubled() const { return {2 * nx, 2 * ny, nz > 1 ? 2 * nz : 1}; }
  bool operator==(const ImageGrid& o) const { return nx == o.nx && ny == o.ny && nz == o.nz; }
};

// "NXxNYxNZ", the grid's size in messages.
inline std::string dims_string(const ImageGrid& g) {
  return std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz);
}

// Coordinate (FOV units) of index i on an axis of `len` points whose image has
// n voxels: x_i = (i - len/2) / n. With len = n this is the voxel center
// (i - N/2)/N; with len = 2n it is Q's doubled grid (j - N)/N; len = 1 gives 0.
inline double axis_coord(int i, int len, int n) { return double(i - len / 2) / double(n); }

// Fourier transform of the voxel basis function.
enum class Basis { Dirac, Box };

// How FhD/Q evaluate sine and cosine. Compile-time parameter of the kernels.
enum class TrigMode { Double, Single, Sfu };

inline const char* to_string(TrigMode t) {
  return t == TrigMode::Double ? "double" : t == TrigMode::Single ? "single" : "sfu";
}

// The inverse of to_string: "double" | "single" | "sfu"; anything else throws
// std::invalid_argument naming the value (the CLI checks membership first).
inline TrigMode parse_trig(const std::string& s) {
  if (s == "double") return TrigMode::Double;
  if (s == "single") return TrigMode::Single;
  if (s == "sfu") return TrigMode::Sfu;
  throw std::invalid_argument("trig mode = " + s + ": expected double, single or sfu");
}

}  // namespace fhd
