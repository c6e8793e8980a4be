// The CPU NUFFT's inner loops for the baseline target, and the choice between
// instruction sets (see nufft_spread.hpp).
#include "recon/nufft/nufft_spread.hpp"

#include <cstring>
#include <stdexcept>

namespace fhd::nufft::detail {
// The 8-float vectors passed between the (internal, inlined) helpers would
// use another ABI with AVX: nothing outside this file sees them.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace generic {
#include "recon/nufft/nufft_spread_impl.hpp"
const SpreadKernels kernels{"generic", spread, interp, locate};
}  // namespace generic

const SpreadKernels* generic_kernels() { return &generic::kernels; }

namespace {

bool cpu_has_avx2() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace

const SpreadKernels& spread_kernels(const std::string& simd) {
  const SpreadKernels* avx2 = cpu_has_avx2() ? avx2_kernels() : nullptr;
  if (simd == "generic") return *generic_kernels();
  if (simd == "avx2") {
    if (!avx2) throw std::invalid_argument("nufft: this build or CPU has no AVX2 + FMA kernels");
    return *avx2;
  }
  if (simd != "auto") throw std::invalid_argument("nufft: unknown SIMD variant '" + simd + "'");
  return avx2 ? *avx2 : *generic_kernels();
}

}  // namespace fhd::nufft::detail
