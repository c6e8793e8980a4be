#pragma once
// Problem types shared by every stage and both backends (CONVENTIONS.md).
#include <complex>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "phantom/trajectory.hpp"

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

// Coordinate (FOV units) of index i on an axis of `len` points whose image has
// n voxels: x_i = (i - len/2) / n. With len = n this is the voxel center
// (i - N/2)/N; with len = 2n it is Q's doubled grid (j - N)/N; len = 1 gives 0.
inline double axis_coord(int i, int len, int n) { return double(i - len / 2) / double(n); }

// Fourier transform of the voxel basis function.
enum class Basis { Dirac, Box };

// One scan: what a source (phantom or file) hands to the pipeline.
struct Scan {
  ImageGrid grid;
  Trajectory traj;
  std::vector<cfloat> data;  // D_m, non-unitary convention (CONVENTIONS.md)
  std::vector<cfloat> phi;   // Phi(k_m); empty means Phi = 1 (Dirac basis)
  std::vector<float> dcf;    // density weights for gridding; empty = compute
  std::vector<cfloat> noise; // this coil's noise-only samples (noise calibration); empty = none
  std::map<std::string, std::string> provenance;  // "phantom", "trajectory", "seed", ...
};

// How FhD/Q evaluate sine and cosine. Compile-time parameter of the kernels.
enum class TrigMode { Double, Single, Sfu };

inline const char* to_string(TrigMode t) {
  return t == TrigMode::Double ? "double" : t == TrigMode::Single ? "single" : "sfu";
}

}  // namespace fhd
