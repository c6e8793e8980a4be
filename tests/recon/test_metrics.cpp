// Metrics on pairs whose values follow from the definitions by hand.
#include <cmath>
#include <limits>
#include <vector>

#include "catch.hpp"
#include "recon/eval/metrics.hpp"

using namespace fhd;

TEST_CASE("PSNR and NRMSE of a constant offset", "[metrics]") {
  std::vector<float> ref = {0.0f, 1.0f, 2.0f, 4.0f};
  const double c = 0.25;
  std::vector<cfloat> img;
  for (float v : ref) img.push_back(cfloat(v + float(c), 0.0f));
  CHECK(std::fabs(psnr(img, ref) - 20 * std::log10(4.0 / c)) < 1e-9);
  // || c ||_2 over 4 voxels = 2c; || ref || = sqrt(21).
  CHECK(std::fabs(nrmse(img, ref) - 2 * c / std::sqrt(21.0)) < 1e-9);
}

TEST_CASE("metrics use the magnitude and do not rescale", "[metrics]") {
  std::vector<float> ref = {1.0f, 2.0f};
  // A pure phase leaves |I| = I0: perfect.
  std::vector<cfloat> phase = {cfloat(0.0f, 1.0f), cfloat(-2.0f, 0.0f)};
  CHECK(nrmse(phase, ref) == 0.0);
  CHECK(psnr(phase, ref) == std::numeric_limits<double>::infinity());
  // Twice the reference is an error of I0 itself: NRMSE 1, PSNR 20 log10(2 / sqrt(2.5)).
  std::vector<cfloat> twice = {cfloat(2.0f, 0.0f), cfloat(4.0f, 0.0f)};
  CHECK(std::fabs(nrmse(twice, ref) - 1.0) < 1e-12);
  CHECK(std::fabs(psnr(twice, ref) - 20 * std::log10(2.0 / std::sqrt(2.5))) < 1e-9);
}

TEST_CASE("relative error of complex vectors", "[metrics]") {
  std::vector<cfloat> ref = {cfloat(3.0f, 4.0f), cfloat(0.0f, 0.0f)};  // norm 5
  std::vector<cfloat> out = {cfloat(3.0f, 4.0f), cfloat(0.0f, 0.5f)};
  CHECK(std::fabs(relative_error(out, ref) - 0.1) < 1e-7);
  std::vector<cdouble> refd = {cdouble(3.0, 4.0), cdouble(0.0, 0.0)};
  CHECK(std::fabs(relative_error(out, refd) - 0.1) < 1e-12);
  CHECK_THROWS(relative_error(out, std::vector<cfloat>(3)));
  CHECK_THROWS(psnr(out, std::vector<float>(1)));
}

TEST_CASE("relative error at chosen entries", "[metrics]") {
  const std::vector<cfloat> out = {{1, 0}, {5, 5}, {2, 0}, {9, 9}};
  const std::vector<std::size_t> at = {2, 0};
  CHECK(relative_error_at(out, at, {{2, 0}, {1, 0}}) == 0.0);            // entries 1 and 3 are not looked at
  CHECK(relative_error_at(out, at, {{4, 0}, {1, 0}}) == Approx(2.0 / std::sqrt(17.0)));
  CHECK(relative_error_at(out, at, {{0, 0}, {0, 0}}) == Approx(std::sqrt(5.0)));  // zero ref: plain norm
  CHECK_THROWS(relative_error_at(out, {4}, {{1, 0}}));
  CHECK_THROWS(relative_error_at(out, at, {{1, 0}}));
}
