#pragma once
// Gridding's interpolation kernel, distances in oversampled-grid cells.

namespace fhd {

struct GridKernel {
  enum class Type { Trilinear, KaiserBessel } type = Type::KaiserBessel;
  double oversampling = 2.0;  // grid size = round(oversampling * N) per axis (even)
  double width = 4.0;         // full kernel width in grid cells (trilinear: 2)
  double beta = 0.0;          // KB shape; 0 = Beatty et al. 2005 optimum for width and oversampling
};

}  // namespace fhd
