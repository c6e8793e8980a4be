#include "app/memory_check.hpp"

#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include "recon/error.hpp"

namespace fhd::app {

std::size_t estimated_host_bytes(const ImageGrid& grid, std::size_t samples) {
  const std::size_t c = sizeof(cfloat);
  std::size_t doubled = grid.doubled().voxels();
  // Q, its spectrum and the FFT work buffer on the doubled grid; about eight
  // image-sized vectors (FhD, CG's x r p Ap, outputs); the 2x-oversampled
  // gridding grid; k (3 floats), data, Mu and weights per sample.
  return 3 * doubled * c + 8 * grid.voxels() * c + doubled * c + samples * (3 * 4 + 3 * c);
}

void check_host_memory(const ImageGrid& grid, std::size_t samples) {
  double need = double(estimated_host_bytes(grid, samples));
  double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (have > 0 && need > have)
    throw InputError(fmt::format("--matrix = {}x{}x{} with {} samples: needs about {:.1f} GiB of memory, "
                                 "this machine has {:.1f} GiB",
                                 grid.nx, grid.ny, grid.nz, samples, need / (1 << 30), have / (1 << 30)));
}

}  // namespace fhd::app
