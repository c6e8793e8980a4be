// Reading ISMRMRD files (io/ismrmrd_io.hpp, docs/formats.md); writing is in io/ismrmrd_write.cpp.
#include "io/ismrmrd_io.hpp"

#include "core/error.hpp"

#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <spdlog/spdlog.h>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/h5util.hpp"
#include "io/ismrmrd_shared.hpp"
#include "io/scan_checks.hpp"

namespace fhd {
namespace {

using ismrmrd_shared::kProvenancePrefix;
using ismrmrd_shared::kUnitsParam;
using ismrmrd_shared::quiet_ismrmrd;

// Checks the HDF5 layout before ISMRMRD touches it, so each problem gets its own line.
void check_layout(const std::string& path) {
  h5::QuietErrors quiet;
  h5::Handle f = h5::open_read(path);
  for (const char* name : {"dataset", "dataset/xml", "dataset/data"})
    if (!h5::exists(f.get(), name))
      throw InputError(path, std::string("/") + name, "(missing)", "not an ISMRMRD file (required dataset missing)");
}

// ---- acquisition headers, checked before libismrmrd copies anything ----
// libismrmrd sizes its buffers from each acquisition's header and copies the
// stored traj/data arrays into them without comparing lengths: a header that
// claims more than is stored overflows the heap. So every header is read here
// first, straight from HDF5, and compared with what the file really stores.

struct AcqHead {
  std::uint64_t flags;
  std::uint16_t samples, channels, tdims, pre, post;
};

struct AcqRecord {
  AcqHead head;
  hvl_t traj, data;
};

h5::Handle acq_memory_type() {
  using h5::check;
  h5::Handle head(h5::check_id(H5Tcreate(H5T_COMPOUND, sizeof(AcqHead)), "head type"), H5Tclose);
  check(H5Tinsert(head.get(), "flags", HOFFSET(AcqHead, flags), H5T_NATIVE_UINT64), "flags");
  check(H5Tinsert(head.get(), "number_of_samples", HOFFSET(AcqHead, samples), H5T_NATIVE_UINT16), "samples");
  check(H5Tinsert(head.get(), "active_channels", HOFFSET(AcqHead, channels), H5T_NATIVE_UINT16), "channels");
  check(H5Tinsert(head.get(), "trajectory_dimensions", HOFFSET(AcqHead, tdims), H5T_NATIVE_UINT16), "tdims");
  check(H5Tinsert(head.get(), "discard_pre", HOFFSET(AcqHead, pre), H5T_NATIVE_UINT16), "pre");
  check(H5Tinsert(head.get(), "discard_post", HOFFSET(AcqHead, post), H5T_NATIVE_UINT16), "post");
  h5::Handle vlen(h5::check_id(H5Tvlen_create(H5T_NATIVE_FLOAT), "vlen"), H5Tclose);
  h5::Handle rec(h5::check_id(H5Tcreate(H5T_COMPOUND, sizeof(AcqRecord)), "record type"), H5Tclose);
  check(H5Tinsert(rec.get(), "head", HOFFSET(AcqRecord, head), head.get()), "head");
  check(H5Tinsert(rec.get(), "traj", HOFFSET(AcqRecord, traj), vlen.get()), "traj");
  check(H5Tinsert(rec.get(), "data", HOFFSET(AcqRecord, data), vlen.get()), "data");
  return rec;
}

// The file's acquisition type must hold every member we read (by name).
void expect_acq_members(hid_t ds, const std::string& path) {
  h5::Handle t(H5Dget_type(ds), H5Tclose);
  bool ok = H5Tget_class(t.get()) == H5T_COMPOUND;
  for (const char* m : {"head", "traj", "data"}) ok = ok && H5Tget_member_index(t.get(), m) >= 0;
  if (ok) {
    h5::Handle head(H5Tget_member_type(t.get(), unsigned(H5Tget_member_index(t.get(), "head"))), H5Tclose);
    ok = H5Tget_class(head.get()) == H5T_COMPOUND;
    for (const char* m : {"flags", "number_of_samples", "active_channels", "trajectory_dimensions", "discard_pre",
                          "discard_post"})
      ok = ok && H5Tget_member_index(head.get(), m) >= 0;
  }
  if (!ok)
    throw InputError(path, "/dataset/data dtype", h5::class_name(t.get()),
                     "not ISMRMRD acquisitions (compound of head, traj, data)");
}

AcqRecord read_record(hid_t ds, hid_t mem, hsize_t i, const std::string& path) {
  h5::Handle fspace(H5Dget_space(ds), H5Sclose);
  const hsize_t one = 1;
  h5::Handle mspace(H5Screate_simple(1, &one, nullptr), H5Sclose);
  AcqRecord r{};
  if (H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &i, nullptr, &one, nullptr) < 0 ||
      H5Dread(ds, mem, mspace.get(), fspace.get(), H5P_DEFAULT, &r) < 0)
    throw InputError(path, "/dataset/data[" + std::to_string(i) + "]", "(unreadable)",
                     "HDF5 cannot read it (truncated or corrupt?)");
  H5Dvlen_reclaim(mem, mspace.get(), H5P_DEFAULT, &r);  // frees traj.p and data.p; lengths stay
  return r;
}

// Each header's counts against the stored lengths; what a readout keeps.
void check_record(const AcqRecord& r, hsize_t i, const std::string& path) {
  const std::string field = "/dataset/data[" + std::to_string(i) + "]";
  const AcqHead& h = r.head;
  const std::size_t want_traj = std::size_t(h.samples) * h.tdims, want_data = 2 * std::size_t(h.samples) * h.channels;
  if (h.channels > kMaxCoils)
    throw InputError(path, field + ".active_channels", std::to_string(h.channels),
                     "at most " + std::to_string(kMaxCoils) + " channels");
  if (r.traj.len != want_traj)
    throw InputError(path, field + ".trajectory_dimensions", std::to_string(h.tdims),
                     "number_of_samples " + std::to_string(h.samples) + " x trajectory_dimensions needs " +
                         std::to_string(want_traj) + " trajectory values, the file stores " +
                         std::to_string(r.traj.len) + " (corrupt header)");
  if (r.data.len != want_data)
    throw InputError(path, field + ".active_channels", std::to_string(h.channels),
                     "number_of_samples " + std::to_string(h.samples) + " x active_channels needs " +
                         std::to_string(want_data / 2) + " complex values, the file stores " +
                         std::to_string(r.data.len / 2) + " (corrupt header)");
}

// ---- which acquisitions are image data ----
// Navigators, phase correction, dummy scans, feedback and calibration readouts
// share the file with the image's but are not samples of it (the ISMRMRD spec;
// Gadgetron and BART's tools leave them out): taken as image data they blend
// junk into the image (3 navigators among 24 readouts: relative error 2).

bool has_flag(std::uint64_t flags, int flag) { return (flags >> (flag - 1)) & 1u; }

struct NonImageKind {
  int flag;
  const char* name;
};

constexpr NonImageKind kNonImage[] = {
    {ISMRMRD::ISMRMRD_ACQ_IS_NAVIGATION_DATA, "navigator"},
    {ISMRMRD::ISMRMRD_ACQ_IS_PHASECORR_DATA, "phase correction"},
    {ISMRMRD::ISMRMRD_ACQ_IS_DUMMYSCAN_DATA, "dummy scan"},
    {ISMRMRD::ISMRMRD_ACQ_IS_RTFEEDBACK_DATA, "RT feedback"},
    {ISMRMRD::ISMRMRD_ACQ_IS_HPFEEDBACK_DATA, "HP feedback"},
    {ISMRMRD::ISMRMRD_ACQ_IS_SURFACECOILCORRECTIONSCAN_DATA, "surface-coil correction"},
    {ISMRMRD::ISMRMRD_ACQ_IS_PHASE_STABILIZATION, "phase stabilization"},
    {ISMRMRD::ISMRMRD_ACQ_IS_PHASE_STABILIZATION_REFERENCE, "phase stabilization reference"},
    {ISMRMRD::ISMRMRD_ACQ_IS_PARALLEL_CALIBRATION, "parallel calibration"},
};

// What a non-image acquisition is ("navigator", ...), or nullptr for image
// data. A readout flagged "parallel calibration and imaging" is image data.
const char* non_image_kind(std::uint64_t flags) {
  for (const NonImageKind& k : kNonImage) {
    const bool imaging_too = k.flag == ISMRMRD::ISMRMRD_ACQ_IS_PARALLEL_CALIBRATION &&
                             has_flag(flags, ISMRMRD::ISMRMRD_ACQ_IS_PARALLEL_CALIBRATION_AND_IMAGING);
    if (has_flag(flags, k.flag) && !imaging_too) return k.name;
  }
  return nullptr;
}

// The skipped acquisitions, counted for one info line at the end of the read.
struct Skipped {
  std::size_t count = 0;
  std::vector<std::string> kinds;  // in the order first met
  void add(const char* kind) {
    ++count;
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
  }
  void log(const std::string& path) const {
    if (count == 0) return;
    std::string list;
    for (const std::string& k : kinds) list += (list.empty() ? "" : ", ") + k;
    spdlog::info("{}: skipped {} non-image acquisition{} ({})", printable(path), count, count == 1 ? "" : "s", list);
  }
};

struct AcqTotals {
  std::size_t samples = 0, channels = 0;
  std::size_t noise_values = 0;  // noise samples x channels
};

// Checks every acquisition (noise ones too: libismrmrd reads them all) and
// counts the samples a read keeps, before libismrmrd is asked for any.
AcqTotals check_acquisitions(const std::string& path) {
  h5::QuietErrors quiet;
  h5::Handle f = h5::open_read(path);
  h5::Handle ds(H5Dopen2(f.get(), "dataset/data", H5P_DEFAULT), H5Dclose);
  if (!ds.ok()) throw InputError(path, "/dataset/data", "(not a dataset)", "expected ISMRMRD acquisitions");
  expect_acq_members(ds.get(), path);
  const auto dims = h5::shape(ds.get());
  if (dims.size() != 1) throw InputError(path, "/dataset/data rank", std::to_string(dims.size()), "expected 1");
  h5::Handle mem = acq_memory_type();
  AcqTotals t;
  for (hsize_t i = 0; i < dims[0]; ++i) {
    const AcqRecord r = read_record(ds.get(), mem.get(), i, path);
    check_record(r, i, path);
    if (r.head.flags & (std::uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT - 1))) {
      t.noise_values += std::size_t(r.head.samples) * r.head.channels;
      continue;
    }
    if (non_image_kind(r.head.flags)) continue;
    if (r.head.pre + r.head.post < r.head.samples) t.samples += r.head.samples - r.head.pre - r.head.post;
    t.channels = std::max<std::size_t>(t.channels, r.head.channels);
  }
  return t;
}

ISMRMRD::IsmrmrdHeader read_header(ISMRMRD::Dataset& d, const std::string& path) {
  std::string xml;
  d.readHeader(xml);
  ISMRMRD::IsmrmrdHeader h;
  try {
    ISMRMRD::deserialize(xml.c_str(), h);
  } catch (const std::exception& e) {
    throw InputError(path, "/dataset/xml", "(header)", std::string("invalid ISMRMRD header: ") + e.what());
  }
  if (h.encoding.empty()) throw InputError(path, "/dataset/xml encoding", "(none)", "no encoding section");
  return h;
}

std::string user_string(const ISMRMRD::IsmrmrdHeader& h, const std::string& name) {
  if (!h.userParameters) return "";
  for (const auto& p : h.userParameters->userParameterString)
    if (p.name == name) return p.value;
  return "";
}

const char* units_word(TrajUnits u) { return u == TrajUnits::normalized ? "normalized" : "cycles"; }

// The units the samples are read in: the file's word (fhdrecon_traj_units) or
// the caller's; when both speak they must agree (a silent winner would scale
// the trajectory one of them did not mean).
TrajUnits traj_units(const ISMRMRD::IsmrmrdHeader& h, const std::string& path, TrajUnits caller) {
  const std::string units = user_string(h, kUnitsParam);
  if (units.empty()) return caller;
  const std::string field = std::string("/dataset/xml userParameterString ") + kUnitsParam;
  if (units != "cycles/FOV" && units != "normalized")
    throw InputError(path, field, units, "expected \"cycles/FOV\" or \"normalized\"");
  const TrajUnits file = units == "normalized" ? TrajUnits::normalized : TrajUnits::cycles;
  if (caller != TrajUnits::unstated && caller != file)
    throw InputError(path, "--traj-units", units_word(caller),
                     "the file says otherwise (" + field + " = " + units + "); leave the option out");
  return file;
}

// Units stated nowhere and every sample within |k| <= 0.5 on every axis of
// N >= 4: the trajectory looks normalized (Gadgetron's [-0.5, 0.5]); read as
// cycles/FOV it gives garbage silently (a 16x12 image: relative error 652).
void refuse_if_looks_normalized(const Trajectory& t, const ImageGrid& g, const std::string& path) {
  const std::vector<float>* k[3] = {&t.kx, &t.ky, &t.kz};
  const int n[3] = {g.nx, g.ny, g.nz};
  float widest = 0;
  bool any_axis = false;
  for (int a = 0; a < 3; ++a) {
    if (n[a] < 4) continue;
    any_axis = true;
    for (float v : *k[a]) {
      if (!(std::abs(v) <= 0.5f + 1e-3f)) return;  // a NaN too: validate_scan names it
      widest = std::max(widest, std::abs(v));
    }
  }
  if (!any_axis) return;
  std::ostringstream msg;
  msg << "trajectory: max |k| = " << widest << " on every axis although the matrix is " << g.nx << "x" << g.ny
      << (g.nz > 1 ? "x" + std::to_string(g.nz) : "")
      << ": it looks normalized to [-0.5, 0.5]; give --traj-units normalized (Python: traj_units='normalized'; "
         "or cycles to read it as it is)";
  throw file_error(path, msg.str());
}

// What tells one image from another: the counters other than idx.average
// (repeated readouts of the same image, which may be merged).
struct Counter {
  const char* field;
  const char* noun;
  unsigned value;
};

std::array<Counter, 5> image_counters(const ISMRMRD::AcquisitionHeader& a) {
  return {{{"idx.slice", "slice", a.idx.slice},
           {"idx.contrast", "contrast", a.idx.contrast},
           {"idx.repetition", "repetition", a.idx.repetition},
           {"idx.set", "set", a.idx.set},
           {"idx.phase", "phase", a.idx.phase}}};
}

// One image per file: an image acquisition of another slice, contrast, ... or
// of another encoding than encoding[0] (whose matrix and FOV are used) is
// refused by name; merged they would blend two images into one.
void check_same_image(const ISMRMRD::AcquisitionHeader& first, const ISMRMRD::AcquisitionHeader& a,
                      std::uint32_t index, const std::string& path) {
  const std::string field = "/dataset/data[" + std::to_string(index) + "].";
  if (a.encoding_space_ref != 0)
    throw InputError(path, field + "encoding_space_ref", std::to_string(a.encoding_space_ref),
                     "not encoding[0], whose matrix and FOV are used; fhdrecon reconstructs one image per file");
  const auto want = image_counters(first), got = image_counters(a);
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i].value != want[i].value)
      throw InputError(path, field + got[i].field, std::to_string(got[i].value),
                       std::string("the file holds more than one ") + got[i].noun +
                           " (the first image acquisition has " + std::to_string(want[i].value) +
                           "); fhdrecon reconstructs one image per file");
}

// Appends one acquisition's samples to every coil's scan.
void take_acquisition(ISMRMRD::Acquisition& acq, std::uint32_t index, const std::string& path,
                      std::vector<Scan>& coils, const double scale[3], double te_s) {
  const std::string field = "/dataset/data[" + std::to_string(index) + "]";
  const int dims = acq.trajectory_dimensions();
  if (dims != 2 && dims != 3)
    throw InputError(path, field + ".trajectory_dimensions", std::to_string(dims), "expected 2 or 3 (non-Cartesian)");
  if (coils.empty()) coils.resize(acq.active_channels());
  if (acq.active_channels() != coils.size() || coils.empty())
    throw InputError(path, field + ".active_channels", std::to_string(acq.active_channels()),
                     "must be > 0 and the same in every acquisition (first had " + std::to_string(coils.size()) + ")");
  // The header is packed to 2 bytes: read its float through the struct, whose
  // type the compiler knows to be packed (acq.sample_time_us() returns a float&
  // into it, a misaligned load that UBSan reports).
  const float dwell_us = acq.getHead().sample_time_us;
  const int n = acq.number_of_samples(), lo = acq.discard_pre(), hi = n - acq.discard_post();
  if (lo >= hi) throw InputError(path, field + ".discard_pre/post", std::to_string(lo) + "/" + std::to_string(n - hi),
                                 "leave no samples of " + std::to_string(n));
  for (int s = lo; s < hi; ++s)
    for (std::size_t c = 0; c < coils.size(); ++c) {
      Trajectory& t = coils[c].traj;
      t.kx.push_back(float(acq.traj(0, s) * scale[0]));
      t.ky.push_back(float(acq.traj(1, s) * scale[1]));
      t.kz.push_back(dims == 3 ? float(acq.traj(2, s) * scale[2]) : 0.0f);
      coils[c].data.push_back(acq.data(s, c));
      // Time after excitation: TE plus the sample's index times the dwell time.
      if (dwell_us > 0) coils[c].field.times.push_back(float(te_s + 1e-6 * dwell_us * s));
    }
}

// The header's first TE in seconds (0 when it gives none).
double header_te_s(const ISMRMRD::IsmrmrdHeader& h) {
  if (!h.sequenceParameters || !h.sequenceParameters->TE || h.sequenceParameters->TE->empty()) return 0.0;
  return 1e-3 * double(h.sequenceParameters->TE->front());
}

// Appends a noise-measurement acquisition's samples to each channel's noise.
void take_noise(ISMRMRD::Acquisition& acq, std::uint32_t index, const std::string& path,
                std::vector<std::vector<cfloat>>& noise) {
  if (noise.empty()) noise.resize(acq.active_channels());
  if (acq.active_channels() != noise.size() || noise.empty())
    throw InputError(path, "/dataset/data[" + std::to_string(index) + "].active_channels (noise)",
                     std::to_string(acq.active_channels()),
                     "must be > 0 and the same in every noise acquisition (first had " + std::to_string(noise.size()) + ")");
  for (int s = 0; s < acq.number_of_samples(); ++s)
    for (std::size_t c = 0; c < noise.size(); ++c) noise[c].push_back(acq.data(s, c));
}

// Noise samples belong to the channels of the data: same count, all finite.
void attach_noise(const std::string& path, std::vector<std::vector<cfloat>>& noise, std::vector<Scan>& coils) {
  if (noise.empty()) return;
  if (noise.size() != coils.size())
    throw InputError(path, "/dataset/data noise active_channels", std::to_string(noise.size()),
                     "must equal the data's " + std::to_string(coils.size()) + " channels");
  for (std::size_t c = 0; c < coils.size(); ++c) {
    validate_finite(noise[c], path, "/dataset/data noise sample (channel " + std::to_string(c) + ")");
    coils[c].noise = std::move(noise[c]);
  }
}

// ---- geometry (docs/formats.md "Geometry"): FOV from the header, position
// and directions from the first data acquisition (patient LPS) ----

bool is_zero(const Vec3& v) { return v[0] == 0 && v[1] == 0 && v[2] == 0; }

std::string vec_string(const Vec3& v) {
  std::ostringstream o;
  o << "(" << v[0] << ", " << v[1] << ", " << v[2] << ")";
  return o.str();
}

// Unit length and orthogonal to `others` within float rounding of a scanner's header.
void check_direction(const std::string& path, const std::string& field, const Vec3& v,
                     std::initializer_list<const Vec3*> others) {
  constexpr double tol = 1e-3;
  const double len = std::sqrt(dot(v, v));
  if (!std::isfinite(len) || std::abs(len - 1) > tol)
    throw InputError(path, field, vec_string(v), "must be a unit vector (direction cosines)");
  for (const Vec3* o : others)
    if (std::abs(dot(v, *o)) > tol) throw InputError(path, field, vec_string(v), "must be orthogonal to the other directions");
}

ScanGeometry read_geometry(const ISMRMRD::IsmrmrdHeader& h, const ISMRMRD::AcquisitionHeader& a, std::uint32_t index,
                           const std::string& path) {
  ScanGeometry g;
  const auto& fov = h.encoding[0].encodedSpace.fieldOfView_mm;
  const float f[3] = {fov.x, fov.y, fov.z};
  for (int i = 0; i < 3; ++i) {
    if (!(f[i] > 0) || !std::isfinite(f[i]))
      throw InputError(path, std::string("/dataset/xml encoding[0].encodedSpace.fieldOfView_mm.") + "xyz"[i],
                       std::to_string(f[i]), "must be finite and > 0 (mm)");
    g.fov_mm[i] = f[i];
  }
  const std::string field = "/dataset/data[" + std::to_string(index) + "].";
  g.position = FHD_VEC3(a, position);
  for (double p : g.position)
    if (!std::isfinite(p)) throw InputError(path, field + "position", vec_string(g.position), "must be finite (mm)");
  const Vec3 read = FHD_VEC3(a, read_dir), phase = FHD_VEC3(a, phase_dir), slice = FHD_VEC3(a, slice_dir);
  if (is_zero(read) && is_zero(phase) && is_zero(slice)) return g;  // not recorded: the default axes
  check_direction(path, field + "read_dir", read, {});
  check_direction(path, field + "phase_dir", phase, {&read});
  g.read_dir = read;
  g.phase_dir = phase;
  g.slice_dir = cross(read, phase);  // what a 2D file that leaves slice_dir empty means
  if (!is_zero(slice)) {
    check_direction(path, field + "slice_dir", slice, {&read, &phase});
    g.slice_dir = slice;
  }
  return g;
}

}  // namespace

std::vector<Scan> read_ismrmrd(const std::string& path, TrajUnits caller_units, const SizeCheck& size_check) {
  quiet_ismrmrd();
  check_layout(path);
  const AcqTotals totals = check_acquisitions(path);
  h5::QuietErrors quiet;
  std::vector<Scan> coils;
  std::vector<std::vector<cfloat>> noise;
  ImageGrid grid;
  std::optional<ScanGeometry> geometry;
  ISMRMRD::IsmrmrdHeader h;
  TrajUnits units = TrajUnits::unstated;
  Skipped skipped;
  try {
    ISMRMRD::Dataset d(path.c_str(), "dataset", false);
    h = read_header(d, path);
    const auto& enc = h.encoding[0].encodedSpace.matrixSize;
    grid = {int(enc.x), int(enc.y), int(enc.z)};
    validate_grid(grid, path, "/dataset/xml encoding[0].encodedSpace.matrixSize");
    // Each coil keeps its own copy of k (3 floats) beside its data.
    check_allocation(double(totals.samples) * double(totals.channels) * 20.0 + 8.0 * double(totals.noise_values), path,
                     "/dataset/data samples",
                     std::to_string(totals.samples) + " x " + std::to_string(totals.channels) + " channels");
    if (size_check) size_check(grid, totals.samples, totals.channels);
    units = traj_units(h, path, caller_units);
    const bool norm = units == TrajUnits::normalized;
    const double scale[3] = {norm ? grid.nx : 1.0, norm ? grid.ny : 1.0, norm ? grid.nz : 1.0};
    const std::uint32_t n = d.getNumberOfAcquisitions();
    ISMRMRD::Acquisition acq;
    std::optional<ISMRMRD::AcquisitionHeader> first;  // the first image acquisition's
    for (std::uint32_t i = 0; i < n; ++i) {
      d.readAcquisition(i, acq);
      if (acq.isFlagSet(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT)) {
        take_noise(acq, i, path, noise);
        continue;
      }
      if (const char* kind = non_image_kind(acq.getHead().flags)) {
        skipped.add(kind);
        continue;
      }
      if (!first) first = acq.getHead();
      check_same_image(*first, acq.getHead(), i, path);
      if (!geometry) geometry = read_geometry(h, acq.getHead(), i, path);
      take_acquisition(acq, i, path, coils, scale, header_te_s(h));
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    std::string why = e.what();
    for (char& ch : why)
      if (ch == '\n') ch = ' ';
    throw InputError(path, "/dataset", "(unreadable)", "ISMRMRD cannot read it: " + why);
  }
  if (coils.empty())
    throw InputError(path, "/dataset/data", "0 image acquisitions",
                     "no image readouts (" + std::to_string(skipped.count) + " non-image acquisitions skipped, noise apart)");
  if (units == TrajUnits::unstated) refuse_if_looks_normalized(coils[0].traj, grid, path);
  attach_noise(path, noise, coils);
  for (std::size_t c = 0; c < coils.size(); ++c) {
    Scan& s = coils[c];
    if (s.field.times.size() != s.traj.size()) s.field.times.clear();  // some readouts without sample_time_us
    s.grid = grid;
    s.geometry = geometry;
    validate_scan(s, path, {"/dataset/data sample", "/dataset/data sample (channel " + std::to_string(c) + ")", "phi",
                            "dcf", "matrix"});
    s.provenance = {{"source", "ismrmrd"}, {"coil", std::to_string(c)}, {"coils", std::to_string(coils.size())}};
    if (h.userParameters)
      for (const auto& p : h.userParameters->userParameterString)
        if (p.name.rfind(kProvenancePrefix, 0) == 0) s.provenance[p.name.substr(std::string(kProvenancePrefix).size())] = p.value;
  }
  skipped.log(path);
  return coils;
}

}  // namespace fhd

#else  // no ISMRMRD

namespace fhd {
std::vector<Scan> read_ismrmrd(const std::string& path, TrajUnits, const SizeCheck&) {
  throw InputError(path, "format", "ismrmrd", "this build has no ISMRMRD support (libismrmrd not found)");
}
}  // namespace fhd

#endif

namespace fhd {
std::vector<Scan> read_ismrmrd(const std::string& path, bool normalized_traj, const SizeCheck& check) {
  return read_ismrmrd(path, normalized_traj ? TrajUnits::normalized : TrajUnits::unstated, check);
}

TrajUnits traj_units_named(const std::string& word) {
  return word == "normalized" ? TrajUnits::normalized : word == "cycles" ? TrajUnits::cycles : TrajUnits::unstated;
}

const char* traj_units_word(TrajUnits units) {
  return units == TrajUnits::normalized ? "normalized" : units == TrajUnits::cycles ? "cycles" : "";
}
}  // namespace fhd
