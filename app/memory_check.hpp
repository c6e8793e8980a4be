#pragma once
#include <cstddef>

#include "recon/types.hpp"

namespace fhd::app {

// Host memory a reconstruction of this size needs (bytes): Q and its spectrum on
// the doubled grid, CG's vectors, the oversampled gridding grid, the samples.
std::size_t estimated_host_bytes(const ImageGrid& grid, std::size_t samples);

// Throws InputError naming --matrix when the estimate exceeds the machine's
// physical memory, before any work is done.
void check_host_memory(const ImageGrid& grid, std::size_t samples);

}  // namespace fhd::app
