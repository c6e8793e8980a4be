#pragma once
// Image quality metrics (docs/conventions.md "Metrics"). All sums in double; no
// rescaling of the image: a wrong scale is an error the metrics must show.
#include <vector>

#include "recon/types.hpp"

namespace fhd {

// 20 log10(max|I0| / sqrt(MSE)), MSE = mean (|I| - I0)^2. +inf when I == I0.
// Throws InputError when the sizes differ or are zero.
double psnr(const std::vector<cfloat>& image, const std::vector<float>& ref);

// || |I| - I0 || / || I0 ||.
double nrmse(const std::vector<cfloat>& image, const std::vector<float>& ref);

// ||out - ref|| / ||ref|| on complex vectors (kernel accuracy against a reference).
double relative_error(const std::vector<cfloat>& out, const std::vector<cfloat>& ref);
double relative_error(const std::vector<cfloat>& out, const std::vector<cdouble>& ref);

}  // namespace fhd
