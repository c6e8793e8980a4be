// Band-limited reference through FFTW in double (a one-off, so precision
// over speed, and independent of the backends it is used to judge).
#include "recon/eval/reference.hpp"

#include <fftw3.h>

#include <mutex>

#include "recon/plan/toeplitz.hpp"

namespace fhd {
namespace {

// Position of centered index c (c - n/2 in [-n/2, n/2)) in FFTW's order.
std::size_t unshift(int c, int n) { return std::size_t(((c - n / 2) % n + n) % n); }

bool in_band(int cx, int cy, int cz, const ImageGrid& g) {
  auto term = [](int c, int n) {
    if (n == 1) return 0.0;
    double r = double(c - n / 2) / (0.5 * n);
    return r * r;
  };
  return term(cx, g.nx) + term(cy, g.ny) + term(cz, g.nz) <= 1.0;
}

}  // namespace

std::vector<cfloat> band_limited_image(const KSpaceFn& kspace, const ImageGrid& g) {
  const std::size_t nv = g.voxels();
  fftw_complex* buf = fftw_alloc_complex(nv);
  const double scale = double(nv);  // D = S * Nvox
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int cz = 0; cz < g.nz; ++cz)
    for (int cy = 0; cy < g.ny; ++cy)
      for (int cx = 0; cx < g.nx; ++cx) {
        std::size_t at = unshift(cx, g.nx) + std::size_t(g.nx) * (unshift(cy, g.ny) + std::size_t(g.ny) * unshift(cz, g.nz));
        cdouble v = 0.0;
        if (in_band(cx, cy, cz, g)) v = kspace(cx - g.nx / 2, cy - g.ny / 2, cz - g.nz / 2) * scale;
        buf[at][0] = v.real();
        buf[at][1] = v.imag();
      }
  {
    // FFTW's planner is not thread-safe: the ceiling may run beside other stages.
    std::lock_guard<std::mutex> lock(fftw_planner_lock());
    fftw_plan plan = fftw_plan_dft_3d(g.nz, g.ny, g.nx, buf, buf, FFTW_BACKWARD, FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
  }
  std::vector<cfloat> out(nv);
  for (int jz = 0; jz < g.nz; ++jz)
    for (int jy = 0; jy < g.ny; ++jy)
      for (int jx = 0; jx < g.nx; ++jx) {
        std::size_t at = unshift(jx, g.nx) + std::size_t(g.nx) * (unshift(jy, g.ny) + std::size_t(g.ny) * unshift(jz, g.nz));
        out[jx + std::size_t(g.nx) * (jy + std::size_t(g.ny) * jz)] = cfloat(float(buf[at][0] / nv), float(buf[at][1] / nv));
      }
  fftw_free(buf);
  return out;
}

}  // namespace fhd
