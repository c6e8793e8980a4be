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

// What every operator across devices shares: its parts, and running one part
// on its own device with input and output on `home` (copies for a part away
// from home, through buffers kept per part so an iteration allocates nothing).
class AcrossDevices : public LinOp {
 public:
  AcrossDevices(Device& home, std::vector<OpPtr> parts, Shape out, std::string name)
      : LinOp(home, parts.at(0)->in(), std::move(out), std::move(name)), parts_(std::move(parts)),
        away_(parts_.size()), sums_(parts_.size()) {}

 protected:
  bool local(std::size_t i) const { return &parts_[i]->device() == &device(); }

  // Queues every part's input (on home) to its device before any part starts:
  // a copy from home runs after home's queue, which a part running there
  // would otherwise fill first, so the parts would run one after another.
  // The copies are queued on the devices (Device::copy): the host waits for none.
  void send(const std::function<VecPtr(std::size_t)>& input) {
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      if (local(i)) continue;
      const VecPtr in = input(i);
      parts_[i]->device().copy(*in, buffer(away_[i].first, parts_[i]->device(), in->size()));
    }
  }

  // out = A_i in (or A_i^H in), both on home, in already sent. Called from
  // part i's thread only. A part away from home leaves its result on its
  // device, for `fetch` to bring back once every part's work is queued.
  void run_part(std::size_t i, bool adjoint, const DeviceVector& in, DeviceVector& out) {
    LinOp& p = *parts_[i];
    if (local(i)) return adjoint ? p.adjoint(in, out) : p.apply(in, out);
    DeviceVector& b = buffer(away_[i].second, p.device(), out.size());
    if (adjoint)
      p.adjoint(*away_[i].first, b);
    else
      p.apply(*away_[i].first, b);
  }

  // Part i's result (away from home) copied into out, queued on home: home's
  // next work (the sum, the solver's next step) runs after it, the host waits
  // for nothing. Only after every part's work is queued: the copy makes
  // home's queue wait for the part's device, so a copy queued from a part's
  // own thread before home's part had queued its work held that work back
  // until the other GPU had finished (8-coil SENSE on 2 GPUs: E^H y ran one
  // GPU after the other, 4 coils each).
  void fetch(std::size_t i, DeviceVector& out) {
    if (!local(i)) device().copy(*away_[i].second, out);
  }

  // out = sum_i A_i in_i (or A_i^H in_i): each part on its own thread, the
  // first into `out`, the others into home buffers, then summed on home.
  void sum_parts(bool adjoint, const std::function<VecPtr(std::size_t)>& input, DeviceVector& out) {
    send(input);
    auto into = [&](std::size_t i) -> DeviceVector& { return i == 0 ? out : buffer(sums_[i], device(), out.size()); };
    on_each(parts_.size(), [&](std::size_t i) { run_part(i, adjoint, *input(i), into(i)); });
    for (std::size_t i = 0; i < parts_.size(); ++i) fetch(i, into(i));
    for (std::size_t i = 1; i < parts_.size(); ++i) device().axpy(1.0, *sums_[i], out);
  }

  static DeviceVector& buffer(VecPtr& slot, Device& d, std::size_t n) {
    if (!slot || slot->size() != n) slot = d.zeros(n);
    return *slot;
  }

  std::vector<OpPtr> parts_;

 private:
  std::vector<std::pair<VecPtr, VecPtr>> away_;  // part i's input and output on its device
  std::vector<VecPtr> sums_;                     // part i's output on home, for a sum
};

class VStackAcross : public AcrossDevices {
 public:
  VStackAcross(Device& home, std::vector<OpPtr> parts)
      : AcrossDevices(home, parts, stacked_out(parts), "stack across devices") {
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
    send([&](std::size_t) { return x.view(0, x.size()); });
    on_each(parts_.size(), [&](std::size_t i) { run_part(i, false, x, *slice(y, i)); });
    for (std::size_t i = 0; i < parts_.size(); ++i) fetch(i, *slice(y, i));
    device().synchronize();
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    sum_parts(true, [&](std::size_t i) { return slice(y, i); }, x);
  }
  // sum_i A_i^H A_i with each part's own (fast) normal on its own device:
  // the Toeplitz T of each device's plan for SENSE split by coils.
  // The parts' normals are made side by side: each is its device's T (an FFT
  // of Q, the batched FFT plans), which would otherwise be made one device
  // after another.
  OpPtr make_normal() override {
    std::vector<OpPtr> normals(parts_.size());
    on_each(parts_.size(), [&](std::size_t i) { normals[i] = parts_[i]->normal(); });
    return sum_across(device(), std::move(normals));
  }

 private:
  VecPtr slice(const DeviceVector& v, std::size_t i) const {
    return v.view(off_[i], off_[i + 1] - off_[i]);
  }
  std::vector<std::size_t> off_;
};

class SumAcross : public AcrossDevices {
 public:
  SumAcross(Device& home, std::vector<OpPtr> parts)
      : AcrossDevices(home, parts, parts.at(0)->out(), "sum across devices") {
    for (const OpPtr& p : parts_)
      if (p->in() != in() || p->out() != out())
        throw std::invalid_argument("sum_across: " + p->name() + " maps " + p->in().str() + " to " + p->out().str() +
                                    ", expected " + in().str() + " to " + out().str());
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    sum_parts(false, [&](std::size_t) { return x.view(0, x.size()); }, y);
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    sum_parts(true, [&](std::size_t) { return y.view(0, y.size()); }, x);
  }
};

// Rows in `blocks` blocks of m each, part i owning rows [first_i, first_i + n_i)
// of every block; its own output is block-major (blocks x n_i). On home, each
// part's rows are gathered into a buffer of its own (or scattered from it)
// by one copy a block.
class BlocksAcross : public AcrossDevices {
 public:
  BlocksAcross(Device& home, std::vector<OpPtr> parts, std::size_t blocks)
      : AcrossDevices(home, parts, stacked_out(parts), "stack of row blocks across devices"), blocks_(blocks),
        own_(parts_.size()) {
    for (const OpPtr& p : parts_) {
      if (p->in() != in() || blocks == 0 || p->out().size() % blocks != 0)
        throw std::invalid_argument("vstack_blocks_across: " + p->name() + " maps " + p->in().str() + " to " +
                                    p->out().str() + ", expected " + in().str() + " to " + std::to_string(blocks) +
                                    " blocks of rows");
      first_.push_back(m_);
      m_ += p->out().size() / blocks;
    }
  }

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override {
    send([&](std::size_t) { return x.view(0, x.size()); });
    for (std::size_t i = 0; i < parts_.size(); ++i) own(i);  // made here, not on the parts' threads
    on_each(parts_.size(), [&](std::size_t i) { run_part(i, false, x, own(i)); });
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      fetch(i, own(i));
      move_rows(i, own(i), y, false);
    }
    device().synchronize();
  }
  void do_adjoint(const DeviceVector& y, DeviceVector& x) override {
    for (std::size_t i = 0; i < parts_.size(); ++i) move_rows(i, own(i), y, true);
    sum_parts(true, [&](std::size_t i) { return own(i).view(0, own(i).size()); }, x);
  }

 private:
  std::size_t rows(std::size_t i) const { return parts_[i]->out().size() / blocks_; }
  DeviceVector& own(std::size_t i) { return buffer(own_[i], device(), parts_[i]->out().size()); }
  // Part i's rows between its own block-major buffer and the whole vector.
  void move_rows(std::size_t i, DeviceVector& part, const DeviceVector& whole, bool gather) {
    const std::size_t n = rows(i);
    for (std::size_t b = 0; b < blocks_; ++b) {
      const VecPtr mine = part.view(b * n, n), theirs = whole.view(b * m_ + first_[i], n);
      if (gather)
        device().copy(*theirs, *mine);
      else
        device().copy(*mine, *theirs);
    }
  }
  std::size_t blocks_, m_ = 0;
  std::vector<std::size_t> first_;
  std::vector<VecPtr> own_;  // each part's rows on home, block-major
};

}  // namespace

OpPtr vstack_blocks_across(Device& home, std::vector<OpPtr> parts, std::size_t blocks) {
  return std::make_shared<BlocksAcross>(home, std::move(parts), blocks);
}

OpPtr vstack_across(Device& home, std::vector<OpPtr> parts) {
  return std::make_shared<VStackAcross>(home, std::move(parts));
}

OpPtr sum_across(Device& home, std::vector<OpPtr> parts) {
  return std::make_shared<SumAcross>(home, std::move(parts));
}

}  // namespace fhd
