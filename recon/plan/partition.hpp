#pragma once
// The exact gather split across the devices of a plan (--gpus, docs/gpu-backend.md
// "Several GPUs"): the image's last axis (z in 3D, y in 2D) in slabs, one per
// device, each with the whole trajectory (no reduction: every voxel has one
// owner), computed side by side; Q's Hermitian half box likewise, its faces
// and the assembly on the first device, whose slab is smaller by the faces'
// share so that no device waits for it. A slab of an axis too short for every
// device leaves the extra devices idle, and so does a problem too small to
// gain (SplitRule). The NUFFT's type 1 of one coil is split by sample chunks
// (a sum on the first device), SENSE by coils (recon/coils/sense.hpp).
#include <cstddef>
#include <memory>
#include <vector>

#include "recon/ops/linop.hpp"

namespace fhd {

class Plan;

// When a split across devices gains (docs/choices.md, "Several GPUs: when to
// split"). A part that is too small loses to the threads, the copies and the
// reduction; always() splits everything (tests).
struct SplitRule {
  // The exact gather: each device gets at least this many sample-voxel pairs
  // (5e10 are about 10 ms of an H100's cmpFhD kernel).
  double min_pairs_per_device = 5e10;
  // The NUFFT's type 1 by sample chunks: at least this many samples and at
  // least as many samples as voxels (each device pays the whole FFT).
  std::size_t min_nufft_samples = std::size_t(1) << 22;
  // SENSE by coils: grids of at least this many voxels (128^3; each coil's
  // normal is one FFT pair of the doubled grid, the reduction one image).
  std::size_t min_sense_voxels = std::size_t(1) << 21;
  static SplitRule always() { return {0.0, 0, 0}; }
};

// How many of the plan's devices the exact gather's FhD and Q use.
std::size_t gather_parts(const Plan& plan, double pairs_per_slice, int slices);
// Whether the plan's NUFFT type 1 is split by sample chunks.
bool splits_nufft(const Plan& plan);
// The plan's trajectory in contiguous sample chunks, one per device (the
// first m % n one sample longer), each a plan of its own on its device (F
// alone: Phi 1, no Q), made side by side. Plan::chunk_plans keeps them.
std::vector<std::shared_ptr<Plan>> sample_chunk_plans(Plan& plan);
// F restricted to sample chunks, one per device, stacked across the plan's
// devices: its adjoint (the NUFFT's type 1) sums the chunks' images on the
// first device.
OpPtr partitioned_nufft(Plan& plan);

// F^H (samples -> image on the plan's first device) as a stack across
// devices; null where the SplitRule keeps it on one device.
OpPtr partitioned_adjoint(Plan& plan);
// Q with weights w (empty: 1) from slabs across the plan's devices; null
// where the SplitRule keeps it on one device.
VecPtr partitioned_q(Plan& plan, const std::vector<float>& w);

// Slices [a0, a0 + h) of `len` for part i of `parts`, in proportion (the first
// len % parts get one more): every slice once, none empty while len >= parts.
std::pair<int, int> slab(int len, int parts, int i);

}  // namespace fhd
