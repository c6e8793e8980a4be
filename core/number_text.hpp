#pragma once
// Numbers in error messages: 9 significant digits, enough to give a float back
// exactly (3.00000001e+38, not 3e+38), and complex values as (re, im).
#include <complex>
#include <sstream>
#include <string>

namespace fhd {

inline std::string number_text(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

inline std::string complex_text(std::complex<double> v) {
  return "(" + number_text(v.real()) + ", " + number_text(v.imag()) + ")";
}

}  // namespace fhd
