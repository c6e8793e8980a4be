#pragma once
// Index helpers on an ImageGrid (x fastest), shared by the coil map
// estimators (coil_maps.cpp, espirit.cpp).
#include <cstddef>

#include "core/types.hpp"

namespace fhd {
namespace grid_index {

inline std::size_t linear(int x, int y, int z, const ImageGrid& g) { return x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z); }

template <class F>
void for_each_index(const ImageGrid& g, F f) {
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) f(x, y, z);
}

}  // namespace grid_index
}  // namespace fhd
