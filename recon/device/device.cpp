#include "recon/device/device.hpp"

#include "recon/coils/coil_maps.hpp"
#include "recon/gather/direct_sum.hpp"
#include "recon/field/field.hpp"
#include "recon/eval/metrics.hpp"
#include "recon/nufft/nufft_cpu.hpp"
#include "recon/plan/precond.hpp"
#include "recon/solvers/tv.hpp"

namespace fhd {

void VectorOps::multiply(const BackendVector& s, const BackendVector& x, BackendVector& y, bool conjugate) {
  const std::vector<cfloat> hs = download(s);
  std::vector<cfloat> hx = download(x);
  if (hs.size() != hx.size() || y.size() != hx.size())
    throw std::invalid_argument("multiply of vectors of sizes " + std::to_string(hs.size()) + ", " +
                                std::to_string(hx.size()) + " and " + std::to_string(y.size()));
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] *= conjugate ? std::conj(hs[i]) : hs[i];
  copy(*upload(hx), y);
}

void VectorOps::download_into(const BackendVector& v, std::vector<cfloat>& out) { out = download(v); }

std::pair<cdouble, cdouble> VectorOps::dot2(const BackendVector& a, const BackendVector& b, const BackendVector& c,
                                            const BackendVector& d) {
  return {dot(a, b), dot(c, d)};
}

double VectorOps::magnitude_sse(const BackendVector& x, const BackendVector& ref) {
  const std::vector<cfloat> r = download(ref);
  std::vector<float> re(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) re[i] = r[i].real();
  return fhd::magnitude_sse(download(x), re);
}

std::vector<cfloat> center_window(const std::vector<cfloat>& grid, const ImageGrid& over, const ImageGrid& image) {
  const int ox = over.nx / 2 - image.nx / 2, oy = over.ny / 2 - image.ny / 2, oz = over.nz / 2 - image.nz / 2;
  std::vector<cfloat> out(image.voxels());
  for (int iz = 0; iz < image.nz; ++iz)
    for (int iy = 0; iy < image.ny; ++iy)
      for (int ix = 0; ix < image.nx; ++ix)
        out[ix + std::size_t(image.nx) * (iy + std::size_t(image.ny) * iz)] =
            grid[std::size_t(ix + ox) + std::size_t(over.nx) * (std::size_t(iy + oy) + std::size_t(over.ny) * (iz + oz))];
  return out;
}

std::vector<cfloat> Backend::grid_to_image(const Points& k, const std::vector<cfloat>& weighted_data,
                                           const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel) {
  std::vector<cfloat> g = grid_scatter(k, weighted_data, image, over, kernel);
  centered_idft(g, over);
  return center_window(g, over, image);
}

namespace {

// Backend::circulant's default: the host circulant, moving vectors through the host.
class DownloadCirculant : public NormalOperator {
 public:
  DownloadCirculant(Backend& be, const std::vector<float>& eig, const ImageGrid& grid) : be_(be), c_(eig, grid) {}
  void apply(const BackendVector& x, BackendVector& y) override {
    VectorOps& v = be_.vec();
    std::vector<cfloat> h = v.download(x);
    c_.apply(h.data(), h.data());
    v.copy(*v.upload(h), y);
  }

 private:
  Backend& be_;
  HostCirculant c_;
};

}  // namespace

std::unique_ptr<NormalOperator> Backend::circulant(const std::vector<float>& eig, const ImageGrid& grid) {
  return std::make_unique<DownloadCirculant>(*this, eig, grid);
}

void Backend::gradient(const BackendVector& x, BackendVector& g, const ImageGrid& grid) {
  VectorOps& v = vec();
  std::vector<cfloat> hx = v.download(x), hg(g.size());
  gradient_host(hx.data(), hg.data(), grid);
  v.copy(*v.upload(hg), g);
}

void Backend::gradient_adjoint(const BackendVector& g, BackendVector& x, const ImageGrid& grid) {
  VectorOps& v = vec();
  std::vector<cfloat> hg = v.download(g), hx(x.size());
  gradient_adjoint_host(hg.data(), hx.data(), grid);
  v.copy(*v.upload(hx), x);
}

void Backend::tv_shrink(const BackendVector& g, BackendVector& z, BackendVector& u, const ImageGrid& grid, double t) {
  VectorOps& v = vec();
  std::vector<cfloat> hg = v.download(g), hz = v.download(z), hu = v.download(u);
  tv_shrink_host(hg.data(), hz.data(), hu.data(), grid, t);
  v.copy(*v.upload(hz), z);
  v.copy(*v.upload(hu), u);
}

VecPtr Backend::mu_resident(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) {
  return vec().upload(mu(phi, data));
}

VecPtr Backend::fhd_resident(const Points& k, const BackendVector& mu_values, const ImageGrid& grid,
                             const FhdOptions& opt) {
  return vec().upload(fhd(k, vec().download(mu_values), grid, opt));
}

VecPtr Backend::q_resident(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                           const FhdOptions& opt) {
  return vec().upload(q(k, w, grid, opt));
}

std::unique_ptr<NormalOperator> Backend::normal_resident(const BackendVector& q, const ImageGrid& grid,
                                                         double lambda) {
  return normal(vec().download(q), grid, lambda);
}

std::unique_ptr<NormalOperator> Backend::preconditioner_resident(const BackendVector& q, const ImageGrid& grid,
                                                                 double lambda) {
  return make_preconditioner(*this, vec().download(q), grid, lambda);
}

std::vector<double> Backend::circulant_spectrum(const BackendVector& q, const ImageGrid& grid) {
  return circulant_eigenvalues(vec().download(q), grid, 0.0);
}

std::vector<VecPtr> Backend::lowres_maps(const Calibration& cal, const ImageGrid& grid, double crop) {
  std::vector<VecPtr> out;
  for (const std::vector<cfloat>& m : maps_lowres(cal, grid, crop)) out.push_back(vec().upload(m));
  return out;
}

std::vector<cfloat> Backend::field_forward(const Points& k, const FieldData& f, const std::vector<cfloat>& image,
                                           const ImageGrid& grid) {
  return field_forward_host(k.host(), f, image, grid);
}

std::vector<cfloat> Backend::field_adjoint(const Points& k, const FieldData& f, const std::vector<cfloat>& data,
                                           const ImageGrid& grid) {
  return field_adjoint_host(k.host(), f, data, grid);
}

// The host forward model: the CPU NUFFT, or the float64 direct sum rounded.
std::vector<cfloat> Backend::forward(const Points& k, const std::vector<cfloat>& image, const ImageGrid& grid,
                                     const FhdOptions& opt) {
  if (opt.method == FhdMethod::Nufft) {
    nufft::Options o;
    o.tol = opt.nufft_tol;
    return nufft::CpuPlan(k.host(), grid, grid, o).type2(image);
  }
  const std::vector<cdouble> d = forward_reference(k.host(), image, grid);
  return std::vector<cfloat>(d.begin(), d.end());
}

}  // namespace fhd
