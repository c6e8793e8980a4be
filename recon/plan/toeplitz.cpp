#include "recon/plan/toeplitz.hpp"

#include <fftw3.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "recon/device/cpu_device.hpp"
#include "recon/plan/precond.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fhd {

std::mutex& fftw_planner_lock() {
  static std::mutex lock;
  static std::once_flag threads_started;
  std::call_once(threads_started, [] {
#if defined(FHD_HAVE_FFTW_OMP) && defined(_OPENMP)
    fftwf_init_threads();
    fftwf_plan_with_nthreads(omp_get_max_threads());
#endif
  });
  return lock;
}

FftwPlan::FftwPlan(const ImageGrid& dims, cfloat* data, bool inverse) {
  // FFTW is row major (last index fastest): pass (nz, ny, nx), dropping nz = 1.
  int n[3] = {dims.nz, dims.ny, dims.nx};
  const int rank = dims.nz > 1 ? 3 : 2;
  auto* buf = reinterpret_cast<fftwf_complex*>(data);
  std::lock_guard<std::mutex> guard(fftw_planner_lock());
  plan_ = fftwf_plan_dft(rank, n + (3 - rank), buf, buf, inverse ? FFTW_BACKWARD : FFTW_FORWARD,
                         FFTW_ESTIMATE);
  if (!plan_) throw std::runtime_error("FFTW could not make a plan");
}

FftwPlan::~FftwPlan() {
  std::lock_guard<std::mutex> guard(fftw_planner_lock());
  fftwf_destroy_plan(static_cast<fftwf_plan>(plan_));
}

void FftwPlan::execute() { fftwf_execute(static_cast<fftwf_plan>(plan_)); }

namespace {

// Each axis's lower n of the doubled 2n: where pad(x) puts x and crop reads.
std::array<std::vector<KeptRange>, 3> lower_halves(const ImageGrid& n) {
  return {{{{0, n.nx}}, {{0, n.ny}}, {{0, n.nz}}}};
}

}  // namespace

PaddedFftw::PaddedFftw(const ImageGrid& n, const ImageGrid& doubled, cfloat* data, int batch)
    : forward_(doubled, lower_halves(n), PrunedFft::Pruned::Input, {0, 1, 2}, FFTW_FORWARD, batch, data),
      inverse_(doubled, lower_halves(n), PrunedFft::Pruned::Output, {2, 1, 0}, FFTW_BACKWARD, batch, data) {}

namespace {

// Index j on a doubled axis of length len holds lag j - len/2; the circulant
// wants lag l at l mod len, i.e. index (j + len/2) mod len (ifftshift). An axis
// of length 1 maps to itself.
int circ_index(int j, int len) { return (j + len / 2) % len; }

}  // namespace

std::vector<cfloat> toeplitz_spectrum(const std::vector<cfloat>& q, const ImageGrid& grid) {
  const ImageGrid dbl = grid.doubled();
  if (q.size() != dbl.voxels()) throw std::invalid_argument("toeplitz: Q must have grid.doubled() points");
  std::vector<cfloat> k(q.size());
  for (int jz = 0; jz < dbl.nz; ++jz)
    for (int jy = 0; jy < dbl.ny; ++jy)
      for (int jx = 0; jx < dbl.nx; ++jx)
        k[circ_index(jx, dbl.nx) + dbl.nx * (circ_index(jy, dbl.ny) + std::size_t(dbl.ny) * circ_index(jz, dbl.nz))] =
            q[jx + dbl.nx * (jy + std::size_t(dbl.ny) * jz)];
  FftwPlan(dbl, k.data(), false).execute();
  return k;
}

ToeplitzOperator::ToeplitzOperator(Device& dev, const std::vector<cfloat>& q, const ImageGrid& grid)
    : HermitianOp(dev, image_shape(grid), "T"), grid_(grid), dbl_(grid.doubled()), spectrum_(toeplitz_spectrum(q, grid)) {
  // Fold the 1/(doubled voxels) of the unnormalized inverse FFT into K.
  const float scale = float(1.0 / double(dbl_.voxels()));
  for (cfloat& v : spectrum_) v *= scale;
}

void ToeplitzOperator::do_apply(const DeviceVector& x, DeviceVector& y) { apply(host_data(x), host_data(y), 1); }

ToeplitzOperator::Batch& ToeplitzOperator::batch(int n) {
  Batch& b = batches_[n];
  if (!b.fft) {
    b.buffer.assign(dbl_.voxels() * n, cfloat(0.0f));
    b.fft = std::make_unique<PaddedFftw>(grid_, dbl_, b.buffer.data(), n);
  }
  return b;
}

void ToeplitzOperator::apply(const cfloat* x, cfloat* y, int n) {
  if (n < 1) throw std::invalid_argument("toeplitz apply: need at least one vector");
  Batch& b = batch(n);
  const int nx = grid_.nx, ny = grid_.ny, nz = grid_.nz, X = dbl_.nx, Y = dbl_.ny, Z = dbl_.nz;
  const std::size_t vox = grid_.voxels(), dvox = dbl_.voxels();
  cfloat* buf = b.buffer.data();
  // pad(x): every row of each doubled grid is x's row followed by zeros, or zeros.
#pragma omp parallel for collapse(3)
  for (int t = 0; t < n; ++t)
    for (int iz = 0; iz < Z; ++iz)
      for (int iy = 0; iy < Y; ++iy) {
        cfloat* row = buf + t * dvox + X * (iy + std::size_t(Y) * iz);
        const bool inside = iz < nz && iy < ny;
        if (inside) std::copy_n(x + t * vox + nx * (iy + std::size_t(ny) * iz), nx, row);
        std::fill(row + (inside ? nx : 0), row + X, cfloat(0.0f));
      }
  b.fft->forward();
#pragma omp parallel for collapse(2)
  for (int t = 0; t < n; ++t)
    for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(dvox); ++i) {
      const cfloat a = buf[t * dvox + i], k = spectrum_[i];
      buf[t * dvox + i] = {a.real() * k.real() - a.imag() * k.imag(), a.real() * k.imag() + a.imag() * k.real()};
    }
  b.fft->inverse();
#pragma omp parallel for collapse(3)
  for (int t = 0; t < n; ++t)
    for (int iz = 0; iz < nz; ++iz)
      for (int iy = 0; iy < ny; ++iy)
        std::copy_n(buf + t * dvox + X * (iy + std::size_t(Y) * iz), nx, y + t * vox + nx * (iy + std::size_t(ny) * iz));
}

namespace {

// The circulant M = IFFT(eig . FFT(x)) on host vectors.
class CirculantOp : public HermitianOp {
 public:
  CirculantOp(Device& dev, const std::vector<float>& eig, const ImageGrid& grid)
      : HermitianOp(dev, image_shape(grid), "M"), c_(eig, grid) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { c_.apply(host_data(x), host_data(y)); }

 private:
  HostCirculant c_;
};

std::vector<cfloat> host_values(const DeviceVector& v) {
  const cfloat* p = host_data(v);
  return std::vector<cfloat>(p, p + v.size());
}

class CpuToeplitz : public ToeplitzKernels {
 public:
  explicit CpuToeplitz(Device& dev) : dev_(dev) {}
  OpPtr normal(const DeviceVector& q, const ImageGrid& grid) override {
    return std::make_shared<ToeplitzOperator>(dev_, host_values(q), grid);
  }
  OpPtr preconditioner(const DeviceVector& q, const ImageGrid& grid, double lambda) override {
    const std::vector<float> inv = inverse_eigenvalues(circulant_eigenvalues(host_values(q), grid, lambda));
    return std::make_shared<CirculantOp>(dev_, inv, grid);
  }
  std::vector<double> spectrum(const DeviceVector& q, const ImageGrid& grid) override {
    return circulant_eigenvalues(host_values(q), grid, 0.0);
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<ToeplitzKernels> make_cpu_toeplitz(Device& dev) { return std::make_unique<CpuToeplitz>(dev); }

}  // namespace fhd
