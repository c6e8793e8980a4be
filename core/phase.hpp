#pragma once
// The off-resonance phase, shared by the exact synthesis (phantom/offresonance),
// the time segments and the host field sums (recon/field*).
#include <cmath>
#include <complex>

namespace fhd {

// exp(-i 2 pi f t): the phase a field of f Hz adds after t seconds, f t
// reduced to one turn first so the sine keeps its precision.
inline std::complex<double> off_resonance_phase(double f, double t) {
  double turns = f * t;
  turns -= std::rint(turns);
  return std::polar(1.0, -6.283185307179586 * turns);
}

}  // namespace fhd
