#pragma once
// Launch parameters of the cmpFhD kernels. Plain ints (no CUDA types) so the
// tuner's profile code, the benchmarks' reports and the CLI share one type.
namespace fhd {

// 0 means "the variant's heuristic default" (or a tuned profile's value when
// the caller passes one).
struct LaunchConfig {
  int threads = 0;  // threads per block
  int unroll = 0;   // unroll factor of the sample loop
  int coarsen = 0;  // voxels per thread
  int tile = 0;     // samples per shared/constant-memory tile or GEMM chunk
  bool operator==(const LaunchConfig& o) const {
    return threads == o.threads && unroll == o.unroll && coarsen == o.coarsen && tile == o.tile;
  }
};

}  // namespace fhd
