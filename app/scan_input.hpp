#pragma once
#include <string>

#include "recon/types.hpp"

namespace fhd::app {

// Reads a scan whatever its format, chosen by content and name:
// fhdrecon HDF5 (root attribute fhdrecon_schema), ISMRMRD HDF5 (/dataset),
// BART k-space .cfl/.hdr (needs `traj_file`, the trajectory's .cfl).
// Every reader validates (io/validate.hpp); errors name file, field and value.
Scan read_scan_any(const std::string& path, const std::string& traj_file);

}  // namespace fhd::app
