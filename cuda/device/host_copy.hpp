#pragma once
// Host-side copies into the pinned staging chunks (cuda/device/staged_upload.hpp),
// split over a few OpenMP threads: one thread copied pageable memory at about
// 7 GB/s (a 134 MB cached Q uploaded in 20 ms on an H200 host), a fraction of
// what the copy engine moves (docs/performance.md).
#include <cstddef>

namespace fhd::gpu {

// memcpy(dst, src, bytes) by up to `threads` threads, each a piece of at least 256 KB.
void copy_in_parallel(void* dst, const void* src, std::size_t bytes, int threads);

// Threads for staging copies: FHD_UPLOAD_THREADS when set to 1-64 (1: one
// thread, as before, a diagnostic), else the OpenMP threads up to 8.
int upload_threads();

}  // namespace fhd::gpu
