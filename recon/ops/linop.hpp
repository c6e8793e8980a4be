#pragma once
// Linear operators (docs/architecture.md, "Operators"), in the spirit of
// BART's linop_s and SigPy's Linop: an operator knows its input and output
// shapes and its device, applies itself and its adjoint, and gives its normal
// operator A^H A, a fast one where it has one (the Toeplitz embedding of the
// NUFFT and the exact gather, the Laplacian of finite differences) and else
// A^H after A. Compositions get their adjoint and normal for free:
//   compose({A, B})  A B        normal B^H (A^H A) B
//   vstack({A_c})    [A_0; A_1] normal sum_c A_c^H A_c   (SENSE: coils)
//   hstack({A_i})    [A_0, A_1] normal A^H A
//   sum({A, B})      A + B      normal A^H A
//   scale(a, A)      a A        normal |a|^2 A^H A
//   diag(d)          d_i x_i    normal |d_i|^2
// Operators keep scratch buffers: one operator is not re-entrant.
#include <memory>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "recon/device/device.hpp"

namespace fhd {

// An operator's input or output: its dims, fastest first ({nx, ny, nz} for an
// image, {m} for samples, {m, coils} for a stack of coils' samples).
struct Shape {
  std::vector<std::size_t> dims;
  std::size_t size() const;
  std::string str() const;  // "64x64x64"
  bool operator==(const Shape& o) const { return dims == o.dims; }
  bool operator!=(const Shape& o) const { return !(*this == o); }
};
Shape image_shape(const ImageGrid& g);
Shape samples_shape(std::size_t m);

class LinOp;
using OpPtr = std::shared_ptr<LinOp>;

class LinOp : public std::enable_shared_from_this<LinOp> {
 public:
  LinOp(Device& dev, Shape in, Shape out, std::string name);
  virtual ~LinOp() = default;
  LinOp(const LinOp&) = delete;
  LinOp& operator=(const LinOp&) = delete;

  Device& device() const { return *dev_; }
  const Shape& in() const { return in_; }
  const Shape& out() const { return out_; }
  const std::string& name() const { return name_; }

  // y = A x. Sizes and devices checked (std::invalid_argument); x and y must
  // not overlap.
  void apply(const DeviceVector& x, DeviceVector& y);
  // x = A^H y.
  void adjoint(const DeviceVector& y, DeviceVector& x);
  // y += a A x and x += a A^H y: sums and stacks add without temporaries
  // where an operator can (the Laplacian, diagonals).
  void apply_add(const DeviceVector& x, DeviceVector& y, cdouble a);
  void adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a);
  // A^H A, made at the first call and kept.
  OpPtr normal();
  // A^H as an operator (apply and adjoint swapped).
  OpPtr H();

  // Host conveniences (tests, small problems): upload, apply, download.
  std::vector<cfloat> apply(const std::vector<cfloat>& x);
  std::vector<cfloat> adjoint(const std::vector<cfloat>& y);

 protected:
  virtual void do_apply(const DeviceVector& x, DeviceVector& y) = 0;
  virtual void do_adjoint(const DeviceVector& y, DeviceVector& x) = 0;
  // Defaults: into a scratch vector, then axpy.
  virtual void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a);
  virtual void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a);
  // The default: compose({H(), this}).
  virtual OpPtr make_normal();
  // A scratch vector of n elements on this device, kept per slot.
  DeviceVector& scratch(int slot, std::size_t n);

 private:
  Device* dev_;
  Shape in_, out_;
  std::string name_;
  // Weak: a normal usually holds this operator (A^H A composes A; a Hermitian
  // or identity operator may be its own), so a strong cache was a cycle that
  // leaked the operator, its plan and their device memory (LeakSanitizer).
  // While a caller holds the normal, normal() returns the same one.
  std::weak_ptr<LinOp> normal_;
  std::vector<VecPtr> scratch_;
};

// An operator whose adjoint takes n right-hand sides in one call where its
// device batches them (the GPU NUFFT's type 1: SENSE's E^H y over coils).
class BatchedAdjoint {
 public:
  virtual ~BatchedAdjoint() = default;
  // False where a batch would only loop (the CPU, a split across devices).
  virtual bool batches() = 0;
  // x_i = A^H y_i, i < n: y holds n out-sized slices, x n in-sized ones.
  virtual void adjoint_batch(const DeviceVector& y, DeviceVector& x, int n) = 0;
};

// An operator equal to its adjoint (normal operators, Laplacians, real
// diagonals): do_adjoint is do_apply.
class HermitianOp : public LinOp {
 public:
  HermitianOp(Device& dev, Shape shape, std::string name) : LinOp(dev, shape, shape, std::move(name)) {}

 protected:
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { do_apply(y, x); }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override { do_apply_add(y, x, a); }
};

// ops[0] ops[1] ... ops[n-1]: ops[n-1] applies first. Shapes must chain.
OpPtr compose(std::vector<OpPtr> ops);
// ops[0] + ops[1] + ...: equal shapes.
OpPtr sum(std::vector<OpPtr> ops);
OpPtr scale(cdouble a, OpPtr op);
// [ops[0]; ops[1]; ...]: one input, the outputs one after another.
OpPtr vstack(std::vector<OpPtr> ops);
// [ops[0], ops[1], ...]: the inputs one after another, the outputs summed.
OpPtr hstack(std::vector<OpPtr> ops);
// x_i -> d_i x_i on d's device (d.size() elements, shape `shape`).
OpPtr diag(std::shared_ptr<DeviceVector> d, Shape shape);
OpPtr identity(Device& dev, Shape shape);

}  // namespace fhd
