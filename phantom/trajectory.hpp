#pragma once
// Trajectory generators (radial, stack-of-*, spirals, random) in cycles/FOV
// (docs/conventions.md): full Nyquist coverage on an axis of N voxels is k in
// [-N/2, N/2). The Trajectory type itself is core's (core/trajectory.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/trajectory.hpp"

namespace fhd {


struct TrajectorySpec {
  // radial3d (kooshball), stack-of-stars, stack-of-spirals, radial2d, spiral2d, random
  std::string kind = "radial3d";
  int nx = 64, ny = 64, nz = 64;  // image matrix: sets the band |k| <= N/2
  int readout = 0;                // samples per readout; 0 = default (2*nx for radial)
  int spokes = 0;                 // spokes or spiral interleaves per partition; 0 = default
  std::size_t total = 0;          // if > 0 and spokes == 0: choose spokes for about this many samples
                                  // (radial2d, stack-of-stars: at least 2 spokes, so y is encoded)
  std::uint64_t seed = 1;         // for random trajectories
  bool golden = false;            // 2D radial/spiral angles: golden-angle order instead of uniform
};

// The sizes make_trajectory resolves from a spec (defaults and `total` applied).
// Samples are stored readout fastest, then spoke/interleave, then partition:
// index = j + readout * (s + spokes * p). One readout = one ISMRMRD acquisition.
struct TrajectoryLayout {
  int readout = 0;     // samples per spoke/interleave
  int spokes = 0;      // spokes or interleaves per partition
  int partitions = 1;  // kz partitions (stack-of-*), else 1
  std::size_t samples() const { return std::size_t(readout) * spokes * partitions; }
};

// Validates the spec (same errors as make_trajectory) and resolves its sizes.
TrajectoryLayout trajectory_layout(const TrajectorySpec& spec);

// Throws std::invalid_argument naming the field for an unknown kind or bad size.
Trajectory make_trajectory(const TrajectorySpec& spec);

// Names accepted by TrajectorySpec::kind, for help texts and validation.
const std::vector<std::string>& trajectory_kinds();

}  // namespace fhd
