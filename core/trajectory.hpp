#pragma once
// A k-space trajectory: sample positions in cycles/FOV (docs/conventions.md). Full
// Nyquist coverage on an axis of N voxels is k in [-N/2, N/2). Every layer uses
// this type; phantom/ generates trajectories, io/ reads and writes them.
#include <cstddef>
#include <vector>

namespace fhd {

// Structure of arrays: the kernels read kx, ky, kz as separate streams.
struct Trajectory {
  std::vector<float> kx, ky, kz;
  std::size_t size() const { return kx.size(); }
  void resize(std::size_t m) { kx.resize(m); ky.resize(m); kz.resize(m); }
};

}  // namespace fhd
