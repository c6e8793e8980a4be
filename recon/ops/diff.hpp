#pragma once
// Finite differences (docs/accuracy.md, "Total variation"): D x stacks the
// forward differences along every axis of length > 1, one image per axis in
// x, y, z order, 0 at the far end (Neumann). D^H D is the Laplacian stencil
// (-1, 2, -1) with (1, -1) at the ends: the l2 regularizer's R^H R, so D's
// normal is that stencil in one pass. TV is (D, isotropic group l1).
#include <memory>

#include "recon/ops/linop.hpp"

namespace fhd {

// Axes of length > 1: the number of difference images in D x.
int gradient_axes(const ImageGrid& grid);

// Length and stride of each axis of length > 1, in x, y, z order (plain data:
// the GPU kernels take it by value).
struct GradientAxes {
  int count = 0;
  int len[3] = {1, 1, 1};
  long long stride[3] = {1, 1, 1};
};
GradientAxes gradient_axes_of(const ImageGrid& g);

class DiffKernels {
 public:
  virtual ~DiffKernels() = default;
  virtual void gradient(const DeviceVector& x, DeviceVector& g, const ImageGrid& grid) = 0;          // g = D x
  virtual void gradient_adjoint(const DeviceVector& g, DeviceVector& x, const ImageGrid& grid) = 0;  // x = D^H g
  // y += a D^H D x, in one pass.
  virtual void laplacian_add(const DeviceVector& x, DeviceVector& y, double a, const ImageGrid& grid) = 0;
};

// D on `grid`: image -> gradient_axes(grid) images. Its normal is laplacian().
OpPtr finite_differences(Device& dev, const ImageGrid& grid);
// D^H D.
OpPtr laplacian(Device& dev, const ImageGrid& grid);

// The host loops (the CPU's kernels, and the reference the GPU's follow).
void gradient_host(const cfloat* x, cfloat* g, const ImageGrid& grid);
void gradient_adjoint_host(const cfloat* g, cfloat* x, const ImageGrid& grid);
void laplacian_add_host(const cfloat* x, cfloat* y, double a, const ImageGrid& grid);
std::unique_ptr<DiffKernels> make_cpu_diff(Device& dev);

}  // namespace fhd
