#pragma once
// The regularizers a problem can name (ReconOptions::reg). "l2" is quadratic
// (lambda ||D x||^2, solved with the data term by CG); every other one is an
// (operator, prox) pair for ADMM: "tv" is (finite differences D, isotropic
// group l1), "wavelet" (the db4 wavelet W, l1). A new prior is an entry in
// regularizer.cpp's table, built from operators and proxes; nothing else changes.
#include <functional>
#include <string>
#include <vector>

#include "recon/solvers/solvers.hpp"

namespace fhd {

struct Regularizer {
  std::string name;   // as ReconOptions::reg and the CLI's --reg name it
  std::string label;  // in stage names ("ADMM-" + label) and reports
  std::string help;   // one line for --help
  std::function<Term(Device& dev, const ImageGrid& grid, double lambda)> term;
};

// The sparse regularizers (not l2); nullptr for an unknown name.
const Regularizer* find_regularizer(const std::string& name);
// "l2" and every sparse one's name.
std::vector<std::string> regularizer_names();

}  // namespace fhd
