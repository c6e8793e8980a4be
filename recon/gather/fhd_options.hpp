#pragma once
// How FhD and Q are computed: the exact gather (every sample-voxel pair, the
// book's method) or the NUFFT (spread to an oversampled grid, FFT, deapodize;
// accurate to nufft_tol relative).
#include <functional>
#include <string>

#include "core/types.hpp"

namespace fhd {

enum class FhdMethod { Exact, Nufft };

struct FhdOptions {
  TrigMode trig = TrigMode::Single;  // exact kernels only
  // Kernel variant by name; "" = the device's default (its fastest accurate one).
  // CPU: "direct" (per-pair sum; with trig=double it is the float64 reference)
  //      or "separable" (per-axis factors, complex GEMM through BLAS).
  // GPU: a name from the cmpFhD kernel table (cuda/gather/fhd_kernels.hpp).
  std::string kernel;
  // Optional: called on the calling thread between chunks with the fraction done
  // (0..1), so the CLI can show progress on long FhD/Q runs. May be empty.
  std::function<void(double)> progress;
  // Last, so aggregate initializations {trig, kernel} elsewhere keep their meaning.
  FhdMethod method = FhdMethod::Exact;
  double nufft_tol = 1e-6;  // relative tolerance of the NUFFT (method Nufft only)
};

}  // namespace fhd
