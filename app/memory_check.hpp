#pragma once
#include <cstddef>
#include <string>

#include "recon/problem/scan.hpp"

namespace fhd::app {

// Host memory a reconstruction of this size needs (bytes): Q and its spectrum on
// the doubled grid, CG's vectors, the oversampled gridding grid, the samples
// (k-space data once per coil), one map per coil when there are several, and
// the noise samples of every coil.
double estimated_host_bytes(const ImageGrid& grid, std::size_t samples, std::size_t coils = 1,
                            std::size_t noise_samples = 0);

// Throws InputError naming `source` (a file, or the options that claim the
// sizes, "--matrix 64 --coils 1024 ...", for a phantom) when the estimate
// exceeds the memory available now (MemAvailable, or FHDRECON_MEMORY_LIMIT:
// io/scan_checks.hpp), before any work is done. Readers call it through their
// SizeCheck before they read the samples.
void check_host_memory(const ImageGrid& grid, std::size_t samples, std::size_t coils, const std::string& source,
                       std::size_t noise_samples = 0);

}  // namespace fhd::app
