#pragma once
// Noise prewhitening (docs/coils.md): the receive channels' noise is
// correlated and of unequal power; W = L^{-1}, with L L^H the noise covariance
// estimated from noise-only samples, makes it white. Applied to the data
// before anything else (as Gadgetron and BART do).
#include <vector>

#include "recon/coils/coil_linalg.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

// Multi-coil samples, [coil][sample].
using CoilData = std::vector<std::vector<cfloat>>;

// Psi = (1/M) sum_m n_m n_m^H over M noise-only samples (n_m: one value per coil).
// Throws InputError when there are no coils or samples, or the coils' counts differ.
CMatrix noise_covariance(const CoilData& noise);

// How far Psi may be from Hermitian: |Psi(i,j) - conj(Psi(j,i))| at most this
// times the largest |Psi(i,i)| (float32 rounding of an estimate passes).
constexpr double kHermitianTolerance = 1e-6;

// W with W Psi W^H = I. keep_scale: W Psi W^H = mean(diag Psi) I instead, so the
// data keep their magnitude (images stay comparable with the phantom).
// Throws InputError when Psi is not square, not finite, not Hermitian (within
// kHermitianTolerance) or not positive definite (a dead or duplicated channel).
CMatrix whitening_matrix(const CMatrix& psi, bool keep_scale);

// data <- m data: output coil i = sum_j m(i,j) coil j. m.rows may be fewer
// than the coils (coil compression). Throws std::invalid_argument on a size mismatch.
void mix_coils(const CMatrix& m, CoilData& data);

// The maps of the coils mix_coils(m, ...) makes: map k = sum_c m(k,c) map c,
// voxel by voxel ([coil][voxel]). Sensitivities given for a scan's coils are
// those of its prewhitened (W) or compressed (U_K^H W) coils after this; not
// renormalized, so SENSE's image stays the object the given maps describe.
// Throws std::invalid_argument on a size mismatch.
CoilData mix_maps(const CoilData& maps, const CMatrix& m);

// Prewhitens every coil's data and noise samples (Scan::noise) with the noise
// the scans carry, keeping the scale. Returns false and changes nothing when no
// coil has noise samples; throws InputError when only some have, or their
// counts differ. `applied`, when given, receives W.
bool prewhiten(std::vector<Scan>& coils, CMatrix* applied = nullptr);

}  // namespace fhd
