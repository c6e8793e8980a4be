#pragma once
// The ES kernel (recon/nufft/nufft_kernel.hpp) as a piecewise polynomial, one per
// fine-grid cell it covers, for the CPU spreader (docs/cpu-backend.md, "NUFFT"):
// w values per point and axis become w independent polynomials in one
// variable, evaluated side by side in SIMD lanes by Horner's rule (FINUFFT's
// method; no exp or sqrt per value).
//
// A point with first kernel cell i0 and offset x1 = i0 - u in [-w/2, -w/2 + 1)
// has s = 2 x1 + w - 1 in [-1, 1); cell i's value is phi(x1 + i) = p_i(s).
#include <vector>

#include "recon/nufft/nufft_kernel.hpp"

namespace fhd::nufft {

struct HornerTable {
  int width = 0;   // w cells
  int lanes = 0;   // w rounded up to a multiple of 8 (lanes past w hold zero coefficients)
  int degree = 0;  // d: d + 1 coefficients per cell
  double max_error = 0;  // measured max |p_i(s) - phi| over the cells, float coefficients
  // coef[j * lanes + i]: the coefficient of s^(d - j) of cell i (highest power first).
  std::vector<float> coef;
};

// The table for kernel kp, fitted until its max error is at most 1e-2 tol (a
// degree from 4 to 24): made once per process for each (w, beta, tol) and
// kept (thread-safe); the reference stays valid for the process's life.
const HornerTable& horner_table(const KernelParams& kp, double tol);

// Horner in double of cell i at s, for tests.
double horner_value(const HornerTable& t, int cell, double s);

}  // namespace fhd::nufft
