#include "app/scan_input.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "io/cfl.hpp"
#include "io/h5util.hpp"
#include "io/scan_file.hpp"
#include "recon/error.hpp"
#ifdef FHD_HAVE_ISMRMRD
#include "io/ismrmrd_io.hpp"
#endif

namespace fhd::app {
namespace {

std::string extension(const std::string& path) { return std::filesystem::path(path).extension().string(); }

bool is_bart_name(const std::string& path) {
  std::string e = extension(path);
  return e == ".cfl" || e == ".hdr" || e.empty();
}

bool is_ismrmrd_file(const std::string& path) {
  h5::QuietErrors quiet;
  h5::Handle f = h5::open_read(path);
  return h5::exists(f.get(), "dataset") && !h5::exists(f.get(), "kspace");
}

// Smallest even N per axis whose band [-N/2, N/2] holds every sample.
ImageGrid grid_from_trajectory(const Trajectory& t, int matrix) {
  auto extent = [](const std::vector<float>& k) {
    float m = 0;
    for (float v : k) m = std::max(m, std::abs(v));
    return m;
  };
  auto n_for = [](float kmax) { return std::max(2, 2 * int(std::ceil(kmax - 1e-3))); };
  if (matrix > 0) {
    float kz = extent(t.kz);
    return {matrix, matrix, kz > 0 ? matrix : 1};
  }
  float kz = extent(t.kz);
  return {n_for(extent(t.kx)), n_for(extent(t.ky)), kz > 0 ? n_for(kz) : 1};
}

std::vector<Scan> read_bart(const std::string& path, const std::string& traj_file, int matrix) {
  if (traj_file.empty())
    throw InputError(path, "--traj-file", "(none)", "a BART k-space needs its trajectory (--traj-file traj.cfl)");
  CflArray traj = read_cfl(traj_file);
  Trajectory t;
  std::size_t m = traj.data.size() / 3;
  t.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    t.kx[i] = traj.data[3 * i].real();
    t.ky[i] = traj.data[3 * i + 1].real();
    t.kz[i] = traj.data[3 * i + 2].real();
  }
  return read_bart_scan(traj_file, path, grid_from_trajectory(t, matrix));
}

}  // namespace

std::vector<Scan> read_scans_any(const std::string& path, const std::string& traj_file, int matrix) {
  if (!traj_file.empty() || (is_bart_name(path) && !std::filesystem::exists(path)))
    return read_bart(path, traj_file, matrix);
  if (!std::filesystem::exists(path)) throw InputError(path, "--input", path, "no such file");
  if (is_ismrmrd_file(path)) {
#ifdef FHD_HAVE_ISMRMRD
    return read_ismrmrd(path);
#else
    throw InputError(path, "/dataset", "ISMRMRD", "this fhdrecon was built without ISMRMRD");
#endif
  }
  return {read_scan(path)};
}

std::string write_scan_any(const std::string& path, const std::string& format, const Scan& scan, int readout) {
  std::string e = extension(path);
  std::string f = format != "auto" ? format
                  : (e == ".mrd" || e == ".ismrmrd") ? "ismrmrd"
                  : is_bart_name(path)               ? "bart"
                                                     : "fhdrecon";
  if (f == "bart") {
    std::string base = cfl_base(path);
    write_bart_scan(base + "_traj", base, {scan}, readout);
    return base + ".cfl/.hdr and " + base + "_traj.cfl/.hdr";
  }
  if (f == "ismrmrd") {
#ifdef FHD_HAVE_ISMRMRD
    write_ismrmrd(path, {scan}, readout);
    return path;
#else
    throw InputError(path, "--format", "ismrmrd", "this fhdrecon was built without ISMRMRD");
#endif
  }
  write_scan(path, scan);
  return path;
}

}  // namespace fhd::app
