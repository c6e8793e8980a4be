#include "cuda/device/host_copy.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace fhd::gpu {

void copy_in_parallel(void* dst, const void* src, std::size_t bytes, int threads) {
  constexpr std::size_t kPiece = std::size_t(256) << 10;
  const std::size_t parts = std::min<std::size_t>(std::size_t(std::max(threads, 1)), (bytes + kPiece - 1) / kPiece);
  if (parts <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const std::size_t step = (bytes + parts - 1) / parts;
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
#pragma omp parallel for num_threads(int(parts)) schedule(static, 1)
  for (std::ptrdiff_t p = 0; p < std::ptrdiff_t(parts); ++p) {
    const std::size_t off = std::size_t(p) * step;
    if (off < bytes) std::memcpy(to + off, from + off, std::min(step, bytes - off));
  }
}

int upload_threads() {
  static const int n = [] {
    if (const char* v = std::getenv("FHD_UPLOAD_THREADS")) {
      const int t = std::atoi(v);
      if (t >= 1 && t <= 64) return t;
    }
    return std::clamp(omp_get_max_threads(), 1, 8);
  }();
  return n;
}

}  // namespace fhd::gpu
