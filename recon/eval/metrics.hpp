#pragma once
// Image quality metrics (docs/conventions.md "Metrics"). All sums in double; no
// rescaling of the image: a wrong scale is an error the metrics must show.
#include <vector>

#include "recon/problem/scan.hpp"

namespace fhd {

// 20 log10(max|I0| / sqrt(MSE)), MSE = mean (|I| - I0)^2. +inf when I == I0.
// Throws InputError when the sizes differ or are zero.
double psnr(const std::vector<cfloat>& image, const std::vector<float>& ref);
// The same from the sum of squared errors over n voxels and the peak max|I0|
// (Device::magnitude_sse gives the sum where the image lives).
double psnr_from_sse(double sse, std::size_t n, double peak);
// sum (|I| - I0)^2 in double.
double magnitude_sse(const std::vector<cfloat>& image, const std::vector<float>& ref);

// |I| per voxel, over threads (in double: no overflow for any float input).
std::vector<float> magnitude(const std::vector<cfloat>& image);

// || |I| - I0 || / || I0 ||.
double nrmse(const std::vector<cfloat>& image, const std::vector<float>& ref);

// ||out - ref|| / ||ref|| on complex vectors (kernel accuracy against a reference).
double relative_error(const std::vector<cfloat>& out, const std::vector<cfloat>& ref);
double relative_error(const std::vector<cfloat>& out, const std::vector<cdouble>& ref);
// The same over the entries `at` of out only, ref holding one value per entry
// of `at` (a float64 reference computed at a subset, recon/gather/direct_sum.hpp).
// A zero ref gives the plain norm of the difference. Throws InputError when
// the sizes differ or an index lies outside out.
double relative_error_at(const std::vector<cfloat>& out, const std::vector<std::size_t>& at,
                         const std::vector<cdouble>& ref);

}  // namespace fhd
