#pragma once
// The gridding baseline (docs/conventions.md "Gridding baseline"): density-weighted samples
// are spread onto an oversampled Cartesian grid, inverse FFT, crop,
// deapodize. docs/gridding.md derives the scaling.
#include <vector>

#include "recon/gridding/gridding_kernels.hpp"

namespace fhd {

// A gridding kernel with its defaults resolved: trilinear always has width 2;
// a Kaiser-Bessel beta of 0 becomes Beatty's value for (width, oversampling).
struct ResolvedKernel {
  bool kb = true;
  double width = 4.0;
  double beta = 0.0;
  double value(double d) const;        // kernel at distance d (cells)
  double transform(double nu) const;   // its Fourier transform at nu (cycles/cell)
  // value() tabulated at kTablePerCell points per cell and interpolated
  // linearly (relative error below 1e-6 for KB up to beta 20): the scatter's
  // hot path, where evaluating I0 took 60% of the time.
  static constexpr int kTablePerCell = 1024;
  std::vector<float> table;
  float lookup(double d) const {
    double x = (d < 0 ? -d : d) * kTablePerCell;
    std::size_t i = std::size_t(x);
    if (i + 1 >= table.size()) return 0.0f;
    float f = float(x - double(i));
    return table[i] + f * (table[i + 1] - table[i]);
  }
};
// Throws InputError for an oversampling below 1 or a width outside [1, 16].
ResolvedKernel resolve_kernel(const GridKernel& k);

// Where samples land on a grid, per axis: u = k * scale + offset (cells).
// An axis of size 1 is not convolved: every sample lands on its one plane.
struct GridMap {
  int size[3] = {1, 1, 1};
  double scale[3] = {1, 1, 1};
  double offset[3] = {0, 0, 0};
};
// The gridding scatter's map: scale = over.n / image.n, offset = over.n / 2.
GridMap oversampled_map(const ImageGrid& image, const ImageGrid& over);

// The oversampled grid for an image: round(sigma * n) made even per axis, 1 stays 1.
ImageGrid oversampled_grid(const ImageGrid& image, double sigma);

// grid[j] += sum_m values[m] * prod_axes C(j - u_m), periodic wrap. The grid
// (x fastest) must be zeroed by the caller or hold a previous sum.
void scatter(const Trajectory& t, const cfloat* values, const GridMap& map, const ResolvedKernel& k,
             cfloat* grid);
void scatter(const Trajectory& t, const float* values, const GridMap& map, const ResolvedKernel& k,
             float* grid);
// The adjoint: values[m] = sum_j grid[j] * prod_axes C(j - u_m).
void gather(const Trajectory& t, const float* grid, const GridMap& map, const ResolvedKernel& k,
            float* values);

// Deapodization factor at voxel i of an axis with n voxels on a grid of g cells:
// the kernel's transform at nu = (i - n/2) / g (1 for an axis with n = 1).
double deapodization(const ResolvedKernel& k, int i, int n, int g);

// Gridding reconstruction: w_m D_m onto the oversampled grid (be.grid_scatter
// on the uploaded points k), be.centered_idft, crop the central N, divide by
// the kernel's transform and by Nx*Ny*Nz. With dcf in (cycles/FOV)^d per sample
// (recon/gridding/dcf.hpp) and D_m = S(k_m) Nx Ny Nz, the result approximates the
// phantom at voxel centers. An empty dcf means unit weights.
std::vector<cfloat> gridding_recon(Device& dev, const Points& k, const std::vector<cfloat>& data,
                                   const std::vector<float>& dcf, const ImageGrid& grid, const GridKernel& kernel);
// The same for a trajectory not yet uploaded (one-off calls; a Plan keeps its points).
std::vector<cfloat> gridding_recon(Device& dev, const Trajectory& t, const std::vector<cfloat>& data,
                                   const std::vector<float>& dcf, const ImageGrid& grid, const GridKernel& kernel);

}  // namespace fhd
