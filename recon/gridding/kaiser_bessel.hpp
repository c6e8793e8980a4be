#pragma once
// Gridding kernel formulas, shared by the CPU gridding (recon/gridding/gridding_cpu.cpp)
// and the CUDA kernels: plain inline functions of doubles, only <math.h>, no
// std:: types, so a .cu file can wrap them for device code unchanged.
// Distances d are in oversampled-grid cells; frequencies nu in cycles per cell.
#include <math.h>

namespace fhd {

// Modified Bessel function I0, Abramowitz & Stegun 9.8.1 / 9.8.2
// (relative error below 2e-7: float precision, and cheap: no series loop).
inline double bessel_i0(double x) {
  double ax = fabs(x);
  if (ax < 3.75) {
    double t = (x / 3.75) * (x / 3.75);
    return 1.0 + t * (3.5156229 + t * (3.0899424 + t * (1.2067492 +
                 t * (0.2659732 + t * (0.0360768 + t * 0.0045813)))));
  }
  double t = 3.75 / ax;
  double p = 0.39894228 + t * (0.01328592 + t * (0.00225319 + t * (-0.00157565 +
             t * (0.00916281 + t * (-0.02057706 + t * (0.02635537 +
             t * (-0.01647633 + t * 0.00392377)))))));
  return p * exp(ax) / sqrt(ax);
}

// Beatty, Nishimura, Pauly, IEEE TMI 24:799 (2005), eq. 5: the KB shape that
// puts the first sidelobe at the edge of the aliased band, for full width W
// (cells) and oversampling sigma. Returns 0 where the formula has no real root.
inline double kb_beatty_beta(double width, double sigma) {
  const double pi = 3.14159265358979323846;
  double r = (width / sigma) * (sigma - 0.5);
  double s = r * r - 0.8;
  return s > 0.0 ? pi * sqrt(s) : 0.0;
}

// Kaiser-Bessel kernel I0(beta sqrt(1 - (2d/W)^2)) on |d| <= W/2, else 0.
// Not normalized: kb_transform below is the transform of exactly this function.
inline double kb_value(double d, double width, double beta) {
  double t = 2.0 * d / width;
  double s = 1.0 - t * t;
  return s < 0.0 ? 0.0 : bessel_i0(beta * sqrt(s));
}

// Continuous Fourier transform of kb_value (exact for the truncated kernel):
// W sinh(z)/z, z = sqrt(beta^2 - (pi W nu)^2); past the main lobe z is
// imaginary and sinh(z)/z becomes sin(|z|)/|z|.
inline double kb_transform(double nu, double width, double beta) {
  const double pi = 3.14159265358979323846;
  double a = pi * width * nu;
  double z2 = beta * beta - a * a;
  if (fabs(z2) < 1e-12) return width;
  if (z2 > 0.0) {
    double z = sqrt(z2);
    return width * sinh(z) / z;
  }
  double z = sqrt(-z2);
  return width * sin(z) / z;
}

// Trilinear (per axis: the triangle 1 - |d| of width 2), the book's baseline.
inline double tri_value(double d) {
  double a = 1.0 - fabs(d);
  return a > 0.0 ? a : 0.0;
}

// Transform of the triangle: sinc^2(nu).
inline double tri_transform(double nu) {
  const double pi = 3.14159265358979323846;
  if (fabs(nu) < 1e-12) return 1.0;
  double s = sin(pi * nu) / (pi * nu);
  return s * s;
}

}  // namespace fhd
