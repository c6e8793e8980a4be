#include "io/scan_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/number_text.hpp"
#include "recon/field/field.hpp"

namespace fhd {
namespace {

std::string at(const std::string& field, std::size_t m) { return field + "[" + std::to_string(m) + "]"; }

void check_grid(const ImageGrid& g, const std::string& file, const std::string& field) {
  const int n[3] = {g.nx, g.ny, g.nz};
  for (int a = 0; a < 3; ++a)
    if (n[a] <= 0 || n[a] > 65536)
      throw InputError(file, field + "[" + std::to_string(a) + "]", std::to_string(n[a]),
                       "matrix size must be in 1..65536");
}

void check_size(std::size_t got, std::size_t want, bool optional, const std::string& file, const std::string& field) {
  if (optional && got == 0) return;
  if (got != want)
    throw InputError(file, field + " length", std::to_string(got),
                     "must equal the number of trajectory samples " + std::to_string(want));
}

void check_traj(const Trajectory& t, const ImageGrid& g, const std::string& file, const std::string& field) {
  const std::vector<float>* k[3] = {&t.kx, &t.ky, &t.kz};
  const char* axis[3] = {".kx", ".ky", ".kz"};
  const int n[3] = {g.nx, g.ny, g.nz};
  // Sample by sample, so the first bad sample in file order is the one named.
  for (std::size_t m = 0; m < k[0]->size(); ++m) {
    for (int a = 0; a < 3; ++a) {
      const double band = n[a] / 2.0 + kBandTolerance;
      float v = (*k[a])[m];
      if (!std::isfinite(v)) throw InputError(file, at(field, m) + axis[a], number_text(v), "not a finite number");
      if (std::fabs(v) > band)
        throw InputError(file, at(field, m) + axis[a], number_text(v),
                         "outside the band |k| <= N/2 = " + number_text(n[a] / 2.0) + " cycles/FOV");
    }
  }
}

void check_finite(const std::vector<cfloat>& v, const std::string& file, const std::string& field) {
  // One comparison a sample, in double (a float near FLT_MAX squared
  // overflows float); NaN fails it too. hypot per sample cost 12x as much
  // (8M samples, 8 coils of 1M: 52 ms against 4.4 ms on the 2-core machine).
  constexpr double max2 = kMaxSampleMagnitude * kMaxSampleMagnitude;
  for (std::size_t m = 0; m < v.size(); ++m) {
    const double re = v[m].real(), im = v[m].imag();
    if (re * re + im * im <= max2) continue;
    if (!std::isfinite(re) || !std::isfinite(im))
      throw InputError(file, at(field, m), complex_text(v[m]), "not a finite number");
    throw InputError(file, at(field, m), complex_text(v[m]),
                     "magnitude " + number_text(std::hypot(re, im)) + " exceeds " + number_text(kMaxSampleMagnitude) +
                         ", the most a sample may have (sums over the samples would overflow float32)");
  }
}

void check_dcf(const std::vector<float>& v, const std::string& file, const std::string& field) {
  for (std::size_t m = 0; m < v.size(); ++m)
    if (!std::isfinite(v[m]) || v[m] < 0)
      throw InputError(file, at(field, m), number_text(v[m]), "density weights must be finite and >= 0");
}

std::size_t mem_available_from_proc() {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  double kib = 0;
  while (in >> name >> kib) {
    std::getline(in, unit);
    if (name == "MemAvailable:") return std::size_t(kib * 1024.0);
  }
  return 0;
}

// "4G", "512M", "1048576": bytes; 0 when unset or unparsable.
std::size_t limit_from_env() {
  const char* v = std::getenv("FHDRECON_MEMORY_LIMIT");
  if (!v || !*v) return 0;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  const std::string suffix = end ? end : "";
  const double scale = suffix.empty()  ? 1.0
                       : suffix == "K" ? 1024.0
                       : suffix == "M" ? 1048576.0
                       : suffix == "G" ? 1073741824.0
                                       : -1.0;
  if (!(x > 0) || scale < 0 || !std::isfinite(x)) return 0;
  return std::size_t(std::min(x * scale, 1.8e19));
}

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / 1073741824.0;
  return s.str();
}

}  // namespace

std::size_t available_host_bytes() {
  const std::size_t proc = mem_available_from_proc(), env = limit_from_env();
  if (proc == 0 || env == 0) return std::max(proc, env);
  return std::min(proc, env);
}

void check_allocation(double bytes, const std::string& file, const std::string& field, const std::string& value) {
  const double have = double(available_host_bytes());
  if (have > 0 && bytes > have)
    throw InputError(file, field, value,
                     "needs about " + gib(bytes) + " GiB of memory, " + gib(have) +
                         " GiB available (MemAvailable or FHDRECON_MEMORY_LIMIT)");
}

void validate_grid(const ImageGrid& g, const std::string& file, const std::string& field) {
  check_grid(g, file, field);
}
void validate_trajectory(const Trajectory& t, const ImageGrid& g, const std::string& file, const std::string& field) {
  check_traj(t, g, file, field);
}
void validate_finite(const std::vector<cfloat>& v, const std::string& file, const std::string& field) {
  check_finite(v, file, field);
}

void validate_scan(const Scan& s, const std::string& file, const ScanFields& f) {
  check_grid(s.grid, file, f.matrix);
  const std::size_t m = s.traj.kx.size();
  if (s.traj.ky.size() != m || s.traj.kz.size() != m)
    throw InputError(file, f.traj, std::to_string(m), "kx, ky, kz lengths differ");
  if (m == 0) throw InputError(file, f.traj, "0 samples", "no samples");
  check_size(s.data.size(), m, false, file, f.data);
  check_size(s.phi.size(), m, true, file, f.phi);
  check_size(s.dcf.size(), m, true, file, f.dcf);
  check_traj(s.traj, s.grid, file, f.traj);
  check_finite(s.data, file, f.data);
  check_finite(s.phi, file, f.phi);
  check_dcf(s.dcf, file, f.dcf);
}

void validate_field(const Scan& s, const std::string& file, const ScanFields& f) {
  const FieldData& fd = s.field;
  check_size(fd.times.size(), s.traj.size(), true, file, f.times);
  if (fd.hz.empty()) {  // times without a map are still seconds in [0, 10] (docs/formats.md)
    if (!fd.times.empty()) check_sample_times(fd.times, fd.times.size(), file);
    return;
  }
  if (fd.hz.size() != s.grid.voxels())
    throw InputError(file, f.field_map + " length", std::to_string(fd.hz.size()),
                     "must equal the grid's " + std::to_string(s.grid.voxels()) + " voxels");
  if (fd.times.empty()) throw InputError(file, f.times, "(missing)", "a " + f.field_map + " needs each sample's time");
  check_field(fd, s.grid, s.traj.size(), file);
}

}  // namespace fhd
