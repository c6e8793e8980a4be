#pragma once
// The exact gather split across the devices of a plan (--gpus, docs/gpu-backend.md
// "Several GPUs"): the image's last axis (z in 3D, y in 2D) in slabs, one per
// device, each with the whole trajectory (no reduction: every voxel has one
// owner), computed side by side; Q's Hermitian half box likewise, its faces
// and the assembly on the first device. A slab of an axis too short for every
// device leaves the extra devices idle.
#include <vector>

#include "recon/ops/linop.hpp"

namespace fhd {

class Plan;

// F^H (samples -> image on the plan's first device) as a stack across devices.
OpPtr partitioned_adjoint(Plan& plan);
// Q with weights w (empty: 1) from slabs across the plan's devices.
VecPtr partitioned_q(Plan& plan, const std::vector<float>& w);

// Slices [a0, a0 + h) of `len` for part i of `parts`, in proportion (the first
// len % parts get one more): every slice once, none empty while len >= parts.
std::pair<int, int> slab(int len, int parts, int i);

}  // namespace fhd
