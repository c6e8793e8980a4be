// Gridding reconstruction: scatter, inverse DFT, crop, deapodize, scale.
#include "recon/gridding/gridding.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "recon/gridding/kaiser_bessel.hpp"

namespace fhd {

double ResolvedKernel::value(double d) const { return kb ? kb_value(d, width, beta) : tri_value(d); }

double ResolvedKernel::transform(double nu) const {
  return kb ? kb_transform(nu, width, beta) : tri_transform(nu);
}

namespace {
void fill_table(ResolvedKernel& r) {
  // One entry past the half width so lookup() can interpolate up to it.
  std::size_t n = std::size_t(std::ceil(0.5 * r.width * ResolvedKernel::kTablePerCell)) + 2;
  r.table.resize(n);
  for (std::size_t i = 0; i < n; ++i) r.table[i] = float(r.value(double(i) / ResolvedKernel::kTablePerCell));
}
}  // namespace

ResolvedKernel resolve_kernel(const GridKernel& k) {
  if (!(k.oversampling >= 1.0))
    throw InputError("gridding", "oversampling", std::to_string(k.oversampling), "must be >= 1");
  ResolvedKernel r;
  if (k.type == GridKernel::Type::Trilinear) {
    r.kb = false;
    r.width = 2.0;
    fill_table(r);
    return r;
  }
  if (!(k.width >= 1.0 && k.width <= 16.0))
    throw InputError("gridding", "kernel width", std::to_string(k.width), "must be in [1, 16] cells");
  r.width = k.width;
  r.beta = k.beta != 0.0 ? k.beta : kb_beatty_beta(k.width, k.oversampling);
  fill_table(r);
  return r;
}

GridMap oversampled_map(const ImageGrid& image, const ImageGrid& over) {
  const int n[3] = {image.nx, image.ny, image.nz};
  const int g[3] = {over.nx, over.ny, over.nz};
  GridMap map;
  for (int a = 0; a < 3; ++a) {
    if (n[a] < 1 || g[a] < 1 || (n[a] == 1) != (g[a] == 1))
      throw InputError("gridding", "grid axis " + std::to_string(a),
                       std::to_string(n[a]) + " -> " + std::to_string(g[a]),
                       "an image axis of 1 needs a grid axis of 1, and only then");
    map.size[a] = g[a];
    map.scale[a] = double(g[a]) / n[a];
    map.offset[a] = double(g[a] / 2);
  }
  return map;
}

ImageGrid oversampled_grid(const ImageGrid& image, double sigma) {
  auto axis = [sigma](int n) {
    if (n == 1) return 1;
    int g = int(std::lround(sigma * n));
    return g + (g % 2);
  };
  return {axis(image.nx), axis(image.ny), axis(image.nz)};
}

double deapodization(const ResolvedKernel& k, int i, int n, int g) {
  if (n == 1) return 1.0;
  return k.transform(double(i - n / 2) / g);
}

namespace {

// Deapodizes the image window and divides by the voxel count (docs/gridding.md,
// "Scaling"). The deapodization depends on the oversampled grid's size.
std::vector<cfloat> deapodize(std::vector<cfloat> img, const ImageGrid& image, const ImageGrid& over,
                              const ResolvedKernel& k) {
  const int n[3] = {image.nx, image.ny, image.nz};
  const int g[3] = {over.nx, over.ny, over.nz};
  std::vector<double> inv[3];
  for (int a = 0; a < 3; ++a) {
    inv[a].resize(n[a]);
    for (int i = 0; i < n[a]; ++i) inv[a][i] = 1.0 / deapodization(k, i, n[a], g[a]);
  }
  const double scale = 1.0 / double(image.voxels());
  for (int iz = 0; iz < n[2]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[0]; ++ix)
        img[ix + std::size_t(n[0]) * (iy + std::size_t(n[1]) * iz)] *= float(scale * inv[0][ix] * inv[1][iy] * inv[2][iz]);
  return img;
}

}  // namespace

std::vector<cfloat> gridding_recon(Device& dev, const Points& pts, const std::vector<cfloat>& data,
                                   const std::vector<float>& dcf, const ImageGrid& grid, const GridKernel& k) {
  if (data.size() != pts.size())
    throw InputError("gridding", "samples", std::to_string(data.size()),
                     "data length differs from the trajectory's " + std::to_string(pts.size()));
  if (!dcf.empty() && dcf.size() != pts.size())
    throw InputError("gridding", "dcf", std::to_string(dcf.size()),
                     "length differs from the trajectory's " + std::to_string(pts.size()));
  ResolvedKernel rk = resolve_kernel(k);
  std::vector<cfloat> weighted(data);
  if (!dcf.empty())
    for (std::size_t m = 0; m < weighted.size(); ++m) weighted[m] *= dcf[m];
  ImageGrid over = oversampled_grid(grid, k.oversampling);
  return deapodize(dev.kernels<GriddingKernels>().grid_to_image(pts, weighted, grid, over, k), grid, over, rk);
}

std::vector<cfloat> gridding_recon(Device& dev, const Trajectory& t, const std::vector<cfloat>& data,
                                   const std::vector<float>& dcf, const ImageGrid& grid, const GridKernel& k) {
  return gridding_recon(dev, *dev.upload_points(t), data, dcf, grid, k);
}

}  // namespace fhd
