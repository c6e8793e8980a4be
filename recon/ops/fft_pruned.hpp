#pragma once
// A pruned in-place FFTW transform of one or more grids (single precision):
// one batched 1D plan per axis and kept range, skipping the lines that are
// known to be zero (input pruned: zero outside the kept ranges before the
// transform) or never read (output pruned: only the kept ranges are read
// after it). Axis by axis in `order`; the lines of axis a run over
//   input pruned:  the axes done before a whole, those after a on their kept ranges;
//   output pruned: the axes done before a on their kept ranges, those after a whole.
// Used by the Toeplitz operator's padded FFT pair (kept = the lower half) and
// the NUFFT's fine grid (kept = the modes at both ends of each axis).
#include <array>
#include <vector>

#include "recon/problem/scan.hpp"

namespace fhd {

struct KeptRange {
  int start, length;
};

// Where a grid's values sit, in complex values from the first: cell (x, y, z)
// of grid t at x stride[0] + y stride[1] + z stride[2] + t batch_stride.
struct GridLayout {
  std::ptrdiff_t stride[3];
  std::ptrdiff_t batch_stride;
  static GridLayout dense(const ImageGrid& g) {
    return {{1, g.nx, std::ptrdiff_t(g.nx) * g.ny}, std::ptrdiff_t(g.voxels())};
  }
};

class PrunedFft {
 public:
  enum class Pruned { Input, Output };
  // dims: one grid (x fastest), stored as `layout` says (dense: batch grids
  // follow each other at dims.voxels()).
  // kept[a]: the ranges of axis a (empty or one range covering the axis = whole);
  // order: the axes in execution order; sign: FFTW_FORWARD (-1) or FFTW_BACKWARD (+1).
  // threads: FFTW's threads for these plans (0 = as set for the process).
  // Plans are made with FFTW_ESTIMATE under fftw_planner_lock(): no data is touched.
  PrunedFft(const ImageGrid& dims, const std::array<std::vector<KeptRange>, 3>& kept, Pruned which,
            const std::array<int, 3>& order, int sign, int batch, cfloat* data, int threads = 0);
  PrunedFft(const ImageGrid& dims, const GridLayout& layout, const std::array<std::vector<KeptRange>, 3>& kept,
            Pruned which, const std::array<int, 3>& order, int sign, int batch, cfloat* data, int threads = 0);
  ~PrunedFft();
  PrunedFft(const PrunedFft&) = delete;
  PrunedFft& operator=(const PrunedFft&) = delete;
  void execute();
  std::size_t plans() const { return plans_.size(); }

 private:
  std::vector<void*> plans_;  // fftwf_plan, in execution order
};

}  // namespace fhd
