#include "recon/gather/direct_sum.hpp"

#include <cmath>
#include <stdexcept>

namespace fhd {
namespace {

constexpr double kTwoPi = 6.283185307179586476925;

// Coordinates of the points of `out` (len per axis) for an image of `img` voxels.
struct Point {
  double x, y, z;
};

Point point_at(std::size_t index, const ImageGrid& out, const ImageGrid& img) {
  const int ix = int(index % out.nx);
  const int iy = int((index / out.nx) % out.ny);
  const int iz = int(index / (std::size_t(out.nx) * out.ny));
  return {axis_coord(ix, out.nx, img.nx), axis_coord(iy, out.ny, img.ny),
          axis_coord(iz, out.nz, img.nz)};
}

// exp(+i 2 pi k_m . p), the phase reduced to [-1/2, 1/2] turn before sin/cos.
cdouble turn(const Trajectory& traj, std::size_t m, const Point& p) {
  double t = double(traj.kx[m]) * p.x + double(traj.ky[m]) * p.y + double(traj.kz[m]) * p.z;
  t = kTwoPi * (t - std::rint(t));
  return {std::cos(t), std::sin(t)};
}

// out_j = sum_m weight_m exp(+i 2 pi k_m . y_j) over the points `at` of `out`
// (all of them when `at` is null).
std::vector<cdouble> gather(const Trajectory& traj, const std::vector<cdouble>& weight, const ImageGrid& out,
                            const ImageGrid& img, const std::vector<std::size_t>* at = nullptr) {
  std::vector<cdouble> result(at ? at->size() : out.voxels());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::ptrdiff_t j = 0; j < std::ptrdiff_t(result.size()); ++j) {
    const Point p = point_at(at ? (*at)[std::size_t(j)] : std::size_t(j), out, img);
    cdouble sum = 0.0;
    for (std::size_t m = 0; m < traj.size(); ++m) sum += weight[m] * turn(traj, m, p);
    result[std::size_t(j)] = sum;
  }
  return result;
}

void check_length(std::size_t got, std::size_t want, const char* what) {
  if (got != want) throw std::invalid_argument(std::string(what) + ": length does not match the trajectory");
}

}  // namespace

std::vector<cdouble> fhd_reference(const Trajectory& traj, const std::vector<cfloat>& mu,
                                   const ImageGrid& grid) {
  check_length(mu.size(), traj.size(), "fhd_reference mu");
  return gather(traj, std::vector<cdouble>(mu.begin(), mu.end()), grid, grid);
}

std::vector<cdouble> fhd_reference(const Trajectory& traj, const std::vector<cfloat>& mu, const ImageGrid& grid,
                                   const std::vector<std::size_t>& at) {
  check_length(mu.size(), traj.size(), "fhd_reference mu");
  for (std::size_t v : at)
    if (v >= grid.voxels()) throw std::invalid_argument("fhd_reference: voxel index outside the grid");
  return gather(traj, std::vector<cdouble>(mu.begin(), mu.end()), grid, grid, &at);
}

std::vector<cdouble> q_reference(const Trajectory& traj, const std::vector<float>& w,
                                 const ImageGrid& grid) {
  std::vector<cdouble> weight(traj.size(), 1.0);
  if (!w.empty()) {
    check_length(w.size(), traj.size(), "q_reference w");
    for (std::size_t m = 0; m < w.size(); ++m) weight[m] = w[m];
  }
  return gather(traj, weight, grid.doubled(), grid);
}

std::vector<cdouble> q_reference(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid,
                                 const std::vector<std::size_t>& at) {
  const ImageGrid dbl = grid.doubled();
  for (std::size_t v : at)
    if (v >= dbl.voxels()) throw std::invalid_argument("q_reference: index outside the doubled grid");
  std::vector<cdouble> weight(traj.size(), 1.0);
  if (!w.empty()) {
    check_length(w.size(), traj.size(), "q_reference w");
    for (std::size_t m = 0; m < w.size(); ++m) weight[m] = w[m];
  }
  return gather(traj, weight, dbl, grid, &at);
}

std::vector<cdouble> forward_reference(const Trajectory& traj, const std::vector<cfloat>& rho,
                                       const ImageGrid& grid, const std::vector<std::size_t>& at) {
  check_length(rho.size(), grid.voxels(), "forward_reference rho (vs grid)");
  for (std::size_t m : at)
    if (m >= traj.size()) throw std::invalid_argument("forward_reference: sample index outside the trajectory");
  std::vector<cdouble> data(at.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (std::ptrdiff_t j = 0; j < std::ptrdiff_t(at.size()); ++j) {
    const std::size_t m = at[std::size_t(j)];
    // exp(-i 2 pi k x) per axis, each phase reduced to one turn.
    auto axis = [&](int n, auto coord_of) {
      std::vector<cdouble> e(n);
      for (int i = 0; i < n; ++i) e[i] = std::conj(turn(traj, m, coord_of(axis_coord(i, n, n))));
      return e;
    };
    const auto ex = axis(grid.nx, [](double c) { return Point{c, 0, 0}; });
    const auto ey = axis(grid.ny, [](double c) { return Point{0, c, 0}; });
    const auto ez = axis(grid.nz, [](double c) { return Point{0, 0, c}; });
    cdouble sum = 0.0;
    for (int iz = 0; iz < grid.nz; ++iz)
      for (int iy = 0; iy < grid.ny; ++iy) {
        const cfloat* row = rho.data() + std::size_t(grid.nx) * (iy + std::size_t(grid.ny) * iz);
        cdouble r = 0.0;
        for (int ix = 0; ix < grid.nx; ++ix) r += ex[ix] * cdouble(row[ix]);
        sum += r * ey[iy] * ez[iz];
      }
    data[std::size_t(j)] = sum;
  }
  return data;
}

std::vector<cdouble> forward_reference(const Trajectory& traj, const std::vector<cfloat>& rho,
                                       const ImageGrid& grid) {
  check_length(rho.size(), grid.voxels(), "forward_reference rho (vs grid)");
  std::vector<cdouble> data(traj.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::ptrdiff_t m = 0; m < std::ptrdiff_t(data.size()); ++m) {
    cdouble sum = 0.0;
    for (std::size_t n = 0; n < rho.size(); ++n)
      sum += cdouble(rho[n]) * std::conj(turn(traj, std::size_t(m), point_at(n, grid, grid)));
    data[std::size_t(m)] = sum;
  }
  return data;
}

}  // namespace fhd
