#include "app/memory_check.hpp"

#include <spdlog/fmt/fmt.h>

#include "io/scan_checks.hpp"
#include "core/error.hpp"

namespace fhd::app {

double estimated_host_bytes(const ImageGrid& grid, std::size_t samples, std::size_t coils, std::size_t noise_samples) {
  // In double: a claim of 10^6 coils x 2^32 samples must not wrap to a small size_t.
  const double c = sizeof(cfloat), doubled = double(grid.doubled().voxels()), voxels = double(grid.voxels());
  const double m = double(samples), n = double(coils);
  // Q, its spectrum and the FFT work buffer on the doubled grid; about eight
  // image-sized vectors (FhD, CG's x r p Ap, outputs); the 2x-oversampled
  // gridding grid; k (3 floats), Mu and weights per sample, the data per coil;
  // with several coils one map (or image) per coil, and the noise samples.
  return 3 * doubled * c + 8 * voxels * c + doubled * c + m * (3 * 4 + 2 * c + n * c) +
         (coils > 1 ? n * voxels * c : 0) + n * double(noise_samples) * c;
}

void check_host_memory(const ImageGrid& grid, std::size_t samples, std::size_t coils, const std::string& source,
                       std::size_t noise_samples) {
  const double need = estimated_host_bytes(grid, samples, coils, noise_samples);
  const double have = double(available_host_bytes());
  if (have > 0 && need > have)
    throw InputError(fmt::format("{}: matrix = {}x{}x{} with {} samples x {} coil(s){}: needs about {:.1f} GiB of "
                                 "memory, {:.1f} GiB available (MemAvailable or FHDRECON_MEMORY_LIMIT)",
                                 source, grid.nx, grid.ny, grid.nz, samples, coils,
                                 noise_samples ? fmt::format(" and {} noise samples per coil", noise_samples) : "",
                                 need / (1 << 30), have / (1 << 30)));
}

}  // namespace fhd::app
