// The NUFFT on the CPU device: recon/nufft/nufft_cpu's plan (make, set points
// once), owned by the operator that uses it, n transforms per call.
#include "recon/nufft/cpu_nufft_kernels.hpp"

#include "core/error.hpp"
#include "recon/device/cpu_device.hpp"
#include "recon/nufft/nufft_cpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fhd {
namespace {

class CpuNufftPlan : public NufftPlan {
 public:
  CpuNufftPlan(const Points& k, const ImageGrid& modes, const ImageGrid& image, double tol)
      : plan_(modes, image, options(tol)) {
    plan_.set_points(k.host());
  }
  void type1(const DeviceVector& c, DeviceVector& f) override {
    check(c, f);
    plan_.type1(host_data(c), host_data(f), 1);
  }
  void type2(const DeviceVector& f, DeviceVector& c) override {
    check(c, f);
    plan_.type2(host_data(f), host_data(c), 1);
  }
  // n transforms in the plan's lanes, each on one thread: bitwise repeatable,
  // unlike n single calls, whose spreading is threaded (docs/cpu-backend.md).
  // batches() stays false: the CPU's SENSE keeps its per-coil operators.
  void type1_batch(const DeviceVector& c, DeviceVector& f, int n) override {
    check(c, f, n);
    plan_.type1(host_data(c), host_data(f), n);
  }

 private:
  // c: n point vectors, f: n mode vectors (n >= 1).
  void check(const DeviceVector& c, const DeviceVector& f, int n = 1) const {
    const std::size_t m = plan_.points(), v = plan_.modes().voxels(), k = std::size_t(std::max(n, 0));
    if (n < 1 || c.size() != k * m || f.size() != k * v)
      throw std::invalid_argument("cpu nufft: " + std::to_string(c.size()) + " samples and " + std::to_string(f.size()) +
                                  " modes for " + std::to_string(n) + " transform(s) of a plan of " +
                                  std::to_string(m) + " and " + std::to_string(v));
  }
  static nufft::Options options(double tol) {
    nufft::Options o;
    o.tol = tol;
    return o;
  }
  nufft::CpuPlan plan_;
};

class CpuNufft : public NufftKernels {
 public:
  explicit CpuNufft(Device& dev) : dev_(dev) {}
  std::unique_ptr<NufftPlan> plan(const Points& k, const ImageGrid& modes, const ImageGrid& image,
                                  double tol) override {
    return std::make_unique<CpuNufftPlan>(k, modes, image, tol);
  }
  VecPtr q(const Points& k, const std::vector<float>& w, const ImageGrid& grid, double tol) override {
    if (!w.empty() && w.size() != k.size())
      throw InputError("q", "weights size", std::to_string(w.size()),
                       "must equal the trajectory's " + std::to_string(k.size()) + " samples");
    std::vector<cfloat> c(k.size(), cfloat(1.0f));
    for (std::size_t i = 0; i < w.size(); ++i) c[i] = w[i];
    VecPtr cw = dev_.upload(c), out = dev_.zeros(grid.doubled().voxels());
    CpuNufftPlan(k, grid.doubled(), grid, tol).type1(*cw, *out);
    return out;
  }

 private:
  Device& dev_;
};

}  // namespace

std::unique_ptr<NufftKernels> make_cpu_nufft(Device& dev) { return std::make_unique<CpuNufft>(dev); }

}  // namespace fhd
