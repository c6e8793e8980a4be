#include "recon/ops/device_stack.hpp"

#include <exception>
#include <functional>
#include <future>
#include <stdexcept>

namespace fhd {

void on_each(std::size_t n, const std::function<void(std::size_t)>& f) {
  if (n == 1) return f(0);
  std::vector<std::future<void>> running;
  for (std::size_t i = 0; i < n; ++i) running.push_back(std::async(std::launch::async, [&f, i] { f(i); }));
  std::exception_ptr failed;
  for (auto& r : running) {
    try {
      r.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
}

namespace {

Shape stacked_out(const std::vector<OpPtr>& parts) {
  std::size_t n = 0;
  for (const OpPtr& p : parts) n += p->out().size();
  return samples_shape(n);
}

class VStackAcross : public LinOp {
 public:
  VStackAcross(Device& home, std::vector<OpPtr> parts)
      : LinOp(home, parts.at(0)->in(), stacked_out(parts), "stack across devices"), parts_(std::move(parts)) {
    std::size_t off = 0;
    for (const OpPtr& p : parts_) {
      if (p->in() != in())
        throw std::invalid_argument("vstack_across: " + p->name() + " takes " + p->in().str() + ", expected " +
                                    in().str());
      off_.push_back(off);
      off += p->out().size();
    }
    off_.push_back(off);
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    on_each(parts_.size(), [&](std::size_t i) {
      LinOp& p = *parts_[i];
      VecPtr yi = y.view(off_[i], off_[i + 1] - off_[i]);
      if (local(i)) return p.apply(x, *yi);
      VecPtr xi = p.device().zeros(x.size()), out = p.device().zeros(yi->size());
      p.device().copy(x, *xi);
      p.apply(*xi, *out);
      p.device().synchronize();
      device().copy(*out, *yi);
    });
    device().synchronize();
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    std::vector<VecPtr> sums(parts_.size());
    on_each(parts_.size(), [&](std::size_t i) {
      LinOp& p = *parts_[i];
      VecPtr yi = y.view(off_[i], off_[i + 1] - off_[i]);
      VecPtr part = device().zeros(x.size());
      if (local(i)) return p.adjoint(*yi, *part), void(sums[i] = std::move(part));
      VecPtr in = p.device().zeros(yi->size()), out = p.device().zeros(x.size());
      p.device().copy(*yi, *in);
      p.adjoint(*in, *out);
      p.device().synchronize();
      device().copy(*out, *part);
      sums[i] = std::move(part);
    });
    device().copy(*sums[0], x);
    for (std::size_t i = 1; i < sums.size(); ++i) device().axpy(1.0, *sums[i], x);
  }

 private:
  bool local(std::size_t i) const { return &parts_[i]->device() == &device(); }
  std::vector<OpPtr> parts_;
  std::vector<std::size_t> off_;
};

}  // namespace

OpPtr vstack_across(Device& home, std::vector<OpPtr> parts) {
  return std::make_shared<VStackAcross>(home, std::move(parts));
}

}  // namespace fhd
