#pragma once
// Coil compression (docs/coils.md): the SVD of the coils x samples data matrix
// D = U S V^H; the K virtual coils U_K^H D keep the most signal energy any K
// linear combinations can. U_K^H has orthonormal rows, so prewhitened (white)
// noise stays white.
#include <vector>

#include "recon/coils/coil_linalg.hpp"
#include "recon/coils/coil_noise.hpp"

namespace fhd {

struct Compression {
  CMatrix matrix;                // K x C: U_K^H
  std::vector<double> energy;    // every singular value squared, descending
  double kept() const;           // fraction of the energy the K virtual coils hold
};

// From the data's C x C Gram matrix D D^H = U S^2 U^H. Throws InputError when
// k is not in 1..C.
Compression compression_matrix(const CoilData& data, int k);

// Compresses the coils' data (and noise samples, when present) to k virtual
// coils in place; coils[0]'s trajectory and metadata are kept for all.
// Returns the compression used. k >= coils.size() changes nothing (matrix = I,
// the energies as for any k).
Compression compress_coils(std::vector<Scan>& coils, int k);

}  // namespace fhd
