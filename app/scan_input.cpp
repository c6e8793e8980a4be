#include "app/scan_input.hpp"

#include <filesystem>

#include "io/scan_file.hpp"
#include "recon/error.hpp"

namespace fhd::app {

Scan read_scan_any(const std::string& path, const std::string& traj_file) {
  if (!std::filesystem::exists(path)) throw InputError(path, "--input", path, "no such file");
  return read_scan(path);
}

}  // namespace fhd::app
