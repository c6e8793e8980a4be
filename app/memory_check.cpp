#include "app/memory_check.hpp"

#include <spdlog/fmt/fmt.h>

#include "io/scan_checks.hpp"
#include "core/error.hpp"

namespace fhd::app {

std::size_t estimated_host_bytes(const ImageGrid& grid, std::size_t samples, std::size_t coils) {
  const std::size_t c = sizeof(cfloat);
  std::size_t doubled = grid.doubled().voxels();
  // Q, its spectrum and the FFT work buffer on the doubled grid; about eight
  // image-sized vectors (FhD, CG's x r p Ap, outputs); the 2x-oversampled
  // gridding grid; k (3 floats), Mu and weights per sample, the data per coil.
  return 3 * doubled * c + 8 * grid.voxels() * c + doubled * c + samples * (3 * 4 + 2 * c + coils * c);
}

void check_host_memory(const ImageGrid& grid, std::size_t samples, std::size_t coils, const std::string& source) {
  const double need = double(estimated_host_bytes(grid, samples, coils));
  const double have = double(available_host_bytes());
  if (have > 0 && need > have)
    throw InputError(fmt::format("{}: matrix = {}x{}x{} with {} samples x {} coil(s): needs about {:.1f} GiB of "
                                 "memory, {:.1f} GiB available (MemAvailable or FHDRECON_MEMORY_LIMIT)",
                                 source, grid.nx, grid.ny, grid.nz, samples, coils, need / (1 << 30),
                                 have / (1 << 30)));
}

}  // namespace fhd::app
