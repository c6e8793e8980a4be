#pragma once
// The band-limited reference: the best any linear reconstruction from samples
// inside the band can do, so the ceiling for PSNR against the voxel image.
#include <functional>
#include <vector>

#include "recon/problem/scan.hpp"

namespace fhd {

// D(k) = S(k) * Nx*Ny*Nz on the integer grid k in [-N/2, N/2) per axis, kept
// where sum over axes with N > 1 of (k_a / (N_a/2))^2 <= 1 (a sphere or disk
// for cubic grids, an ellipsoid otherwise), centered inverse DFT divided by
// the voxel count: with a full band it would return the phantom's Fourier
// series at voxel centers. Computed in float64 with FFTW, rounded at the end.
// kspace(kx, ky, kz) is the object's continuous Fourier transform S(k)
// (phantom/phantom.hpp's Phantom::kspace, for instance).
using KSpaceFn = std::function<cdouble(double kx, double ky, double kz)>;
std::vector<cfloat> band_limited_image(const KSpaceFn& kspace, const ImageGrid& g);

}  // namespace fhd
