// Coil processing for Python (docs/coils.md): prewhitening, coil
// compression, and the sensitivity maps SENSE uses (low-resolution and
// ESPIRiT), computed as the pipeline computes them (recon/pipeline/pipeline.cpp,
// estimate_maps) on the CPU backend. Scans cross as dicts (common.hpp).
#include <cmath>
#include <sstream>

#include "common.hpp"
#include "core/error.hpp"
#include "io/scan_checks.hpp"
#include "recon/device/device.hpp"
#include "recon/coils/coil_compress.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/coils/coil_noise.hpp"

namespace fhd::py {
namespace {

using ComplexMatrix = nb::ndarray<nb::numpy, cdouble>;

ComplexMatrix to_array(const CMatrix& m) {
  return owned_array(std::vector<cdouble>(m.v), {std::size_t(m.rows), std::size_t(m.cols)});
}

CMatrix from_array(const nb::ndarray<const cdouble, nb::ndim<2>, nb::c_contig, nb::device::cpu>& a) {
  CMatrix m(int(a.shape(0)), int(a.shape(1)));
  std::copy(a.data(), a.data() + a.size(), m.v.begin());
  return m;
}

// Maps [C][voxels] as one [C, nz, ny, nx] complex64 array.
nb::ndarray<nb::numpy, cfloat> maps_array(const CoilData& maps, const ImageGrid& g) {
  std::vector<cfloat> all;
  all.reserve(maps.size() * g.voxels());
  for (const auto& m : maps) all.insert(all.end(), m.begin(), m.end());
  return owned_array(std::move(all), {maps.size(), std::size_t(g.nz), std::size_t(g.ny), std::size_t(g.nx)});
}

// The arguments reconstruct() checks through its options, named as these
// functions take them (maps of zeros for crop=nan before, crop=5 accepted).
void check_number(const char* name, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    std::ostringstream s;
    s << "must be a finite number in [" << lo << ", " << hi << "]";
    std::ostringstream value;
    value << v;
    throw InputError("coil maps", name, value.str(), s.str());
  }
}

void check_calibration(int cal) {
  if (cal < 4 || cal > 256) throw InputError("coil maps", "calibration", std::to_string(cal), "must be in 4..256");
}

Calibration calibrate(const std::vector<Scan>& coils, int cal, const std::string& dcf) {
  std::unique_ptr<Device> dev = make_cpu_device();
  return calibration_from_scans(*dev, coils, cal, dcf);
}

nb::ndarray<nb::numpy, cfloat> lowres(const nb::dict& scan, int cal, double crop, const std::string& dcf) {
  check_calibration(cal);
  check_number("crop", crop, 0.0, 0.9);
  const std::vector<Scan> coils = scans_from_dict(scan);
  const ImageGrid& g = coils[0].grid;
  CoilData maps;
  {
    nb::gil_scoped_release unlocked;
    maps = maps_lowres(calibrate(coils, cal, dcf), g, crop);
  }
  return maps_array(maps, g);
}

nb::ndarray<nb::numpy, cfloat> espirit(const nb::dict& scan, int cal, int kernel, double threshold, double crop,
                                       double support_crop, const std::string& dcf) {
  check_calibration(cal);
  check_number("threshold", threshold, 1e-6, 1.0);
  check_number("crop", crop, 0.0, 1.0);
  check_number("support_crop", support_crop, 0.0, 0.9);
  const std::vector<Scan> coils = scans_from_dict(scan);
  const ImageGrid& g = coils[0].grid;
  CoilData maps;
  {
    nb::gil_scoped_release unlocked;
    const Calibration c = calibrate(coils, cal, dcf);
    // The lowres maps' support on ESPIRiT's maps, as the pipeline does.
    const std::vector<bool> keep = lowres_support(c, g, support_crop);
    maps = maps_espirit(c, g, EspiritOptions{kernel, threshold, crop}, keep);
    for (auto& m : maps)
      for (std::size_t v = 0; v < m.size() && v < keep.size(); ++v)
        if (!keep[v]) m[v] = 0;
  }
  return maps_array(maps, g);
}

nb::tuple prewhiten_scan(const nb::dict& scan) {
  std::vector<Scan> coils = scans_from_dict(scan);
  CMatrix w;
  const bool applied = prewhiten(coils, &w);
  return nb::make_tuple(scans_to_dict(coils), applied ? nb::cast(to_array(w)) : nb::none());
}

nb::tuple compress_scan(const nb::dict& scan, int k) {
  std::vector<Scan> coils = scans_from_dict(scan);
  // Named here as this function takes it: the library leaves the coils as they
  // are for k > coils (the CLI refuses it too) and names k < 1 --virtual-coils.
  if (k < 1 || k > int(coils.size()))
    throw InputError("compress_coils", "k", std::to_string(k), "must be in 1..coils (" + std::to_string(coils.size()) + ")");
  const Compression c = compress_coils(coils, k);
  return nb::make_tuple(scans_to_dict(coils), to_array(c.matrix),
                        owned_array(std::vector<double>(c.energy), {c.energy.size()}));
}

}  // namespace

void bind_coils(nb::module_& m) {
  m.def("lowres_maps", &lowres, nb::arg("scan"), nb::arg("calibration"), nb::arg("crop"), nb::arg("dcf"));
  m.def("espirit_maps", &espirit, nb::arg("scan"), nb::arg("calibration"), nb::arg("kernel"), nb::arg("threshold"),
        nb::arg("crop"), nb::arg("support_crop"), nb::arg("dcf"));
  m.def("prewhiten", &prewhiten_scan, nb::arg("scan"));
  m.def("compress_coils", &compress_scan, nb::arg("scan"), nb::arg("k"));
  m.def(
      "noise_covariance",
      [](const nb::ndarray<const cfloat, nb::ndim<2>, nb::c_contig, nb::device::cpu>& noise) {
        CoilData n(noise.shape(0));
        for (std::size_t c = 0; c < n.size(); ++c) {
          n[c].assign(noise.data() + c * noise.shape(1), noise.data() + (c + 1) * noise.shape(1));
          // the scans' rule: a NaN gave a NaN matrix, named only by whitening_matrix
          validate_finite(n[c], "noise_covariance", "noise[" + std::to_string(c) + "]");
        }
        return to_array(noise_covariance(n));
      },
      nb::arg("noise"));
  m.def(
      "whitening_matrix", [](const nb::ndarray<const cdouble, nb::ndim<2>, nb::c_contig, nb::device::cpu>& psi,
                             bool keep_scale) { return to_array(whitening_matrix(from_array(psi), keep_scale)); },
      nb::arg("psi"), nb::arg("keep_scale"));
}

}  // namespace fhd::py
