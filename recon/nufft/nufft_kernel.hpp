#pragma once
// NUFFT kernel maths shared by the CPU (recon/nufft_cpu.*) and GPU (cuda/nufft*)
// engines: the exponential-of-semicircle (ES) spreading kernel of FINUFFT
// (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41 (2019) C479), its
// width and shape for a tolerance, the fine (oversampled) grid size, and the
// deapodization factors, and the plans' axis order.
//
// Units: z is a distance in fine-grid cells. The kernel's Fourier transform is
//   phihat(nu) = integral phi(z) exp(-i 2 pi nu z) dz,   nu in cycles per cell,
// and mode k on a fine grid of nf cells sits at nu = k / nf. No normalization
// beyond that: an engine that spreads with es_kernel, FFTs (unnormalized) and
// multiplies mode k by deapodization()[k + n/2] gets the plain exponential sum.
#include <array>
#include <vector>

namespace fhd::nufft {

struct KernelParams {
  int width;     // w: the kernel covers w fine-grid cells (|z| < w/2)
  double beta;   // shape parameter of the ES kernel
  double sigma;  // upsampling factor of the fine grid
};

// Width and shape for a requested relative tolerance tol at upsampling sigma
// (2.0 or 1.25; any sigma in (1, 4] is accepted). Throws fhd::InputError when
// tol is outside [1e-14, 1e-1] or is not a number, and for sigma outside (1, 4].
// sigma = 2:     w = ceil(log10(1/tol)) + 1,                 beta = 2.30 w
// other sigma:   w = ceil(ln(1/tol) / (pi sqrt(1 - 1/sigma))) + 1, beta = 0.97 pi (1 - 1/(2 sigma)) w
// w is clamped to [2, 16]. The + 1 is ours: FINUFFT's published width at
// sigma = 1.25 measured 2-3x tol per axis (1D, n = 16..200; 5x in 3D); one cell
// more brings it under tol (docs/cpu-backend.md, "NUFFT"). In single precision sigma = 1.25
// also floors at ~5e-6 per axis (1/phihat at the band edge amplifies rounding):
// ask for sigma = 2 below tol 1e-5.
KernelParams kernel_for(double tol, double sigma);

// phi(z) = exp(beta (sqrt(1 - (2z/w)^2) - 1)) for |z| < w/2, 0 outside; phi(0) = 1.
double es_kernel(double z, const KernelParams& p);

// Fine-grid length for n modes: the smallest even 2^a 3^b 5^c >= max(ceil(sigma n), 2w).
// n == 1 gives 1 (an axis of a 2D problem is not oversampled).
int fine_size(int n, const KernelParams& p);

// phihat(nu) (definition above), by Gauss-Legendre quadrature after the
// substitution z = (w/2) sin(theta), which removes the square-root edge of the
// kernel and makes the integrand smooth: accurate to about 1e-14 relative.
double es_transform(double nu, const KernelParams& p);

// 1 / phihat(k / nf) for the n modes k = -(n/2) .. n - 1 - n/2 (index i holds
// k = i - n/2, integer division, the same order as the image's voxels).
// n == 1 (an axis that is not oversampled, nf == 1) gives {1}.
std::vector<double> deapodization(int n, int nf, const KernelParams& p);

// Below this tolerance an upsampling factor of 1.25 is taken as 2.0, on both
// engines: in single precision the 1.25 grid's deconvolution (1/phihat at the
// band edge) amplifies the spread's rounding, per axis (4e-4 at tol 1e-7 on
// the CPU, 24x24 modes and up).
constexpr double kMinTolSigma125 = 1e-4;

// The plans' axis order for n modes per axis (x, y, z): element a is the given
// axis a plan transforms as its axis a. Axes of more than one mode first, in
// their order, then those of 1 mode: such an axis holds x = 0 alone, where
// exp(i 2 pi k x) = 1, so it is idle (not spread along), and the spreading
// needs x and y transformed. Moving an axis of length 1 leaves the memory
// order of the mode arrays as it is: a 7x1x5 slab is planned as 7x5x1.
std::array<int, 3> axis_order(const int n[3]);

}  // namespace fhd::nufft
