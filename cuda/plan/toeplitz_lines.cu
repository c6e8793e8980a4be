// The Toeplitz product by line passes (cuda/plan/toeplitz_lines.hpp).
#include "cuda/plan/toeplitz_lines.hpp"

namespace fhd::gpu {

bool LineToeplitz::supports(const ImageGrid& n) {
  const ImageGrid len = n.doubled();
  return lines::supported_length(len.nx) && lines::supported_length(len.ny) &&
         (!n.is3d() || lines::supported_length(len.nz));
}

double LineToeplitz::scratch_bytes(const ImageGrid& n) {
  return (n.is3d() ? 6.0 : 2.0) * double(n.voxels()) * sizeof(float2);
}

LineToeplitz::LineToeplitz(const ImageGrid& n, cudaStream_t s, const std::string& what)
    : n_(n), len_(n.doubled()), s_(s) {
  if (!supports(n)) throw DeviceError("line FFT: unsupported grid " + dims_string(n));
  rows_.allocate(std::size_t(len_.nx) * n_.ny * n_.nz, what + " (x pass)", Reach::DeviceOnly);
  if (n.is3d()) slabs_.allocate(std::size_t(len_.nx) * len_.ny * n_.nz, what + " (y pass)", Reach::DeviceOnly);
}

void LineToeplitz::apply(const float2* x, const float2* map, const Spectrum& spectrum, float2* y, bool accumulate) {
  using lines::Lines, lines::Mode, lines::pass, lines::run;
  const long long nx = n_.nx, ny = n_.ny, lx = len_.nx, ly = len_.ny;
  // rows: lx x ny x nz; slabs (and the spectrum, over all of z): lx x ly x nz.
  const Lines image_x{nx, nx * ny, 1}, rows_x{lx, lx * ny, 1};
  const Lines rows_y{1, lx * ny, lx}, slabs_y{1, lx * ly, lx}, slabs_z{1, lx, lx * ly};
  lines::Pass p = pass(x, image_x, n_.nx, rows_.get(), rows_x, len_.nx, n_.ny, n_.nz);
  p.map = map;
  run(Mode::Forward, true, len_.nx, p, s_);
  if (n_.is3d()) {
    run(Mode::Forward, false, len_.ny, pass(rows_.get(), rows_y, n_.ny, slabs_.get(), slabs_y, len_.ny, len_.nx, n_.nz),
        s_);
    p = pass(slabs_.get(), slabs_z, n_.nz, slabs_.get(), slabs_z, n_.nz, len_.nx, len_.ny);
    p.spectrum = spectrum;
    run(Mode::Convolve, false, len_.nz, p, s_);
    run(Mode::Inverse, false, len_.ny, pass(slabs_.get(), slabs_y, len_.ny, rows_.get(), rows_y, n_.ny, len_.nx, n_.nz),
        s_);
  } else {  // y is the last axis: the rows' y lines are the fused pass (the spectrum is lx x ly)
    p = pass(rows_.get(), rows_y, n_.ny, rows_.get(), rows_y, n_.ny, len_.nx, 1);
    p.spectrum = spectrum;
    run(Mode::Convolve, false, len_.ny, p, s_);
  }
  p = pass(rows_.get(), rows_x, len_.nx, y, image_x, n_.nx, n_.ny, n_.nz);
  p.map = map;
  p.accumulate = accumulate;
  run(Mode::Inverse, true, len_.nx, p, s_);
}

}  // namespace fhd::gpu
