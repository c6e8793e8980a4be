#include "recon/ops/linop.hpp"

#include <stdexcept>

namespace fhd {

std::size_t Shape::size() const {
  std::size_t n = 1;
  for (std::size_t d : dims) n *= d;
  return n;
}

std::string Shape::str() const {
  std::string s;
  for (std::size_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

Shape image_shape(const ImageGrid& g) {
  return {{std::size_t(g.nx), std::size_t(g.ny), std::size_t(g.nz)}};
}

Shape samples_shape(std::size_t m) { return {{m}}; }

LinOp::LinOp(Device& dev, Shape in, Shape out, std::string name)
    : dev_(&dev), in_(std::move(in)), out_(std::move(out)), name_(std::move(name)) {}

namespace {

void check(const LinOp& op, const DeviceVector& v, const Shape& s, const char* role) {
  if (v.size() != s.size())
    throw std::invalid_argument(op.name() + ": " + role + " has " + std::to_string(v.size()) + " elements, expected " +
                                std::to_string(s.size()) + " (" + s.str() + ")");
  require_on(op.device(), v, op.name().c_str());
}

}  // namespace

void LinOp::apply(const DeviceVector& x, DeviceVector& y) {
  check(*this, x, in_, "input");
  check(*this, y, out_, "output");
  do_apply(x, y);
}

void LinOp::adjoint(const DeviceVector& y, DeviceVector& x) {
  check(*this, y, out_, "adjoint's input");
  check(*this, x, in_, "adjoint's output");
  do_adjoint(y, x);
}

void LinOp::apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) {
  check(*this, x, in_, "input");
  check(*this, y, out_, "output");
  do_apply_add(x, y, a);
}

void LinOp::adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) {
  check(*this, y, out_, "adjoint's input");
  check(*this, x, in_, "adjoint's output");
  do_adjoint_add(y, x, a);
}

void LinOp::do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) {
  DeviceVector& t = scratch(0, out_.size());
  do_apply(x, t);
  dev_->axpy(a, t, y);
}

void LinOp::do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) {
  DeviceVector& t = scratch(1, in_.size());
  do_adjoint(y, t);
  dev_->axpy(a, t, x);
}

DeviceVector& LinOp::scratch(int slot, std::size_t n) {
  if (scratch_.size() <= std::size_t(slot)) scratch_.resize(std::size_t(slot) + 1);
  VecPtr& v = scratch_[std::size_t(slot)];
  if (!v || v->size() != n) v = dev_->zeros(n);
  return *v;
}

OpPtr LinOp::normal() {
  OpPtr n = normal_.lock();
  if (!n) {
    n = make_normal();
    normal_ = n;
  }
  return n;
}

std::vector<cfloat> LinOp::apply(const std::vector<cfloat>& x) {
  VecPtr xv = dev_->upload(x), yv = dev_->zeros(out_.size());
  apply(*xv, *yv);
  return dev_->download(*yv);
}

std::vector<cfloat> LinOp::adjoint(const std::vector<cfloat>& y) {
  VecPtr yv = dev_->upload(y), xv = dev_->zeros(in_.size());
  adjoint(*yv, *xv);
  return dev_->download(*xv);
}

namespace {

// A^H: apply and adjoint swapped; its normal is A A^H.
class AdjointOp : public LinOp {
 public:
  explicit AdjointOp(OpPtr a) : LinOp(a->device(), a->out(), a->in(), a->name() + "^H"), a_(std::move(a)) {}
  OpPtr of() const { return a_; }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { a_->adjoint(x, y); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { a_->apply(y, x); }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override { a_->adjoint_add(x, y, a); }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override { a_->apply_add(y, x, a); }

 private:
  OpPtr a_;
};

}  // namespace

OpPtr LinOp::H() {
  if (auto* adj = dynamic_cast<AdjointOp*>(this)) return adj->of();
  return std::make_shared<AdjointOp>(shared_from_this());
}

OpPtr LinOp::make_normal() { return compose({H(), shared_from_this()}); }

namespace {

Device& same_device(const std::vector<OpPtr>& ops, const char* what) {
  if (ops.empty()) throw std::invalid_argument(std::string(what) + " of no operators");
  for (const OpPtr& op : ops)
    if (&op->device() != &ops[0]->device())
      throw std::invalid_argument(std::string(what) + ": " + op->name() + " lives on another device than " +
                                  ops[0]->name());
  return ops[0]->device();
}

std::string joined(const std::vector<OpPtr>& ops, const char* sep) {
  std::string s;
  for (const OpPtr& op : ops) s += (s.empty() ? "" : sep) + op->name();
  return "(" + s + ")";
}

// ops[0] ops[1] ... ops[n-1]; the intermediate vectors are kept.
class ComposeOp : public LinOp {
 public:
  explicit ComposeOp(std::vector<OpPtr> ops)
      : LinOp(same_device(ops, "compose"), ops.back()->in(), ops.front()->out(), joined(ops, " * ")),
        ops_(std::move(ops)) {
    for (std::size_t i = 0; i + 1 < ops_.size(); ++i)
      if (ops_[i]->in() != ops_[i + 1]->out())
        throw std::invalid_argument("compose: " + ops_[i]->name() + " takes " + ops_[i]->in().str() + ", but " +
                                    ops_[i + 1]->name() + " gives " + ops_[i + 1]->out().str());
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { forward(x, y, nullptr); }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override { forward(x, y, &a); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { backward(y, x, nullptr); }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override { backward(y, x, &a); }

  // B^H (A^H A) B for {A, B...}: the outermost operator's normal (a fast one
  // where it has one) between the rest and its adjoint.
  OpPtr make_normal() override {
    std::vector<OpPtr> rest(ops_.begin() + 1, ops_.end());
    OpPtr inner = ops_[0]->normal();
    if (rest.empty()) return inner;
    OpPtr r = rest.size() == 1 ? rest[0] : compose(rest);
    return compose({r->H(), inner, r});
  }

 private:
  // The value entering ops_[i] (ops_[i]->in()): scratch slot i + 2.
  void forward(const DeviceVector& x, DeviceVector& y, const cdouble* add) {
    const DeviceVector* cur = &x;
    for (std::size_t i = ops_.size(); i-- > 1;) {
      DeviceVector& t = scratch(int(i) + 2, ops_[i]->out().size());
      ops_[i]->apply(*cur, t);
      cur = &t;
    }
    if (add)
      ops_[0]->apply_add(*cur, y, *add);
    else
      ops_[0]->apply(*cur, y);
  }
  void backward(const DeviceVector& y, DeviceVector& x, const cdouble* add) {
    const DeviceVector* cur = &y;
    for (std::size_t i = 0; i + 1 < ops_.size(); ++i) {
      DeviceVector& t = scratch(int(i) + 2, ops_[i]->in().size());
      ops_[i]->adjoint(*cur, t);
      cur = &t;
    }
    if (add)
      ops_.back()->adjoint_add(*cur, x, *add);
    else
      ops_.back()->adjoint(*cur, x);
  }

  std::vector<OpPtr> ops_;
};

class SumOp : public LinOp {
 public:
  explicit SumOp(std::vector<OpPtr> ops)
      : LinOp(same_device(ops, "sum"), ops[0]->in(), ops[0]->out(), joined(ops, " + ")), ops_(std::move(ops)) {
    for (const OpPtr& op : ops_)
      if (op->in() != in() || op->out() != out())
        throw std::invalid_argument("sum: " + op->name() + " maps " + op->in().str() + " to " + op->out().str() +
                                    ", " + ops_[0]->name() + " " + in().str() + " to " + out().str());
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    ops_[0]->apply(x, y);
    for (std::size_t i = 1; i < ops_.size(); ++i) ops_[i]->apply_add(x, y, 1.0);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    ops_[0]->adjoint(y, x);
    for (std::size_t i = 1; i < ops_.size(); ++i) ops_[i]->adjoint_add(y, x, 1.0);
  }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override {
    for (const OpPtr& op : ops_) op->apply_add(x, y, a);
  }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override {
    for (const OpPtr& op : ops_) op->adjoint_add(y, x, a);
  }

 private:
  std::vector<OpPtr> ops_;
};

class ScaleOp : public LinOp {
 public:
  ScaleOp(cdouble a, OpPtr op)
      : LinOp(op->device(), op->in(), op->out(), "(" + scalar(a) + " " + op->name() + ")"), a_(a), op_(std::move(op)) {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    op_->apply(x, y);
    device().scale(a_, y);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    op_->adjoint(y, x);
    device().scale(std::conj(a_), x);
  }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override { op_->apply_add(x, y, a * a_); }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override {
    op_->adjoint_add(y, x, a * std::conj(a_));
  }
  OpPtr make_normal() override { return scale(std::norm(a_), op_->normal()); }

 private:
  static std::string scalar(cdouble a) {
    char buf[64];
    if (a.imag() == 0)
      std::snprintf(buf, sizeof buf, "%g", a.real());
    else
      std::snprintf(buf, sizeof buf, "(%g%+gi)", a.real(), a.imag());
    return buf;
  }
  cdouble a_;
  OpPtr op_;
};

// The parts of a stack: ops[i]'s slice [offset[i], offset[i] + size) of the stacked side.
std::vector<std::size_t> offsets(const std::vector<OpPtr>& ops, bool outputs) {
  std::vector<std::size_t> off{0};
  for (const OpPtr& op : ops) off.push_back(off.back() + (outputs ? op->out() : op->in()).size());
  return off;
}

Shape stacked(const std::vector<OpPtr>& ops, bool outputs) {
  const Shape& first = outputs ? ops[0]->out() : ops[0]->in();
  for (const OpPtr& op : ops)
    if ((outputs ? op->out() : op->in()) != first) return samples_shape(offsets(ops, outputs).back());
  Shape s = first;
  s.dims.push_back(ops.size());
  return s;
}

class VStackOp : public LinOp {
 public:
  explicit VStackOp(std::vector<OpPtr> ops)
      : LinOp(same_device(ops, "vstack"), ops[0]->in(), stacked(ops, true), "[" + joined(ops, "; ") + "]"),
        ops_(std::move(ops)),
        off_(offsets(ops_, true)) {
    for (const OpPtr& op : ops_)
      if (op->in() != in())
        throw std::invalid_argument("vstack: " + op->name() + " takes " + op->in().str() + ", " + ops_[0]->name() +
                                    " " + in().str());
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    for (std::size_t i = 0; i < ops_.size(); ++i) ops_[i]->apply(x, *part(y, i));
  }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override {
    for (std::size_t i = 0; i < ops_.size(); ++i) ops_[i]->apply_add(x, *part(y, i), a);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    ops_[0]->adjoint(*part(y, 0), x);
    for (std::size_t i = 1; i < ops_.size(); ++i) ops_[i]->adjoint_add(*part(y, i), x, 1.0);
  }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override {
    for (std::size_t i = 0; i < ops_.size(); ++i) ops_[i]->adjoint_add(*part(y, i), x, a);
  }
  // sum_i A_i^H A_i: each part's own normal (SENSE: S_c^H T S_c per coil).
  OpPtr make_normal() override {
    std::vector<OpPtr> parts;
    for (const OpPtr& op : ops_) parts.push_back(op->normal());
    return parts.size() == 1 ? parts[0] : sum(parts);
  }

 private:
  VecPtr part(const DeviceVector& v, std::size_t i) const { return v.view(off_[i], off_[i + 1] - off_[i]); }
  std::vector<OpPtr> ops_;
  std::vector<std::size_t> off_;
};

class HStackOp : public LinOp {
 public:
  explicit HStackOp(std::vector<OpPtr> ops)
      : LinOp(same_device(ops, "hstack"), stacked(ops, false), ops[0]->out(), "[" + joined(ops, ", ") + "]"),
        ops_(std::move(ops)),
        off_(offsets(ops_, false)) {
    for (const OpPtr& op : ops_)
      if (op->out() != out())
        throw std::invalid_argument("hstack: " + op->name() + " gives " + op->out().str() + ", " + ops_[0]->name() +
                                    " " + out().str());
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    ops_[0]->apply(*part(x, 0), y);
    for (std::size_t i = 1; i < ops_.size(); ++i) ops_[i]->apply_add(*part(x, i), y, 1.0);
  }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override {
    for (std::size_t i = 0; i < ops_.size(); ++i) ops_[i]->apply_add(*part(x, i), y, a);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    for (std::size_t i = 0; i < ops_.size(); ++i) ops_[i]->adjoint(y, *part(x, i));
  }
  void do_adjoint_add(const DeviceVector& y, DeviceVector& x, cdouble a) override {
    for (std::size_t i = 0; i < ops_.size(); ++i) ops_[i]->adjoint_add(y, *part(x, i), a);
  }

 private:
  VecPtr part(const DeviceVector& v, std::size_t i) const { return v.view(off_[i], off_[i + 1] - off_[i]); }
  std::vector<OpPtr> ops_;
  std::vector<std::size_t> off_;
};

class DiagOp : public LinOp {
 public:
  DiagOp(std::shared_ptr<DeviceVector> d, Shape shape, std::string name)
      : LinOp(d->device(), shape, shape, std::move(name)), d_(std::move(d)) {
    if (d_->size() != shape.size())
      throw std::invalid_argument("diag: " + std::to_string(d_->size()) + " values for the shape " + shape.str());
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { device().multiply(*d_, x, y, false); }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override { device().multiply(*d_, y, x, true); }
  OpPtr make_normal() override {
    auto w = std::shared_ptr<DeviceVector>(device().clone(*d_));
    device().multiply(*d_, *w, *w, true);  // conj(d) d = |d|^2
    return std::make_shared<DiagOp>(std::move(w), in(), "|" + name() + "|^2");
  }

 private:
  std::shared_ptr<DeviceVector> d_;
};

class IdentityOp : public HermitianOp {
 public:
  IdentityOp(Device& dev, Shape shape) : HermitianOp(dev, shape, "I") {}

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override { device().copy(x, y); }
  void do_apply_add(const DeviceVector& x, DeviceVector& y, cdouble a) override { device().axpy(a, x, y); }
  OpPtr make_normal() override { return shared_from_this(); }
};

}  // namespace

OpPtr compose(std::vector<OpPtr> ops) {
  if (ops.size() == 1) return ops[0];
  return std::make_shared<ComposeOp>(std::move(ops));
}

OpPtr sum(std::vector<OpPtr> ops) {
  if (ops.size() == 1) return ops[0];
  return std::make_shared<SumOp>(std::move(ops));
}

OpPtr scale(cdouble a, OpPtr op) { return std::make_shared<ScaleOp>(a, std::move(op)); }

OpPtr vstack(std::vector<OpPtr> ops) { return std::make_shared<VStackOp>(std::move(ops)); }

OpPtr hstack(std::vector<OpPtr> ops) { return std::make_shared<HStackOp>(std::move(ops)); }

OpPtr diag(std::shared_ptr<DeviceVector> d, Shape shape) {
  return std::make_shared<DiagOp>(std::move(d), std::move(shape), "diag");
}

OpPtr identity(Device& dev, Shape shape) { return std::make_shared<IdentityOp>(dev, std::move(shape)); }

}  // namespace fhd
