#pragma once
// sin and cos of 2*pi*t for a phase t in cycles, without libm.
// The CPU has no special function unit, so the "sfu" trig mode uses this
// polynomial instead: branch-free, so OpenMP simd vectorizes the loops that
// call it (glibc's sincosf does not vectorize without -ffast-math).
// Accuracy: absolute error below 2e-7 for |t| <= 1/2 (measured in
// tests/recon/test_cpu_fhd.cpp), i.e. float rounding dominates.
#include <cmath>

namespace fhd {

// sin(2*pi*u) for |u| <= 1/4: odd Taylor polynomial of degree 11 in a = 2*pi*u,
// |a| <= pi/2, truncation error (pi/2)^13/13! ~ 6e-8.
inline float fast_sin2pi_quarter(float u) {
  const float a = 6.28318530717958647692f * u;
  const float a2 = a * a;
  float p = -2.50521083854417e-8f;  // -1/11!
  p = p * a2 + 2.75573192239859e-6f;  // 1/9!
  p = p * a2 - 1.98412698412698e-4f;  // -1/7!
  p = p * a2 + 8.33333333333333e-3f;  // 1/5!
  p = p * a2 - 1.66666666666667e-1f;  // -1/3!
  return a + a * a2 * p;
}

// sin and cos of 2*pi*t for a reduced phase |t| <= 1/2 (t -= rint(t) first).
// sin(2 pi t) = sin(2 pi t') with t' = sign(t) min(|t|, 1/2 - |t|) in [-1/4, 1/4];
// cos(2 pi t) = sin(2 pi (1/4 - |t|)) with 1/4 - |t| in [-1/4, 1/4].
inline void fast_sincos2pi(float t, float& s, float& c) {
  const float at = std::fabs(t);
  // min(at, 1/2 - at) written with fabs only: std::fmin is a libm call and a
  // compare becomes a branch without -ffast-math; either keeps the loop scalar.
  const float folded = 0.25f - std::fabs(at - 0.25f);
  s = fast_sin2pi_quarter(std::copysign(folded, t));
  c = fast_sin2pi_quarter(0.25f - at);
}

}  // namespace fhd
