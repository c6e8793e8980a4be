#pragma once
// Physical units at the output boundary. fhdrecon computes with FOV = 1
// (unitless, docs/conventions.md); formats that need millimetres (NIfTI, ISMRMRD)
// get this FOV unless the caller passes one (docs/formats.md).
#include <array>

namespace fhd {

constexpr double kDefaultFovMm = 256.0;
using FovMm = std::array<double, 3>;
constexpr FovMm kDefaultFov = {kDefaultFovMm, kDefaultFovMm, kDefaultFovMm};

}  // namespace fhd
