// Reference image and analytic k-space data on the conventions' grid.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "phantom/phantom.hpp"

namespace fhd {
namespace {

void check_axis(const char* field, int n) {
  if (n < 1) throw std::invalid_argument(std::string(field) + " = " + std::to_string(n) + ": must be >= 1");
}

}  // namespace

std::vector<float> voxel_image(const Phantom& p, int nx, int ny, int nz) {
  check_axis("nx", nx);
  check_axis("ny", ny);
  check_axis("nz", nz);
  std::vector<float> img(std::size_t(nx) * ny * nz);
#pragma omp parallel for collapse(2) schedule(static)
  for (int iz = 0; iz < nz; ++iz)
    for (int iy = 0; iy < ny; ++iy)
      for (int ix = 0; ix < nx; ++ix)
        img[ix + std::size_t(nx) * (iy + std::size_t(ny) * iz)] =
            float(p.image(voxel_center(ix, nx), voxel_center(iy, ny), voxel_center(iz, nz)));
  return img;
}

void check_synthesis_grid(const Phantom& p, int nx, int ny, int nz) {
  check_axis("nx", nx);
  check_axis("ny", ny);
  check_axis("nz", nz);
  // A 2D phantom's data are a 2D integral: only a single slice matches them.
  if (p.dims() == 2 && nz != 1)
    throw std::invalid_argument("nz = " + std::to_string(nz) + ": phantom " + p.name() +
                                " is 2D and needs nz = 1");
  // A 3D phantom on one slice would give the projection along z, not the
  // slice z = 0 that voxel_image (the reference) holds.
  if (p.dims() == 3 && nz == 1)
    throw std::invalid_argument("nz = 1: phantom " + p.name() + " is 3D and needs nz > 1");
}

std::vector<std::complex<float>> synthesize(const Phantom& p, const Trajectory& t, int nx, int ny,
                                            int nz) {
  check_synthesis_grid(p, nx, ny, nz);
  const double scale = double(nx) * ny * nz;
  const std::int64_t m = std::int64_t(t.size());
  std::vector<std::complex<float>> data(t.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i)
    data[i] = std::complex<float>(p.kspace(t.kx[i], t.ky[i], t.kz[i]) * scale);
  return data;
}

}  // namespace fhd
