#include "recon/backend.hpp"

namespace fhd {

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

std::vector<cfloat> Backend::grid_to_image(const std::vector<cfloat>& weighted_data, const ImageGrid& image,
                                           const ImageGrid& over, const GridKernel& kernel) {
  std::vector<cfloat> g = grid_scatter(weighted_data, image, over, kernel);
  centered_idft(g, over);
  return center_window(g, over, image);
}

}  // namespace fhd
