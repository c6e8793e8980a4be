// The CPU NUFFT's inner loops compiled for AVX2 + FMA (see nufft_spread.hpp);
// spread_kernels() calls them only on a CPU that has both. Every standard
// header comes before the target pragma, so only this file's own functions
// (all in an unnamed namespace) get the wider instruction set.
#include "recon/nufft/nufft_spread.hpp"

#include <cstring>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define FHD_HAVE_AVX2_SPREAD 1
#endif

namespace fhd::nufft::detail {

#ifdef FHD_HAVE_AVX2_SPREAD
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include "recon/nufft/nufft_spread_impl.hpp"
const SpreadKernels kernels{"avx2", spread, interp, locate};
}  // namespace avx2
#pragma GCC pop_options

const SpreadKernels* avx2_kernels() { return &avx2::kernels; }
#else
const SpreadKernels* avx2_kernels() { return nullptr; }
#endif

}  // namespace fhd::nufft::detail
