#include "recon/ops/fft.hpp"

#include <cmath>
#include <stdexcept>

#include "recon/device/cpu_device.hpp"
#include "recon/plan/toeplitz.hpp"  // FftwPlan

namespace fhd {
namespace {

// Per axis: output index j takes input index perm[j] of a centered transform.
// x_j = sum_k X_k e^{+-i2pi (k-h)(j-h)/n}, h = n/2: feed X_k at (k - h) mod n,
// run the plain DFT, read result j at (j - h) mod n. Any n, odd too.
std::vector<int> shift_by(int n, int h) {
  std::vector<int> perm(n);
  for (int i = 0; i < n; ++i) perm[i] = (i - h + n) % n;
  return perm;
}

void permute(const cfloat* in, cfloat* out, const ImageGrid& d, bool scatter) {
  const std::vector<int> px = shift_by(d.nx, d.nx / 2), py = shift_by(d.ny, d.ny / 2), pz = shift_by(d.nz, d.nz / 2);
#pragma omp parallel for collapse(2)
  for (int iz = 0; iz < d.nz; ++iz)
    for (int iy = 0; iy < d.ny; ++iy)
      for (int ix = 0; ix < d.nx; ++ix) {
        const std::size_t a = ix + d.nx * (iy + std::size_t(d.ny) * iz);
        const std::size_t b = px[ix] + d.nx * (py[iy] + std::size_t(d.ny) * pz[iz]);
        if (scatter)
          out[b] = in[a];
        else
          out[a] = in[b];
      }
}

void centered_in_place(cfloat* data, const ImageGrid& dims, bool inverse) {
  std::vector<cfloat> work(dims.voxels());
  permute(data, work.data(), dims, true);
  FftwPlan(dims, work.data(), inverse).execute();
  permute(work.data(), data, dims, false);
}

class CpuFft : public FftKernels {
 public:
  void centered(DeviceVector& grid, const ImageGrid& dims, bool inverse) override {
    if (grid.size() != dims.voxels()) throw std::invalid_argument("centered DFT: the grid's size is not its dims'");
    centered_in_place(host_data(grid), dims, inverse);
  }
};

// The unitary centred DFT; its adjoint is the inverse.
class FftOp : public LinOp {
 public:
  FftOp(Device& dev, const ImageGrid& grid)
      : LinOp(dev, image_shape(grid), image_shape(grid), "FFT"), grid_(grid), k_(dev.kernels<FftKernels>()) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { run(x, y, false); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { run(y, x, true); }
  OpPtr make_normal() override { return identity(device(), in()); }

 private:
  void run(const DeviceVector& in, DeviceVector& out, bool inverse) {
    device().copy(in, out);
    k_.centered(out, grid_, inverse);
    device().scale(1.0 / std::sqrt(double(grid_.voxels())), out);
  }
  ImageGrid grid_;
  FftKernels& k_;
};

}  // namespace

void centered_dft_host(std::vector<cfloat>& grid, const ImageGrid& dims, bool inverse) {
  if (grid.size() != dims.voxels()) throw std::invalid_argument("centered DFT: the grid's size is not its dims'");
  centered_in_place(grid.data(), dims, inverse);
}

std::unique_ptr<FftKernels> make_cpu_fft(Device&) { return std::make_unique<CpuFft>(); }

OpPtr fft_op(Device& dev, const ImageGrid& grid) { return std::make_shared<FftOp>(dev, grid); }

}  // namespace fhd
