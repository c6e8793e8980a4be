// Writing ISMRMRD files (io/ismrmrd_io.hpp, docs/formats.md); reading is in io/ismrmrd_io.cpp.
#include "io/ismrmrd_io.hpp"

#include "core/error.hpp"

#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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
  validate_field(coils[0], path);  // dwell_us_of reads times[r - 1]: one time per sample
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
void write_ismrmrd(const std::string& path, const std::vector<Scan>&, int, const FovMm&) {
  throw InputError(path, "format", "ismrmrd", "this build has no ISMRMRD support (libismrmrd not found)");
}
}  // namespace fhd

#endif
