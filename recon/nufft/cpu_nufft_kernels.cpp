// The NUFFT on the CPU device: recon/nufft/nufft_cpu's plan, made once per
// operator (before, the CPU backend made one per fhd() and forward() call).
#include "recon/nufft/cpu_nufft_kernels.hpp"

#include "recon/device/cpu_device.hpp"
#include "recon/nufft/nufft_cpu.hpp"

namespace fhd {
namespace {

class CpuNufftPlan : public NufftPlan {
 public:
  CpuNufftPlan(const Points& k, const ImageGrid& modes, const ImageGrid& image, double tol)
      : plan_(k.host(), modes, image, options(tol)) {}
  void type1(const DeviceVector& c, DeviceVector& f) override {
    const cfloat* p = host_data(c);
    const std::vector<cfloat> out = plan_.type1(std::vector<cfloat>(p, p + c.size()));
    std::copy(out.begin(), out.end(), host_data(f));
  }
  void type2(const DeviceVector& f, DeviceVector& c) override {
    const cfloat* p = host_data(f);
    const std::vector<cfloat> out = plan_.type2(std::vector<cfloat>(p, p + f.size()));
    std::copy(out.begin(), out.end(), host_data(c));
  }

 private:
  static nufft::Options options(double tol) {
    nufft::Options o;
    o.tol = tol;
    return o;
  }
  nufft::CpuPlan plan_;
};

class CpuNufft : public NufftKernels {
 public:
  std::unique_ptr<NufftPlan> plan(const Points& k, const ImageGrid& modes, const ImageGrid& image,
                                  double tol) override {
    return std::make_unique<CpuNufftPlan>(k, modes, image, tol);
  }
};

}  // namespace

std::unique_ptr<NufftKernels> make_cpu_nufft(Device&) { return std::make_unique<CpuNufft>(); }

}  // namespace fhd
