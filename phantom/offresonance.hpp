#pragma once
// Off-resonance in synthetic scans, with exact data (docs/field-maps.md). The
// signal of sample m at time t_m after excitation, f(x) the field in Hz
// relative to the demodulation frequency:
//   s_m = integral rho(x) exp(-i 2 pi (k_m . x + f(x) t_m)) dx.
// The field here is a linear part f0 + g . x over the whole object, with
// some of the phantom's innermost shapes set to constants of their own. Both
// keep the data analytic: a linear field shifts k by g t_m, and a shape whose
// intensity is constant inside (no other shape cuts it) adds its own term.
#include <complex>
#include <vector>

#include "phantom/coils.hpp"
#include "phantom/phantom.hpp"

namespace fhd {

struct FieldSpec {
  double max_hz = 0;       // largest |f| anywhere in the object; 0 = no off-resonance
  double readout_s = 0.01; // each readout's duration (first to last sample)
  double te_s = 0.001;     // time of a readout's first sample after excitation
};

// The field's pieces for one phantom: f(x) = f0 + g . x, except inside each
// listed shape, where it is that shape's constant.
struct PhantomField {
  double f0 = 0, gx = 0, gy = 0, gz = 0;  // Hz, Hz per FOV
  struct Region {
    int shape;       // index into the phantom's shapes (innermost, uncut)
    double hz;       // the field inside it
    double density;  // the phantom's (constant) intensity inside it
  };
  std::vector<Region> regions;
  double at(const Phantom& p, double x, double y, double z) const;
};

// The field fhdrecon's phantoms get for spec.max_hz: a gradient along y of
// +-max_hz/2 across the FOV and two uncut shapes at +max_hz and -max_hz (a
// phantom without shapes gets the gradient only). Throws std::invalid_argument
// for a max_hz that is not finite or negative.
PhantomField phantom_field(const Phantom& p, const FieldSpec& spec);

// t_m of every sample, readout fastest (phantom/trajectory.hpp's layout):
// te + j * readout / (readout_samples - 1) for sample j of its readout.
std::vector<float> sample_times(std::size_t samples, int readout_samples, const FieldSpec& spec);

// The field map at voxel centres (x fastest), Hz.
std::vector<float> field_at_voxels(const Phantom& p, const PhantomField& f, int nx, int ny, int nz);

// D_m = s_m * nx*ny*nz (synthesize()'s scaling) for the field f, in float64
// then rounded. times: one per sample.
std::vector<std::complex<float>> synthesize_offresonance(const Phantom& p, const Trajectory& t,
                                                         const std::vector<float>& times, const PhantomField& f,
                                                         int nx, int ny, int nz);

// The same seen by a coil array (phantom/coils.hpp): s_c = sum_j a_cj
// e^{i 2 pi g_j . x}, so coil c's data are sum_j a_cj D(k - g_j) at the same
// times, exactly: [coil][sample].
std::vector<std::vector<std::complex<float>>> synthesize_offresonance_coils(const Phantom& p, const CoilArray& coils,
                                                                           const Trajectory& t,
                                                                           const std::vector<float>& times,
                                                                           const PhantomField& f, int nx, int ny,
                                                                           int nz);

}  // namespace fhd
