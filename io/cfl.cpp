#include "io/cfl.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <limits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/scan_checks.hpp"
#include "core/error.hpp"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "cfl I/O assumes a little-endian host");

namespace fhd {
namespace {

// The sample with the largest |k| on one axis (the first in file order on a tie).
std::size_t widest(const std::vector<float>& k) {
  std::size_t at = 0;
  for (std::size_t m = 0; m < k.size(); ++m)
    if (!(std::abs(k[m]) <= std::abs(k[at]))) at = m;  // NaN counts as widest
  return at;
}

// Smallest even N per axis whose band [-N/2, N/2] holds every sample. A sample
// no matrix can hold (NaN, Inf, |k| > 32768) is named here, before it can
// overflow the grid size and make another sample look like the culprit.
ImageGrid grid_holding(const Trajectory& t, int matrix, const std::string& file) {
  const std::vector<float>* k[3] = {&t.kx, &t.ky, &t.kz};
  const char* axis[3] = {".kx", ".ky", ".kz"};
  float extent[3] = {0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    if (k[a]->empty()) continue;
    const std::size_t m = widest(*k[a]);
    const float v = (*k[a])[m];
    if (!(std::abs(v) <= 32768.0f))
      throw InputError(file, "sample[" + std::to_string(m) + "]" + axis[a], std::to_string(v),
                       "not a finite k within |k| <= 32768 cycles/FOV (matrix at most 65536)");
    extent[a] = std::abs(v);
  }
  // A kz within the band of a one-voxel axis (what validate_trajectory accepts
  // for Nz = 1) is a 2D trajectory's float noise, not a second slice.
  const bool is3d = extent[2] > 0.5f + 1e-3f;
  if (matrix > 0) return {matrix, matrix, is3d ? matrix : 1};
  auto n_for = [](float kmax) { return std::max(2, 2 * int(std::ceil(kmax - 1e-3))); };
  return {n_for(extent[0]), n_for(extent[1]), is3d ? n_for(extent[2]) : 1};
}

// The trajectory of a [3, readout, spokes] array (its imaginary part ignored, as BART does).
Trajectory to_trajectory(const CflArray& t) {
  const std::size_t m = t.data.size() / 3;
  Trajectory traj;
  traj.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    traj.kx[i] = t.data[3 * i].real();
    traj.ky[i] = t.data[3 * i + 1].real();
    traj.kz[i] = t.data[3 * i + 2].real();
  }
  return traj;
}

std::string dims_text(const CflDims& d) {
  std::string s = "[";
  int last = kCflDims - 1;
  while (last > 0 && d[last] == 1) --last;
  for (int i = 0; i <= last; ++i) s += (i ? " " : "") + std::to_string(d[i]);
  return s + "]";
}

std::size_t product(const CflDims& d) {
  std::size_t n = 1;
  for (long v : d) n *= std::size_t(v);
  return n;
}

// A .hdr or .cfl must be a plain file: a header linked to /dev/zero grew one
// endless line to 9.9 GB, a FIFO blocked for ever, and a device's size read
// as 2^64 - 1 bytes.
void require_regular(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) throw file_error(path, "does not exist");
  if (!std::filesystem::is_regular_file(st)) throw file_error(path, "is not a regular file");
}

// The element count a header claims, refused (naming the header) when it
// overflows or when the .cfl beside it does not hold exactly that many values:
// the file's real size bounds every allocation.
std::size_t checked_count(const CflDims& d, const std::string& hdr, const std::string& cfl) {
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() / sizeof(cfloat);
  std::uint64_t n = 1;
  for (long v : d) {
    if (std::uint64_t(v) > limit / n)
      throw InputError(hdr, "# Dimensions", dims_text(d), "the product of the dimensions overflows");
    n *= std::uint64_t(v);
  }
  require_regular(cfl);
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(cfl, ec);
  if (ec || bytes != n * sizeof(cfloat))
    throw InputError(cfl, "size", std::to_string(bytes) + " bytes",
                     "expected " + std::to_string(n * sizeof(cfloat)) + " for dims " + dims_text(d));
  check_allocation(double(bytes), cfl, "dims", dims_text(d));
  return std::size_t(n);
}

// A BART header is a few lines of text.
constexpr std::uintmax_t kMaxHeaderBytes = 64 << 10;

CflDims read_header(const std::string& hdr) {
  require_regular(hdr);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(hdr, ec);
  if (!ec && size > kMaxHeaderBytes)
    throw InputError(hdr, "size", std::to_string(size) + " bytes",
                     "a BART header is text of at most " + std::to_string(kMaxHeaderBytes) + " bytes");
  std::ifstream in(hdr);
  if (!in) throw file_error(hdr, "cannot be read");
  std::string line;
  while (std::getline(in, line) && line.rfind("# Dimensions", 0) != 0) {
  }
  if (!in || !std::getline(in, line)) throw InputError(hdr, "# Dimensions", "(missing)", "no dimensions line");
  CflDims d;
  d.fill(1);
  std::istringstream s(line);
  std::string tok;
  int n = 0;
  while (s >> tok) {
    if (n == kCflDims) throw InputError(hdr, "# Dimensions", line, "more than 16 dimensions");
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(tok.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || errno == ERANGE)
      throw InputError(hdr, "# Dimensions[" + std::to_string(n) + "]", tok, "must be an integer >= 1");
    d[n++] = v;
  }
  if (n == 0) throw InputError(hdr, "# Dimensions", "(empty)", "no dimensions");
  return d;
}

void write_raw(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), std::streamsize(bytes));
  out.close();
  if (!out) throw file_error(path, "write failed");
}

void require(bool ok, const std::string& file, const std::string& field, const CflDims& d, const std::string& why) {
  if (!ok) throw InputError(file, field, dims_text(d), why);
}

}  // namespace

std::string cfl_base(const std::string& name) {
  for (const char* ext : {".cfl", ".hdr"}) {
    const std::size_t n = name.size();
    if (n > 4 && name.compare(n - 4, 4, ext) == 0) return name.substr(0, n - 4);
  }
  return name;
}

CflDims read_cfl_dims(const std::string& name) {
  const std::string base = cfl_base(name);
  CflDims d = read_header(base + ".hdr");
  checked_count(d, base + ".hdr", base + ".cfl");
  return d;
}

CflArray read_cfl(const std::string& name) {
  const std::string base = cfl_base(name), cfl = base + ".cfl";
  CflArray a;
  a.dims = read_cfl_dims(name);
  const std::size_t n = product(a.dims);
  a.data.resize(n);
  std::ifstream in(cfl, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(a.data.data()), std::streamsize(n * sizeof(cfloat))))
    throw file_error(cfl, "cannot be read");
  return a;
}

void write_cfl(const std::string& name, const std::vector<long>& dims, const std::vector<cfloat>& data) {
  const std::string base = cfl_base(name);
  if (dims.empty() || dims.size() > std::size_t(kCflDims))
    throw InputError(base + ".hdr", "dims", std::to_string(dims.size()), "need 1..16 dimensions");
  CflDims d;
  d.fill(1);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1) throw InputError(base + ".hdr", "dims[" + std::to_string(i) + "]", std::to_string(dims[i]), "must be >= 1");
    d[i] = dims[i];
  }
  if (product(d) != data.size())
    throw InputError(base + ".cfl", "data length", std::to_string(data.size()), "does not match dims " + dims_text(d));
  std::ostringstream hdr;
  hdr << "# Dimensions\n";
  for (long v : d) hdr << v << ' ';
  hdr << "\n";
  AtomicOutput cfl_out(base + ".cfl"), hdr_out(base + ".hdr");
  write_raw(cfl_out.tmp(), data.data(), data.size() * sizeof(cfloat));
  const std::string text = hdr.str();
  write_raw(hdr_out.tmp(), text.data(), text.size());
  cfl_out.commit();
  hdr_out.commit();
}

double bart_kspace_scale(const ImageGrid& grid) { return std::sqrt(double(grid.voxels())); }

ImageGrid bart_grid(const std::string& traj_name, int matrix) {
  return grid_holding(to_trajectory(read_cfl(traj_name)), matrix, cfl_base(traj_name) + ".cfl");
}

std::vector<Scan> read_bart_scan(const std::string& traj_name, const std::string& ksp_name, const ImageGrid& grid,
                                 const SizeCheck& check) {
  const std::string tfile = cfl_base(traj_name) + ".cfl", kfile = cfl_base(ksp_name) + ".cfl";
  validate_grid(grid, tfile, "matrix");
  // Both headers first: nothing is read for dimensions the other file or the
  // coil limit refuses (a sparse .cfl may claim 10^6 coils at no disk cost).
  const CflDims td = read_cfl_dims(traj_name);
  require(td[0] == 3, tfile, "dims", td, "trajectory must be [3, readout, spokes]");
  for (int i = 3; i < kCflDims; ++i)
    require(td[i] == 1, tfile, "dims", td, "only [3, readout, spokes] trajectories are supported");
  const CflDims kd = read_cfl_dims(ksp_name);
  require(kd[0] == 1, kfile, "dims", kd, "non-Cartesian k-space must be [1, readout, spokes, coils]");
  require(kd[1] == td[1] && kd[2] == td[2], kfile, "dims", kd,
          "readout and spokes must match the trajectory " + dims_text(td));
  for (int i = 4; i < kCflDims; ++i)
    require(kd[i] == 1, kfile, "dims", kd, "only [1, readout, spokes, coils] is supported (no maps/time)");
  require(std::size_t(kd[3]) <= kMaxCoils, kfile, "dims", kd, "at most " + std::to_string(kMaxCoils) + " coils (dims[3])");
  const Trajectory traj = to_trajectory(read_cfl(traj_name));
  const std::size_t m = traj.size();
  validate_trajectory(traj, grid, tfile, "sample");
  if (check) check(grid, m, std::size_t(kd[3]));
  const CflArray k = read_cfl(ksp_name);
  validate_finite(k.data, kfile, "sample");

  const float scale = float(bart_kspace_scale(grid));
  std::vector<Scan> coils(k.dims[3]);
  for (std::size_t c = 0; c < coils.size(); ++c) {
    Scan& s = coils[c];
    s.grid = grid;
    s.traj = traj;
    s.data.assign(k.data.begin() + c * m, k.data.begin() + (c + 1) * m);
    for (cfloat& v : s.data) v *= scale;
    s.provenance = {{"source", "bart"}, {"trajectory_file", tfile}, {"kspace_file", kfile},
                    {"coil", std::to_string(c)}, {"coils", std::to_string(coils.size())}};
  }
  return coils;
}

void write_bart_scan(const std::string& traj_name, const std::string& ksp_name, const std::vector<Scan>& coils,
                     int readout) {
  const std::string kfile = cfl_base(ksp_name) + ".cfl";
  if (coils.empty()) throw InputError(kfile, "coils", "0", "nothing to write");
  const Scan& first = coils[0];
  const std::size_t m = first.traj.size();
  const long r = readout > 0 ? readout : long(m);
  if (m == 0 || m % std::size_t(r) != 0)
    throw InputError(kfile, "readout", std::to_string(readout), "does not divide the " + std::to_string(m) + " samples");
  std::vector<cfloat> t(3 * m);
  for (std::size_t i = 0; i < m; ++i) {
    t[3 * i] = first.traj.kx[i];
    t[3 * i + 1] = first.traj.ky[i];
    t[3 * i + 2] = first.traj.kz[i];
  }
  const float inv = float(1.0 / bart_kspace_scale(first.grid));
  std::vector<cfloat> k;
  k.reserve(m * coils.size());
  for (std::size_t c = 0; c < coils.size(); ++c) {
    if (coils[c].data.size() != m)
      throw InputError(kfile, "coil " + std::to_string(c) + " data length", std::to_string(coils[c].data.size()),
                       "must equal the trajectory's " + std::to_string(m) + " samples");
    for (cfloat v : coils[c].data) k.push_back(v * inv);
  }
  const long spokes = long(m) / r;
  write_cfl(traj_name, {3, r, spokes}, t);
  write_cfl(ksp_name, {1, r, spokes, long(coils.size())}, k);
}

void write_bart_image(const std::string& name, const std::vector<cfloat>& image, const ImageGrid& grid) {
  write_cfl(name, {grid.nx, grid.ny, grid.nz}, image);
}

std::vector<cfloat> read_bart_image(const std::string& name, ImageGrid* found) {
  CflArray a = read_cfl(name);
  for (int i = 3; i < kCflDims; ++i)
    require(a.dims[i] == 1, cfl_base(name) + ".cfl", "dims", a.dims, "expected an image [Nx, Ny, Nz]");
  if (found) *found = {int(a.dims[0]), int(a.dims[1]), int(a.dims[2])};
  return std::move(a.data);
}

}  // namespace fhd
