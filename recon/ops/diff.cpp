#include "recon/ops/diff.hpp"

#include "recon/device/cpu_device.hpp"

namespace fhd {
namespace {

// Coordinate of voxel v along an axis of length len and stride s.
inline int coord(std::ptrdiff_t v, std::ptrdiff_t s, int len) { return int((v / s) % len); }

class DiffOp : public LinOp {
 public:
  DiffOp(Device& dev, const ImageGrid& grid)
      : LinOp(dev, image_shape(grid), stacked(grid), "D"), grid_(grid), k_(dev.kernels<DiffKernels>()) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { k_.gradient(x, y, grid_); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { k_.gradient_adjoint(y, x, grid_); }
  OpPtr make_normal() override { return laplacian(device(), grid_); }

 private:
  static Shape stacked(const ImageGrid& g) {
    Shape s = image_shape(g);
    s.dims.push_back(std::size_t(gradient_axes(g)));
    return s;
  }
  ImageGrid grid_;
  DiffKernels& k_;
};

class LaplacianOp : public HermitianOp {
 public:
  LaplacianOp(Device& dev, const ImageGrid& grid)
      : HermitianOp(dev, image_shape(grid), "D^H D"), grid_(grid), k_(dev.kernels<DiffKernels>()) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    device().set_zero(y);
    k_.laplacian_add(x, y, 1.0, grid_);
  }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override {
    if (a.imag() != 0.0) return HermitianOp::do_apply_add(x, y, a);
    k_.laplacian_add(x, y, a.real(), grid_);
  }

 private:
  ImageGrid grid_;
  DiffKernels& k_;
};

class CpuDiff : public DiffKernels {
 public:
  void gradient(const DeviceVector& x, DeviceVector& g, const ImageGrid& grid) override {
    gradient_host(host_data(x), host_data(g), grid);
  }
  void gradient_adjoint(const DeviceVector& g, DeviceVector& x, const ImageGrid& grid) override {
    gradient_adjoint_host(host_data(g), host_data(x), grid);
  }
  void laplacian_add(const DeviceVector& x, DeviceVector& y, double a, const ImageGrid& grid) override {
    laplacian_add_host(host_data(x), host_data(y), a, grid);
  }
};

}  // namespace

GradientAxes gradient_axes_of(const ImageGrid& g) {
  GradientAxes a;
  const int n[3] = {g.nx, g.ny, g.nz};
  const long long s[3] = {1, g.nx, (long long)g.nx * g.ny};
  for (int i = 0; i < 3; ++i)
    if (n[i] > 1) {
      a.len[a.count] = n[i];
      a.stride[a.count] = s[i];
      ++a.count;
    }
  return a;
}

int gradient_axes(const ImageGrid& grid) { return gradient_axes_of(grid).count; }

OpPtr finite_differences(Device& dev, const ImageGrid& grid) { return std::make_shared<DiffOp>(dev, grid); }

OpPtr laplacian(Device& dev, const ImageGrid& grid) { return std::make_shared<LaplacianOp>(dev, grid); }

std::unique_ptr<DiffKernels> make_cpu_diff(Device&) { return std::make_unique<CpuDiff>(); }

void gradient_host(const cfloat* x, cfloat* g, const ImageGrid& grid) {
  const GradientAxes a = gradient_axes_of(grid);
  const std::ptrdiff_t n = std::ptrdiff_t(grid.voxels());
  for (int k = 0; k < a.count; ++k) {
    cfloat* gk = g + k * n;
#pragma omp parallel for
    for (std::ptrdiff_t v = 0; v < n; ++v)
      gk[v] = coord(v, a.stride[k], a.len[k]) < a.len[k] - 1 ? x[v + a.stride[k]] - x[v] : cfloat(0.0f);
  }
}

void gradient_adjoint_host(const cfloat* g, cfloat* x, const ImageGrid& grid) {
  const GradientAxes a = gradient_axes_of(grid);
  const std::ptrdiff_t n = std::ptrdiff_t(grid.voxels());
#pragma omp parallel for
  for (std::ptrdiff_t v = 0; v < n; ++v) {
    cfloat s = 0.0f;
    for (int k = 0; k < a.count; ++k) {
      const cfloat* gk = g + k * n;
      const int c = coord(v, a.stride[k], a.len[k]);
      if (c < a.len[k] - 1) s -= gk[v];
      if (c > 0) s += gk[v - a.stride[k]];
    }
    x[v] = s;
  }
}

void laplacian_add_host(const cfloat* x, cfloat* y, double a, const ImageGrid& grid) {
  if (a == 0.0) return;
  const float lam = float(a);
  const std::ptrdiff_t sx = 1, sy = grid.nx, sz = std::ptrdiff_t(grid.nx) * grid.ny;
#pragma omp parallel for collapse(2)
  for (int iz = 0; iz < grid.nz; ++iz)
    for (int iy = 0; iy < grid.ny; ++iy)
      for (int ix = 0; ix < grid.nx; ++ix) {
        const std::ptrdiff_t i = ix + sy * iy + sz * iz;
        // (D^H D x)_i = sum over neighbours j along each axis of (x_i - x_j).
        cfloat d = 0.0f;
        if (ix > 0) d += x[i] - x[i - sx];
        if (ix < grid.nx - 1) d += x[i] - x[i + sx];
        if (iy > 0) d += x[i] - x[i - sy];
        if (iy < grid.ny - 1) d += x[i] - x[i + sy];
        if (iz > 0) d += x[i] - x[i - sz];
        if (iz < grid.nz - 1) d += x[i] - x[i + sz];
        y[i] += lam * d;
      }
}

}  // namespace fhd
