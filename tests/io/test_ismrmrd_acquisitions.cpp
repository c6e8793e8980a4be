// ISMRMRD acquisitions that are not one image's samples, and trajectory
// units: files written with libismrmrd's own API.
#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/dataset.h>
#include <ismrmrd/xml.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io/ismrmrd_io.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

constexpr int kSamples = 8;  // per readout

// Readout `a`: kx = (s - 4) * step, ky = (a - 3) * step, data a + i s (all small).
ISMRMRD::Acquisition readout(int a, float step = 1.0f) {
  ISMRMRD::Acquisition acq(kSamples, 1, 2);
  for (int s = 0; s < kSamples; ++s) {
    acq.traj(0, s) = float(s - 4) * step;
    acq.traj(1, s) = float(a - 3) * step;
    acq.data(s, 0) = cfloat(float(a), float(s));
  }
  return acq;
}

// A readout whose data would ruin the image (1000 at every sample, through the centre).
ISMRMRD::Acquisition junk(int flag) {
  ISMRMRD::Acquisition acq(kSamples, 1, 2);
  for (int s = 0; s < kSamples; ++s) {
    acq.traj(0, s) = acq.traj(1, s) = 0.0f;
    acq.data(s, 0) = cfloat(1000.0f, 0.0f);
  }
  ISMRMRD::AcquisitionHeader h = acq.getHead();
  h.flags |= std::uint64_t(1) << (flag - 1);
  acq.setHead(h);
  return acq;
}

// `field` of acquisition `acq`'s header set to `value` (through a copy: the header is packed).
ISMRMRD::Acquisition with(ISMRMRD::Acquisition acq, const std::string& field, std::uint16_t value) {
  ISMRMRD::AcquisitionHeader h = acq.getHead();
  if (field == "slice") h.idx.slice = value;
  if (field == "contrast") h.idx.contrast = value;
  if (field == "repetition") h.idx.repetition = value;
  if (field == "set") h.idx.set = value;
  if (field == "phase") h.idx.phase = value;
  if (field == "average") h.idx.average = value;
  if (field == "encoding_space_ref") h.encoding_space_ref = value;
  acq.setHead(h);
  return acq;
}

// A new file (libismrmrd appends to an existing one).
void write_file(const std::string& path, const std::vector<ISMRMRD::Acquisition>& acqs, const std::string& units = "",
                int nz = 1) {
  REQUIRE(!std::filesystem::exists(path));
  ISMRMRD::Dataset d(path.c_str(), "dataset", true);
  d.writeHeader(ismrmrd_header(16, 12, nz, units, {200, 150, 10}));  // 16x12 (x nz)
  for (const auto& a : acqs) d.appendAcquisition(a);
}

// How many of `lines` contain `text`.
int count_containing(const std::vector<std::string>& lines, const std::string& text) {
  return int(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return contains(l, text); }));
}

}  // namespace

TEST_CASE("ismrmrd: navigator, phase correction, dummy, feedback and calibration readouts are skipped",
          "[io][ismrmrd][reader-sweep]") {
  TempDir dir;
  const std::string path = dir.file("nav.h5");
  std::vector<ISMRMRD::Acquisition> acqs;
  for (int a = 0; a < 6; ++a) acqs.push_back(readout(a));
  const int kinds[] = {ISMRMRD::ISMRMRD_ACQ_IS_NAVIGATION_DATA,
                       ISMRMRD::ISMRMRD_ACQ_IS_PHASECORR_DATA,
                       ISMRMRD::ISMRMRD_ACQ_IS_DUMMYSCAN_DATA,
                       ISMRMRD::ISMRMRD_ACQ_IS_RTFEEDBACK_DATA,
                       ISMRMRD::ISMRMRD_ACQ_IS_HPFEEDBACK_DATA,
                       ISMRMRD::ISMRMRD_ACQ_IS_SURFACECOILCORRECTIONSCAN_DATA,
                       ISMRMRD::ISMRMRD_ACQ_IS_PHASE_STABILIZATION,
                       ISMRMRD::ISMRMRD_ACQ_IS_PHASE_STABILIZATION_REFERENCE,
                       ISMRMRD::ISMRMRD_ACQ_IS_PARALLEL_CALIBRATION};
  for (int i = 0; i < 9; ++i) acqs.insert(acqs.begin() + 1 + i % 5, junk(kinds[i]));
  // Calibration *and* imaging is image data.
  ISMRMRD::Acquisition both = junk(ISMRMRD::ISMRMRD_ACQ_IS_PARALLEL_CALIBRATION);
  ISMRMRD::AcquisitionHeader h = both.getHead();
  h.flags |= std::uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_IS_PARALLEL_CALIBRATION_AND_IMAGING - 1);
  both.setHead(h);
  acqs.push_back(both);
  write_file(path, acqs);

  LogCapture log;
  std::size_t counted = 0;
  const std::vector<Scan> r =
      read_ismrmrd(path, TrajUnits::unstated, [&](const ImageGrid&, std::size_t m, std::size_t) { counted = m; });
  REQUIRE(r.size() == 1);
  CHECK(counted == 7 * kSamples);  // the pre-count skips them too
  REQUIRE(r[0].data.size() == 7 * kSamples);
  for (int s = 0; s < 6 * kSamples; ++s) CHECK(std::abs(r[0].data[s]) < 10);  // the six image readouts, in order
  CHECK(r[0].data.back() == cfloat(1000.0f, 0.0f));                           // calibration and imaging, kept
  const auto lines = log.lines();
  CHECK(count_containing(lines, "non-image") == 1);
  CHECK(count_containing(lines, path + ": skipped 9 non-image acquisitions (") == 1);
  for (const char* word : {"navigator", "phase correction", "dummy scan", "RT feedback", "HP feedback",
                           "surface-coil correction", "phase stabilization reference", "parallel calibration"})
    CHECK(count_containing(lines, word) == 1);
}

TEST_CASE("ismrmrd: a file of more than one image is refused, averages are merged", "[io][ismrmrd][reader-sweep]") {
  TempDir dir;
  auto file_with = [&](const std::string& field, std::uint16_t value) {
    const std::string path = dir.file(field + std::to_string(value) + ".h5");
    std::vector<ISMRMRD::Acquisition> acqs;
    for (int a = 0; a < 3; ++a) acqs.push_back(readout(a));
    acqs.push_back(with(readout(3), field, value));
    write_file(path, acqs);
    return path;
  };
  for (const std::string field : {"slice", "contrast", "repetition", "set", "phase"}) {
    INFO(field);
    const std::string path = file_with(field, 1);
    CHECK(error_of([&] { read_ismrmrd(path); }) ==
          path + ": /dataset/data[3].idx." + field + " = 1: the file holds more than one " + field +
              " (the first image acquisition has 0); fhdrecon reconstructs one image per file");
  }
  const std::string enc = file_with("encoding_space_ref", 1);
  CHECK(contains(error_of([&] { read_ismrmrd(enc); }), enc + ": /dataset/data[3].encoding_space_ref = 1: not encoding[0]"));
  // Repeated readouts of the same image (idx.average) are read as one.
  CHECK(read_ismrmrd(file_with("average", 1))[0].data.size() == 4 * kSamples);
  // A navigator of another slice is skipped before it is compared.
  const std::string nav = dir.file("nav_slice.h5");
  write_file(nav, {readout(0), with(junk(ISMRMRD::ISMRMRD_ACQ_IS_NAVIGATION_DATA), "slice", 2), readout(1)});
  CHECK(read_ismrmrd(nav)[0].data.size() == 2 * kSamples);
}

TEST_CASE("ismrmrd: trajectory units stated by the caller or the file; normalized-looking ones unstated are refused",
          "[io][ismrmrd][reader-sweep]") {
  TempDir dir;
  std::vector<ISMRMRD::Acquisition> norm;  // kx in [-0.5, 0.375], ky in [-0.375, 0.25]
  for (int a = 0; a < 6; ++a) norm.push_back(readout(a, 0.125f));
  const std::string plain = dir.file("plain.h5"), tagged = dir.file("tagged.h5");
  write_file(plain, norm);
  write_file(tagged, norm, "normalized");
  CHECK(error_of([&] { read_ismrmrd(plain); }) ==
        plain + ": trajectory: max |k| = 0.5 on every axis although the matrix is 16x12: it looks normalized to "
                "[-0.5, 0.5]; give --traj-units normalized (Python: traj_units='normalized'; or cycles to read "
                "it as it is)");
  CHECK(error_of([&] { read_ismrmrd(plain, false); }) == error_of([&] { read_ismrmrd(plain); }));
  CHECK(read_ismrmrd(plain, TrajUnits::cycles)[0].traj.kx[0] == -0.5f);     // as it is
  CHECK(read_ismrmrd(plain, TrajUnits::normalized)[0].traj.kx[0] == -8.0f);  // times 16
  CHECK(read_ismrmrd(plain, TrajUnits::normalized)[0].traj.ky[0] == -4.5f);  // -0.375 times 12
  CHECK(read_ismrmrd(plain, true)[0].traj.kx[0] == -8.0f);                   // the Python binding's form
  // The file's word: enough alone, and the caller may repeat it but not contradict it.
  CHECK(read_ismrmrd(tagged)[0].traj.kx[0] == -8.0f);
  CHECK(read_ismrmrd(tagged, TrajUnits::normalized)[0].traj.kx[0] == -8.0f);
  CHECK(error_of([&] { read_ismrmrd(tagged, TrajUnits::cycles); }) ==
        tagged + ": --traj-units = cycles: the file says otherwise (/dataset/xml userParameterString "
                 "fhdrecon_traj_units = normalized); leave the option out");
  // One axis beyond 0.5 is a trajectory in cycles/FOV (a narrow band in ky is not a hint).
  std::vector<ISMRMRD::Acquisition> wide = norm;
  wide.push_back(readout(7, 1.0f));
  const std::string cycles = dir.file("wide.h5");
  write_file(cycles, wide);
  CHECK(read_ismrmrd(cycles)[0].traj.kx.back() == 3.0f);
  // An axis of N < 4 (a 2-partition 3D file's kz) is no hint either way.
  std::vector<ISMRMRD::Acquisition> thin;
  for (int a = 0; a < 6; ++a) {
    ISMRMRD::Acquisition acq(kSamples, 1, 3);
    for (int s = 0; s < kSamples; ++s) {
      acq.traj(0, s) = acq.traj(1, s) = acq.traj(2, s) = float(s - 4) / 8;
      acq.data(s, 0) = cfloat(1.0f, 0.0f);
    }
    thin.push_back(acq);
  }
  const std::string nz2 = dir.file("nz2.h5");
  write_file(nz2, thin, "", 2);
  CHECK(contains(error_of([&] { read_ismrmrd(nz2); }), "although the matrix is 16x12x2: it looks normalized"));
}
#endif
