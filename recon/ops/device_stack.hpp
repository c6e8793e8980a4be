#pragma once
// Operators whose parts live on different devices (several GPUs of a host):
// a partition is a stack of operators, one per device. The input is copied to
// each part's device, each part runs there on its own host thread, and the
// outputs come back into the first device's vector (slices of it, or summed).
#include <functional>
#include <vector>

#include "recon/ops/linop.hpp"

namespace fhd {

// [A_0; A_1; ...] with A_i on any device, read and written on `home`: x is
// copied to every part's device, A_i x lands in slice i of y; the adjoint
// sums the parts' A_i^H y_i on `home` (a reduction). Parts on `home` itself
// take views, no copies. Its normal is sum_across of the parts' own normals
// (each fast one, a Toeplitz T, runs on its part's device), not A^H after A.
OpPtr vstack_across(Device& home, std::vector<OpPtr> parts);

// The rows of `blocks` blocks (SENSE's coils: blocks of m samples) split
// across devices: part i owns rows [first_i, first_i + n_i) of every block
// (first_i the earlier parts' n), its output block-major (blocks x n_i). As
// vstack_across: x is copied to every part's device, the adjoint sums the
// parts' A_i^H on home. Its normal is A^H after A.
OpPtr vstack_blocks_across(Device& home, std::vector<OpPtr> parts, std::size_t blocks);

// A_0 + A_1 + ... with A_i on any device, read and written on `home` (equal
// shapes): x is copied to every part's device, the outputs are summed on home.
OpPtr sum_across(Device& home, std::vector<OpPtr> parts);

// f(i) for i < n at once, one host thread each; every call ends before the
// first failure is rethrown.
void on_each(std::size_t n, const std::function<void(std::size_t)>& f);

}  // namespace fhd
