#pragma once
// Analytic phantoms with exact k-space (no inverse crime). Geometry and scaling
// follow docs/conventions.md: FOV = 1, x in [-1/2, 1/2), the Koay 2007 phantom is
// defined on u in [-1,1]^3 and mapped by x = u/2.
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "phantom/trajectory.hpp"

namespace fhd {

class Phantom {
 public:
  virtual ~Phantom() = default;
  virtual std::string name() const = 0;  // "shepp3d" | "shepp2d"
  virtual int dims() const = 0;          // 2 or 3
  // Intensity at a point (FOV units). For 2D, z is ignored.
  virtual double image(double x, double y, double z) const = 0;
  // Continuous Fourier transform S(k) = integral f(x) exp(-i 2 pi k.x) dx,
  // k in cycles/FOV. For 2D, kz is ignored (2D integral).
  virtual std::complex<double> kspace(double kx, double ky, double kz) const = 0;
  // Largest intensity of the phantom (for PSNR's peak).
  virtual double peak() const = 0;
  // Its shapes one by one (phantom/offresonance.hpp builds exact off-resonance
  // data from them): how many, whether a point is inside shape e, and the
  // Fourier transform of shape e's indicator (unit intensity). A phantom that
  // is not a sum of shapes has none (the defaults).
  virtual int shapes() const { return 0; }
  virtual bool inside(int, double, double, double) const { return false; }
  virtual std::complex<double> shape_kspace(int, double, double, double) const { return 0.0; }
};

// "shepp3d" | "shepp2d"; throws std::invalid_argument otherwise.
std::unique_ptr<Phantom> make_phantom(const std::string& name);
const std::vector<std::string>& phantom_names();

// Voxel centre x_i = (i - N/2)/N with integer N/2, so index N/2 is the origin.
inline double voxel_center(int i, int n) { return double(i - n / 2) / double(n); }

// Reference image I0: the phantom at voxel centers x_i = (i - N/2)/N,
// x fastest (index = ix + nx*(iy + ny*iz)).
std::vector<float> voxel_image(const Phantom& p, int nx, int ny, int nz);

// D_m = S(k_m) * nx*ny*nz (docs/conventions.md "Data scaling"), in float64 then rounded.
// Throws std::invalid_argument for a 2D phantom with nz != 1 and a 3D phantom
// with nz == 1 (its kz = 0 data would be a projection, not the slice I0 holds).
std::vector<std::complex<float>> synthesize(const Phantom& p, const Trajectory& t, int nx, int ny,
                                            int nz);

// The checks synthesize() makes on the grid (also used by synthesize_coils).
void check_synthesis_grid(const Phantom& p, int nx, int ny, int nz);

// Adds complex Gaussian noise n_m = sigma * (g1 + i g2), g1, g2 independent
// standard normals, sigma = rel_sigma * sqrt(mean_m |D_m|^2) (so E|n|^2 = 2 sigma^2).
// The normals come from std::mt19937_64(seed) through our own Box-Muller, so the
// result is the same with every standard library. rel_sigma = 0 leaves data as is;
// rel_sigma < 0 or not finite throws std::invalid_argument. See docs/phantom.md.
void add_noise(std::vector<std::complex<float>>& data, double rel_sigma, std::uint64_t seed);

}  // namespace fhd
