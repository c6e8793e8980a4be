#pragma once
// The end-to-end part of `fhdrecon bench`: one full reconstruction of the 3D
// phantom on 3D radial at the bench's size, Q computed (not cached), each stage
// timed, output writing included as "I/O".
#include <cstddef>
#include <nlohmann/json.hpp>

#include "recon/problem/scan.hpp"

namespace fhd::app {

// Prints the stage table to stdout and returns it as JSON.
nlohmann::json run_end_to_end(int matrix, std::size_t samples, TrigMode trig, const std::string& device);

}  // namespace fhd::app
