// The exact gather on the CPU device (recon/gather/gather_kernels.hpp):
// recon/gather/cpu_fhd.cpp's OpenMP and BLAS kernels on host vectors.
#include "recon/gather/cpu_gather.hpp"

#include "core/error.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/gather/cpu_fhd.hpp"
#include "recon/gather/direct_sum.hpp"

namespace fhd {
namespace {

std::vector<cfloat> host_copy(const DeviceVector& v) {
  const cfloat* p = host_data(v);
  return std::vector<cfloat>(p, p + v.size());
}

void put(const std::vector<cfloat>& values, DeviceVector& out) {
  if (values.size() != out.size())
    throw std::invalid_argument("cpu gather: " + std::to_string(values.size()) + " values for an output of " +
                                std::to_string(out.size()));
  std::copy(values.begin(), values.end(), host_data(out));
}

void check_samples(const Points& k, std::size_t n, const char* where, const char* field) {
  if (n != k.size())
    throw InputError(where, field, std::to_string(n), "must equal the trajectory's " + std::to_string(k.size()) + " samples");
}

class CpuGather : public GatherKernels {
 public:
  explicit CpuGather(Device& dev) : dev_(dev) {}

  void adjoint(const Points& k, const DeviceVector& mu, const ImageGrid& grid, const FhdOptions& opt,
               DeviceVector& out) override {
    check_samples(k, mu.size(), "fhd", "mu length");
    put(cpu_fhd(k.host(), host_copy(mu), grid, opt), out);
  }
  // The float64 direct sum, rounded: O(M N), for tests and small problems.
  void forward(const Points& k, const DeviceVector& x, const ImageGrid& grid, const FhdOptions&,
               DeviceVector& out) override {
    const std::vector<cdouble> d = forward_reference(k.host(), host_copy(x), grid);
    put(std::vector<cfloat>(d.begin(), d.end()), out);
  }
  VecPtr q(const Points& k, const std::vector<float>& w, const ImageGrid& grid, const FhdOptions& opt) override {
    if (!w.empty()) check_samples(k, w.size(), "q", "weights length");
    return dev_.upload(cpu_q(k.host(), w, grid, opt));
  }
  void adjoint_slab(const Points& k, const DeviceVector& mu, const ImageGrid& grid, int a0, int h,
                    const FhdOptions& opt, DeviceVector& out) override {
    check_samples(k, mu.size(), "fhd", "mu length");
    put(cpu_fhd_slab(k.host(), host_copy(mu), grid, a0, h, opt), out);
  }
  VecPtr q_half_slab(const Points& k, const std::vector<float>& w, const ImageGrid& grid, int a0, int h,
                     const FhdOptions& opt) override {
    return dev_.upload(cpu_q_half_slab(k.host(), w, grid, a0, h, opt));
  }
  VecPtr q_from_half(const Points& k, const std::vector<float>& w, const ImageGrid& grid, const FhdOptions& opt,
                     const DeviceVector& half) override {
    return dev_.upload(cpu_q_from_half(k.host(), w, grid, opt, host_copy(half)));
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<GatherKernels> make_cpu_gather(Device& dev) { return std::make_unique<CpuGather>(dev); }

void q_half_box(const ImageGrid& img, int box[3]) {
  const ImageGrid d = img.doubled();
  const bool is3d = d.nz > 1;
  const int n = is3d ? img.nz : img.ny;
  box[0] = d.nx;
  box[1] = is3d ? d.ny : n + 1;
  box[2] = is3d ? n + 1 : 1;
}

}  // namespace fhd
