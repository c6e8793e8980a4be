#pragma once
#include <cstddef>
#include <string>

#include "recon/problem/scan.hpp"

namespace fhd::app {

// Host memory a reconstruction of this size needs (bytes): Q and its spectrum on
// the doubled grid, CG's vectors, the oversampled gridding grid, the samples
// (k-space data once per coil).
std::size_t estimated_host_bytes(const ImageGrid& grid, std::size_t samples, std::size_t coils = 1);

// Throws InputError naming `source` (a file, or "--matrix" for a phantom) when
// the estimate exceeds the memory available now (MemAvailable, or
// FHDRECON_MEMORY_LIMIT: io/scan_checks.hpp), before any work is done. Readers call
// it through their SizeCheck before they read the samples.
void check_host_memory(const ImageGrid& grid, std::size_t samples, std::size_t coils, const std::string& source);

}  // namespace fhd::app
