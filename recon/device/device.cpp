#include "recon/device/device.hpp"

#include <map>
#include <stdexcept>
#include <string>

#include "recon/device/kernels.hpp"

namespace fhd {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::pair<std::type_index, DeviceKind>, KernelMaker> makers;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

VecPtr DeviceVector::view(std::size_t offset, std::size_t n) const {
  if (offset > n_ || n > n_ - offset)
    throw std::invalid_argument("vector view [" + std::to_string(offset) + ", " + std::to_string(offset + n) +
                                ") of a vector of " + std::to_string(n_));
  return std::make_unique<DeviceVector>(*device_, data_ + offset, n, owner_);
}

void register_kernel_maker(std::type_index family, DeviceKind kind, KernelMaker make) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.makers[{family, kind}] = std::move(make);
}

void* Device::kernel_instance(std::type_index family) {
  std::lock_guard<std::mutex> lock(kernels_mutex_);
  auto it = kernels_.find(family);
  if (it != kernels_.end()) return it->second.get();
  KernelMaker make;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> rlock(r.mutex);
    auto m = r.makers.find({family, kind()});
    if (m == r.makers.end())
      throw std::logic_error(std::string("no ") + family.name() + " registered for the device " + name());
    make = m->second;
  }
  return kernels_.emplace(family, make(*this)).first->second.get();
}

VecPtr Device::upload(const std::vector<cfloat>& host) { return upload(host.data(), host.size()); }

VecPtr Device::upload(const cfloat* host, std::size_t n) {
  VecPtr v = zeros(n);
  if (n > 0) to_device(host, *v);
  return v;
}

std::vector<cfloat> Device::download(const DeviceVector& v) {
  std::vector<cfloat> out;
  download_into(v, out);
  return out;
}

void Device::download_into(const DeviceVector& v, std::vector<cfloat>& out) {
  out.resize(v.size());
  if (!out.empty()) to_host(v, out.data());
}

VecPtr Device::clone(const DeviceVector& v) {
  VecPtr c = zeros(v.size());
  copy(v, *c);
  return c;
}

void Device::set_zero(DeviceVector& x) { axpby(0.0, x, 0.0, x); }

void require_on(const Device& dev, const DeviceVector& v, const char* where) {
  if (&v.device() != &dev)
    throw std::invalid_argument(std::string(where) + ": got a vector of the device " + v.device().name() +
                                ", expected " + dev.name());
}

void require_same_size(const DeviceVector& a, const DeviceVector& b, const char* where) {
  if (a.size() != b.size())
    throw std::invalid_argument(std::string(where) + " of vectors of sizes " + std::to_string(a.size()) + " and " +
                                std::to_string(b.size()));
}

}  // namespace fhd
