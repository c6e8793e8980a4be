#include "io/ismrmrd_io.hpp"

#include "core/error.hpp"

#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/h5util.hpp"
#include "io/scan_checks.hpp"

namespace fhd {
namespace {

constexpr const char* kUnitsParam = "fhdrecon_traj_units";
constexpr const char* kProvenancePrefix = "provenance.";

// ISMRMRD's default handler prints every error to stderr; its C++ layer also
// throws with the same text, which we turn into one InputError line.
void quiet_ismrmrd() {
  static const bool once = (ISMRMRD::ismrmrd_set_error_handler([](const char*, int, const char*, int, const char*) {}), true);
  (void)once;
}

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

bool wants_normalized(const ISMRMRD::IsmrmrdHeader& h, const std::string& path, bool caller) {
  const std::string units = user_string(h, kUnitsParam);
  if (units.empty()) return caller;
  if (units == "cycles/FOV") return false;
  if (units == "normalized") return true;
  throw InputError(path, std::string("/dataset/xml userParameterString ") + kUnitsParam, units,
                   "expected \"cycles/FOV\" or \"normalized\"");
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

// The header is packed (2-byte alignment): its float arrays are read and
// written element by element through the struct, never through a reference.
#define FHD_VEC3(h, member) Vec3{(h).member[0], (h).member[1], (h).member[2]}
#define FHD_SET_VEC3(h, member, v) ((h).member[0] = float((v)[0]), (h).member[1] = float((v)[1]), (h).member[2] = float((v)[2]))

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

ISMRMRD::TrajectoryType trajectory_type(const Scan& s) {
  auto it = s.provenance.find("trajectory");
  const std::string kind = it == s.provenance.end() ? "" : it->second;
  if (kind.find("spiral") != std::string::npos) return ISMRMRD::TrajectoryType::SPIRAL;
  if (kind.find("radial") != std::string::npos || kind.find("stars") != std::string::npos)
    return ISMRMRD::TrajectoryType::RADIAL;
  return ISMRMRD::TrajectoryType::OTHER;
}

std::string header_xml(const Scan& s, std::size_t acquisitions, const ScanGeometry& geom) {
  ISMRMRD::IsmrmrdHeader h;
  h.experimentalConditions.H1resonanceFrequency_Hz = 63870000;  // required field; 1.5 T, not used by us
  ISMRMRD::Encoding e;
  const ImageGrid& g = s.grid;
  e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(g.nx, g.ny, g.nz);
  const FovMm& fov = geom.fov_mm;  // a 2D grid's fov[2] is its slice thickness
  e.encodedSpace.fieldOfView_mm = {float(fov[0]), float(fov[1]), float(fov[2])};
  e.reconSpace = e.encodedSpace;
  e.encodingLimits.kspace_encoding_step_1 = ISMRMRD::Limit(0, std::uint16_t(acquisitions - 1), 0);
  e.trajectory = trajectory_type(s);
  h.encoding.push_back(e);
  ISMRMRD::UserParameters u;
  u.userParameterString.push_back({kUnitsParam, "cycles/FOV"});
  for (const auto& [key, value] : s.provenance) u.userParameterString.push_back({kProvenancePrefix + key, value});
  h.userParameters = u;
  if (!s.field.times.empty()) {  // the first sample's time: the readouts' TE (ms)
    ISMRMRD::SequenceParameters seq;
    seq.TE = std::vector<float>{float(1e3 * double(s.field.times[0]))};
    h.sequenceParameters = seq;
  }
  std::ostringstream xml;
  ISMRMRD::serialize(h, xml);
  return xml.str();
}

void check_coils(const std::string& path, const std::vector<Scan>& coils, int readout) {
  if (coils.empty()) throw InputError(path, "coils", "0", "nothing to write");
  const std::size_t m = coils[0].traj.size();
  for (std::size_t c = 0; c < coils.size(); ++c)
    if (coils[c].data.size() != m)
      throw InputError(path, "coil " + std::to_string(c) + " data length", std::to_string(coils[c].data.size()),
                       "must equal the trajectory's " + std::to_string(m) + " samples");
  const std::size_t r = readout > 0 ? std::size_t(readout) : m;
  if (r == 0 || r > 65535 || m % r != 0)
    throw InputError(path, "readout", std::to_string(r),
                     "must be 1..65535 (number_of_samples is 16-bit) and divide " + std::to_string(m) + " samples");
  if (m / r > 65536)
    throw InputError(path, "readout", std::to_string(r), "too many acquisitions for kspace_encode_step_1 (16-bit)");
  if (coils.size() > kMaxCoils)
    throw InputError(path, "coils", std::to_string(coils.size()), "at most " + std::to_string(kMaxCoils) + " channels");
  for (std::size_t c = 0; c < coils.size(); ++c)
    if (coils[c].noise.size() != coils[0].noise.size())
      throw InputError(path, "coil " + std::to_string(c) + " noise length", std::to_string(coils[c].noise.size()),
                       "must equal coil 0's " + std::to_string(coils[0].noise.size()) + " noise samples");
}

// The noise calibration first, as scanners record it: acquisitions of up to
// `r` samples flagged ISMRMRD_ACQ_IS_NOISE_MEASUREMENT, no trajectory.
void write_noise(ISMRMRD::Dataset& d, const std::vector<Scan>& coils, std::size_t r) {
  const std::size_t total = coils[0].noise.size();
  for (std::size_t first = 0; first < total; first += r) {
    const std::size_t n = std::min(r, total - first);
    ISMRMRD::Acquisition acq(std::uint16_t(n), std::uint16_t(coils.size()), 0);
    acq.available_channels() = std::uint16_t(coils.size());
    for (std::size_t c = 0; c < coils.size(); ++c) acq.setChannelActive(std::uint16_t(c));
    acq.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t c = 0; c < coils.size(); ++c)
        acq.data(std::uint16_t(s), std::uint16_t(c)) = coils[c].noise[first + s];
    d.appendAcquisition(acq);
  }
}

// ISMRMRD's sample times: TE (the header) plus the sample's index times
// sample_time_us. Ours must have that form: every readout's j-th sample at
// times[0] + j * dwell (phantom/offresonance.hpp's sample_times); otherwise
// InputError. 0 when the scan has no times.
float dwell_us_of(const Scan& s, std::size_t r, const std::string& path) {
  const std::vector<float>& t = s.field.times;
  if (t.empty()) return 0.f;
  const double dwell = r > 1 ? (double(t[r - 1]) - t[0]) / double(r - 1) : 0.0;
  for (std::size_t m = 0; m < t.size(); ++m) {
    const double want = t[0] + dwell * double(m % r);
    if (std::fabs(t[m] - want) > 1e-6 * std::max(1.0, std::fabs(want)) + 1e-9)
      throw InputError(path, "sample time[" + std::to_string(m) + "]", std::to_string(t[m]),
                       "ISMRMRD holds TE + index * sample_time_us per readout; this scan's times are not of that form");
  }
  return float(dwell * 1e6);
}

void write_acquisitions(ISMRMRD::Dataset& d, const std::vector<Scan>& coils, std::size_t r, float dwell_us) {
  const Scan& first = coils[0];
  const std::size_t count = first.traj.size() / r;
  const std::uint16_t tdims = first.grid.is3d() ? 3 : 2;
  for (std::size_t a = 0; a < count; ++a) {
    ISMRMRD::Acquisition acq(std::uint16_t(r), std::uint16_t(coils.size()), tdims);
    // Through a copy of the header: the accessors return references into a
    // packed struct, and a store through a misaligned uint32_t& is undefined.
    ISMRMRD::AcquisitionHeader head = acq.getHead();
    head.scan_counter = std::uint32_t(a);
    head.idx.kspace_encode_step_1 = std::uint16_t(a);
    head.available_channels = std::uint16_t(coils.size());
    if (first.geometry) {  // otherwise left zero: no orientation claimed
      FHD_SET_VEC3(head, position, first.geometry->position);
      FHD_SET_VEC3(head, read_dir, first.geometry->read_dir);
      FHD_SET_VEC3(head, phase_dir, first.geometry->phase_dir);
      FHD_SET_VEC3(head, slice_dir, first.geometry->slice_dir);
    }
    head.sample_time_us = dwell_us;
    acq.setHead(head);
    for (std::size_t c = 0; c < coils.size(); ++c) acq.setChannelActive(std::uint16_t(c));
    if (a == 0) acq.setFlag(ISMRMRD::ISMRMRD_ACQ_FIRST_IN_SLICE);
    if (a + 1 == count) acq.setFlag(ISMRMRD::ISMRMRD_ACQ_LAST_IN_SLICE);
    for (std::size_t s = 0; s < r; ++s) {
      const std::size_t m = a * r + s;
      acq.traj(0, std::uint16_t(s)) = first.traj.kx[m];
      acq.traj(1, std::uint16_t(s)) = first.traj.ky[m];
      if (tdims == 3) acq.traj(2, std::uint16_t(s)) = first.traj.kz[m];
      for (std::size_t c = 0; c < coils.size(); ++c) acq.data(std::uint16_t(s), std::uint16_t(c)) = coils[c].data[m];
    }
    d.appendAcquisition(acq);
  }
}

}  // namespace

std::vector<Scan> read_ismrmrd(const std::string& path, bool normalized_traj, const SizeCheck& size_check) {
  quiet_ismrmrd();
  check_layout(path);
  const AcqTotals totals = check_acquisitions(path);
  h5::QuietErrors quiet;
  std::vector<Scan> coils;
  std::vector<std::vector<cfloat>> noise;
  ImageGrid grid;
  std::optional<ScanGeometry> geometry;
  ISMRMRD::IsmrmrdHeader h;
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
    const bool norm = wants_normalized(h, path, normalized_traj);
    const double scale[3] = {norm ? grid.nx : 1.0, norm ? grid.ny : 1.0, norm ? grid.nz : 1.0};
    const std::uint32_t n = d.getNumberOfAcquisitions();
    ISMRMRD::Acquisition acq;
    for (std::uint32_t i = 0; i < n; ++i) {
      d.readAcquisition(i, acq);
      if (acq.isFlagSet(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT)) {
        take_noise(acq, i, path, noise);
        continue;
      }
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
  if (coils.empty()) throw InputError(path, "/dataset/data", "0 acquisitions", "no (non-noise) readouts");
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
  return coils;
}

// libismrmrd's Dataset closes in its destructor and ignores a failed close (a
// full disk): read the file back and count its acquisitions before the rename.
void verify_written(const std::string& path, const std::string& tmp, std::size_t acquisitions) {
  bool ok = false;
  try {
    h5::Handle f = h5::open_read(tmp);
    h5::Handle ds(H5Dopen2(f.get(), "/dataset/data", H5P_DEFAULT), H5Dclose);
    ok = ds.ok() && h5::shape(ds.get()) == std::vector<hsize_t>{hsize_t(acquisitions)};
    f.close("close " + path);
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok) throw InputError(path, "/dataset", "(write)", "the written file does not read back whole (disk full?)");
}

void write_ismrmrd(const std::string& path, const std::vector<Scan>& coils, int readout, const FovMm& fov_mm) {
  quiet_ismrmrd();
  check_coils(path, coils, readout);
  validate_scan(coils[0], path);
  const std::size_t r = readout > 0 ? std::size_t(readout) : coils[0].traj.size();
  const float dwell = dwell_us_of(coils[0], r, path);
  h5::QuietErrors quiet;
  AtomicOutput out(path);
  const std::size_t noise_chunk = std::min<std::size_t>(r, 65535);
  try {
    ISMRMRD::Dataset d(out.tmp().c_str(), "dataset", true);
    const ScanGeometry geom = coils[0].geometry ? *coils[0].geometry : default_geometry(coils[0].grid, fov_mm);
    d.writeHeader(header_xml(coils[0], coils[0].traj.size() / r, geom));
    write_noise(d, coils, noise_chunk);
    write_acquisitions(d, coils, r, dwell);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    // libismrmrd's message carries the whole HDF5 error stack, one line per
    // frame (a full disk gave 26 lines): keep its first line.
    const std::string what = e.what();
    throw InputError(path, "/dataset", "(write)", "ISMRMRD write failed: " + what.substr(0, what.find('\n')));
  }  // Dataset closed before the rename
  const std::size_t noise_acqs = (coils[0].noise.size() + noise_chunk - 1) / noise_chunk;
  verify_written(path, out.tmp(), coils[0].traj.size() / r + noise_acqs);
  out.commit();
}

}  // namespace fhd

#else  // no ISMRMRD

namespace fhd {
std::vector<Scan> read_ismrmrd(const std::string& path, bool, const SizeCheck&) {
  throw InputError(path, "format", "ismrmrd", "this build has no ISMRMRD support (libismrmrd not found)");
}
void write_ismrmrd(const std::string& path, const std::vector<Scan>&, int, const FovMm&) {
  throw InputError(path, "format", "ismrmrd", "this build has no ISMRMRD support (libismrmrd not found)");
}
}  // namespace fhd

#endif
