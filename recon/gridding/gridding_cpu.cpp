// CPU gridding scatter and gather (OpenMP).
//
// A scatter has write conflicts: two samples near each other add to the same
// cells. Instead of atomics or one private grid per thread (a 256^3 complex
// grid is 128 MiB per copy), samples are binned into slabs along the slowest
// axis whose thickness is at least the kernel's footprint; a sample in slab s
// writes only into slabs s and s+1. Even slabs are then processed in parallel,
// then odd ones: no two threads ever touch the same cell, with no extra memory
// beyond one index per sample. docs/gridding.md has the measured timings.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/error.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/gridding/gridding_cpu.hpp"
#include "recon/ops/fft.hpp"

#include "core/error.hpp"
#include "recon/ops/fft.hpp"

namespace fhd {
namespace {

constexpr int kMaxTaps = 17;  // floor(16) + 1 cells for the widest kernel allowed

// One sample's footprint on one axis: wrapped cell indices and kernel weights.
struct AxisTaps {
  int n = 0;
  int idx[kMaxTaps];
  float w[kMaxTaps];
};

void axis_taps(double u, int g, const ResolvedKernel& k, AxisTaps& t) {
  if (g == 1) {
    t.n = 1;
    t.idx[0] = 0;
    t.w[0] = 1.0f;
    return;
  }
  double half = 0.5 * k.width;
  int j0 = int(std::ceil(u - half));
  int n = std::min(int(std::floor(u + half)) - j0 + 1, kMaxTaps);
  int idx = j0 % g;  // one division per axis, not per tap
  if (idx < 0) idx += g;
  double d = j0 - u;
  for (int i = 0; i < n; ++i, d += 1.0) {
    t.idx[i] = idx;
    t.w[i] = k.lookup(d);
    if (++idx == g) idx = 0;
  }
  t.n = n;
}

// The taps of sample m on all three axes.
struct SampleTaps {
  AxisTaps ax[3];
};

void sample_taps(const Trajectory& t, std::size_t m, const GridMap& map, const ResolvedKernel& k,
                 SampleTaps& s) {
  const float* kk[3] = {t.kx.data(), t.ky.data(), t.kz.data()};
  for (int a = 0; a < 3; ++a) {
    double u = map.size[a] == 1 ? 0.0 : double(kk[a][m]) * map.scale[a] + map.offset[a];
    axis_taps(u, map.size[a], k, s.ax[a]);
  }
}

template <typename T>
void add_sample(const SampleTaps& s, T value, const GridMap& map, T* grid) {
  const std::size_t gx = std::size_t(map.size[0]), gxy = gx * std::size_t(map.size[1]);
  for (int c = 0; c < s.ax[2].n; ++c) {
    T vz = value * s.ax[2].w[c];
    std::size_t oz = std::size_t(s.ax[2].idx[c]) * gxy;
    for (int b = 0; b < s.ax[1].n; ++b) {
      T vy = vz * s.ax[1].w[b];
      T* row = grid + oz + std::size_t(s.ax[1].idx[b]) * gx;
      for (int a = 0; a < s.ax[0].n; ++a) row[s.ax[0].idx[a]] += vy * s.ax[0].w[a];
    }
  }
}

// The slowest axis that is convolved (z for 3D, y for 2D), or -1.
int slab_axis(const GridMap& map) {
  for (int a = 2; a >= 0; --a)
    if (map.size[a] > 1) return a;
  return -1;
}

template <typename T>
void scatter_serial(const Trajectory& t, const T* values, const GridMap& map, const ResolvedKernel& k,
                    T* grid) {
  SampleTaps s;
  for (std::size_t m = 0; m < t.size(); ++m) {
    sample_taps(t, m, map, k, s);
    add_sample(s, values[m], map, grid);
  }
}

// Sample indices grouped by slab (counting sort): bins[start[s] .. start[s+1]).
struct SlabBins {
  std::vector<std::size_t> start, order;
};

SlabBins bin_by_slab(const Trajectory& t, const GridMap& map, const ResolvedKernel& k, int axis,
                     int nslabs) {
  const int g = map.size[axis];
  std::vector<int> slab_of_plane(g);
  for (int s = 0; s < nslabs; ++s)
    for (int p = int(std::size_t(s) * g / nslabs); p < int(std::size_t(s + 1) * g / nslabs); ++p)
      slab_of_plane[p] = s;
  const float* kk = axis == 0 ? t.kx.data() : axis == 1 ? t.ky.data() : t.kz.data();
  std::vector<int> slab(t.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t m = 0; m < std::ptrdiff_t(t.size()); ++m) {
    double u = double(kk[m]) * map.scale[axis] + map.offset[axis];
    int first = int(std::ceil(u - 0.5 * k.width)) % g;
    slab[m] = slab_of_plane[first < 0 ? first + g : first];
  }
  SlabBins b;
  b.start.assign(nslabs + 1, 0);
  for (int s : slab) ++b.start[s + 1];
  for (int s = 0; s < nslabs; ++s) b.start[s + 1] += b.start[s];
  std::vector<std::size_t> fill(b.start.begin(), b.start.end() - 1);
  b.order.resize(t.size());
  for (std::size_t m = 0; m < t.size(); ++m) b.order[fill[slab[m]]++] = m;
  return b;
}

template <typename T>
void scatter_impl(const Trajectory& t, const T* values, const GridMap& map, const ResolvedKernel& k,
                  T* grid) {
  const int axis = slab_axis(map);
  const int threads = omp_get_max_threads();
  // Thickness >= the most planes one sample touches, so same-colour slabs never meet.
  const int thickness = int(std::floor(k.width)) + 1;
  int nslabs = axis < 0 ? 0 : map.size[axis] / thickness;
  nslabs -= nslabs % 2;
  if (threads == 1 || nslabs < 2 || t.size() < 1024) {
    scatter_serial(t, values, map, k, grid);
    return;
  }
  SlabBins bins = bin_by_slab(t, map, k, axis, nslabs);
  for (int colour = 0; colour < 2; ++colour) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int s = colour; s < nslabs; s += 2) {
      SampleTaps st;
      for (std::size_t i = bins.start[s]; i < bins.start[s + 1]; ++i) {
        std::size_t m = bins.order[i];
        sample_taps(t, m, map, k, st);
        add_sample(st, values[m], map, grid);
      }
    }
  }
}

void check_sizes(const Trajectory& t, std::size_t nvalues) {
  if (t.ky.size() != t.size() || t.kz.size() != t.size())
    throw InputError("gridding: trajectory kx, ky, kz differ in length");
  if (nvalues != t.size())
    throw InputError("gridding", "samples", std::to_string(nvalues),
                     "data length differs from the trajectory's " + std::to_string(t.size()));
}

}  // namespace

void scatter(const Trajectory& t, const cfloat* values, const GridMap& map, const ResolvedKernel& k,
             cfloat* grid) {
  scatter_impl(t, values, map, k, grid);
}

void scatter(const Trajectory& t, const float* values, const GridMap& map, const ResolvedKernel& k,
             float* grid) {
  scatter_impl(t, values, map, k, grid);
}

void gather(const Trajectory& t, const float* grid, const GridMap& map, const ResolvedKernel& k,
            float* values) {
  const std::size_t gx = std::size_t(map.size[0]), gxy = gx * std::size_t(map.size[1]);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t m = 0; m < std::ptrdiff_t(t.size()); ++m) {
    SampleTaps s;
    sample_taps(t, std::size_t(m), map, k, s);
    double sum = 0.0;
    for (int c = 0; c < s.ax[2].n; ++c)
      for (int b = 0; b < s.ax[1].n; ++b) {
        const float* row = grid + std::size_t(s.ax[2].idx[c]) * gxy + std::size_t(s.ax[1].idx[b]) * gx;
        double wzy = double(s.ax[2].w[c]) * s.ax[1].w[b];
        for (int a = 0; a < s.ax[0].n; ++a) sum += wzy * s.ax[0].w[a] * row[s.ax[0].idx[a]];
      }
    values[m] = float(sum);
  }
}

std::vector<cfloat> cpu_grid_scatter(const Trajectory& traj, const std::vector<cfloat>& weighted_data,
                                     const ImageGrid& image, const ImageGrid& over,
                                     const GridKernel& kernel) {
  check_sizes(traj, weighted_data.size());
  ResolvedKernel k = resolve_kernel(kernel);
  GridMap map = oversampled_map(image, over);
  std::vector<cfloat> grid(over.voxels(), cfloat(0.0f, 0.0f));
  scatter(traj, weighted_data.data(), map, k, grid.data());
  return grid;
}

std::vector<cfloat> center_window(const std::vector<cfloat>& grid, const ImageGrid& over, const ImageGrid& image) {
  const int ox = over.nx / 2 - image.nx / 2, oy = over.ny / 2 - image.ny / 2, oz = over.nz / 2 - image.nz / 2;
  std::vector<cfloat> out(image.voxels());
  for (int iz = 0; iz < image.nz; ++iz)
    for (int iy = 0; iy < image.ny; ++iy)
      for (int ix = 0; ix < image.nx; ++ix)
        out[ix + std::size_t(image.nx) * (iy + std::size_t(image.ny) * iz)] =
            grid[std::size_t(ix + ox) + std::size_t(over.nx) * (std::size_t(iy + oy) + std::size_t(over.ny) * (iz + oz))];
  return out;
}

namespace {

class CpuGridding : public GriddingKernels {
 public:
  std::vector<cfloat> grid_to_image(const Points& k, const std::vector<cfloat>& weighted_data, const ImageGrid& image,
                                    const ImageGrid& over, const GridKernel& kernel) override {
    if (weighted_data.size() != k.size())
      throw InputError("grid_scatter", "data length", std::to_string(weighted_data.size()),
                       "must equal the trajectory's " + std::to_string(k.size()) + " samples");
    std::vector<cfloat> g = cpu_grid_scatter(k.host(), weighted_data, image, over, kernel);
    centered_dft_host(g, over, true);
    return center_window(g, over, image);
  }
};

}  // namespace

std::unique_ptr<GriddingKernels> make_cpu_gridding(Device&) { return std::make_unique<CpuGridding>(); }

}  // namespace fhd
