// Coil sensitivity estimation (recon/coil_maps.hpp, docs/coils.md).
#include "recon/coil_maps.hpp"

#include <cstdint>
#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "recon/dcf.hpp"
#include "core/error.hpp"
#include "recon/gridding.hpp"
#include "recon/toeplitz.hpp"

#ifdef FHD_HAVE_CBLAS
#include <cblas.h>
#endif

namespace fhd {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Position of centred index c (frequency or position c - n/2) in FFTW's order.
std::size_t unshift(int c, int n) { return std::size_t(((c - n / 2) % n + n) % n); }

std::size_t linear(int x, int y, int z, const ImageGrid& g) { return x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z); }

// Index on `big` of index q on the centred `small` grid (same frequency).
std::size_t embed(int qx, int qy, int qz, const ImageGrid& small, const ImageGrid& big) {
  return linear(big.nx / 2 - small.nx / 2 + qx, big.ny / 2 - small.ny / 2 + qy, big.nz / 2 - small.nz / 2 + qz, big);
}

template <class F>
void for_each_index(const ImageGrid& g, F f) {
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) f(x, y, z);
}

// 0.5 (1 + cos(2 pi (q - n/2) / n)): 1 at k = 0, 0 at the lowest frequency; 1 on an axis of 1.
double hann(int q, int n) { return n == 1 ? 1.0 : 0.5 * (1 + std::cos(2 * kPi * (q - n / 2) / n)); }

std::vector<cdouble> to_double(const std::vector<cfloat>& v) { return std::vector<cdouble>(v.begin(), v.end()); }

// A coil's calibration data placed at the centre of a zeroed `grid`, weighted.
template <class W>
std::vector<cdouble> padded(const std::vector<cfloat>& calib, const ImageGrid& small, const ImageGrid& grid, W weight) {
  std::vector<cdouble> full(grid.voxels());
  for_each_index(small, [&](int x, int y, int z) {
    full[embed(x, y, z, small, grid)] = cdouble(calib[linear(x, y, z, small)]) * weight(x, y, z);
  });
  return full;
}

}  // namespace

void centered_dft(std::vector<cdouble>& v, const ImageGrid& g, int sign) {
  const std::size_t nv = g.voxels();
  fftw_complex* buf = fftw_alloc_complex(nv);
  for_each_index(g, [&](int x, int y, int z) {
    const cdouble a = v[linear(x, y, z, g)];
    const std::size_t at = unshift(x, g.nx) + std::size_t(g.nx) * (unshift(y, g.ny) + std::size_t(g.ny) * unshift(z, g.nz));
    buf[at][0] = a.real();
    buf[at][1] = a.imag();
  });
  fftw_plan plan;
  {
    std::lock_guard<std::mutex> lock(fftw_planner_lock());
    plan = fftw_plan_dft_3d(g.nz, g.ny, g.nx, buf, buf, sign < 0 ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
  }
  fftw_execute(plan);
  {
    std::lock_guard<std::mutex> lock(fftw_planner_lock());
    fftw_destroy_plan(plan);
  }
  for_each_index(g, [&](int x, int y, int z) {
    const std::size_t at = unshift(x, g.nx) + std::size_t(g.nx) * (unshift(y, g.ny) + std::size_t(g.ny) * unshift(z, g.nz));
    v[linear(x, y, z, g)] = cdouble(buf[at][0], buf[at][1]);
  });
  fftw_free(buf);
}

ImageGrid calibration_size(const ImageGrid& grid, int cal) {
  if (cal < 4) throw InputError("coil maps", "calibration size", std::to_string(cal), "must be >= 4");
  auto axis = [cal](int n) { return n == 1 ? 1 : std::min(cal, n); };
  return {axis(grid.nx), axis(grid.ny), axis(grid.nz)};
}

Calibration calibration_from_images(const CoilData& images, const ImageGrid& grid, int cal) {
  Calibration out{calibration_size(grid, cal), {}};
  for (const auto& img : images) {
    if (img.size() != grid.voxels())
      throw std::invalid_argument("calibration_from_images: an image has " + std::to_string(img.size()) + " voxels");
    std::vector<cdouble> k = to_double(img);
    centered_dft(k, grid, -1);
    std::vector<cfloat> centre(out.size.voxels());
    for_each_index(out.size, [&](int x, int y, int z) {
      centre[linear(x, y, z, out.size)] = cfloat(k[embed(x, y, z, out.size, grid)]);
    });
    out.kspace.push_back(std::move(centre));
  }
  return out;
}

Calibration calibration_from_scans(Backend& be, const std::vector<Scan>& coils, int cal, const std::string& dcf_method) {
  if (coils.empty()) throw InputError("coil maps: no coils");
  const Scan& s = coils[0];
  auto kind = s.provenance.find("trajectory");
  const std::vector<float> dcf = !s.dcf.empty() ? s.dcf
                                 : density_weights(s.traj, s.grid, dcf_method,
                                                   kind == s.provenance.end() ? "" : kind->second);
  CoilData images;
  for (const Scan& c : coils) images.push_back(gridding_recon(be, s.traj, c.data, dcf, s.grid, GridKernel{}));
  return calibration_from_images(images, s.grid, cal);
}

CoilData maps_lowres(const Calibration& cal, const ImageGrid& grid) {
  const ImageGrid& c = cal.size;
  std::vector<std::vector<cdouble>> low;
  for (const auto& k : cal.kspace) {
    low.push_back(padded(k, c, grid, [&](int x, int y, int z) { return hann(x, c.nx) * hann(y, c.ny) * hann(z, c.nz); }));
    centered_dft(low.back(), grid, +1);
  }
  std::vector<double> rss(grid.voxels());
  double peak = 0;
  for (std::size_t v = 0; v < rss.size(); ++v) {
    for (const auto& l : low) rss[v] += std::norm(l[v]);
    rss[v] = std::sqrt(rss[v]);
    peak = std::max(peak, rss[v]);
  }
  CoilData maps(low.size(), std::vector<cfloat>(grid.voxels()));
  for (std::size_t c2 = 0; c2 < low.size(); ++c2)
    for (std::size_t v = 0; v < rss.size(); ++v) maps[c2][v] = cfloat(low[c2][v] / std::max(rss[v], 1e-9 * peak));
  return maps;
}

namespace {

struct Kernel {
  ImageGrid size;  // per axis, 1 on an axis of 1
  int coils = 0;
  int columns() const { return coils * int(size.voxels()); }
};

// Gram matrix G = sum_p y_p y_p^H of the calibration blocks y_p (entries
// (coil, offset d): x_c[p + d]). Its top eigenvectors span the blocks.
CMatrix block_gram(const Calibration& cal, const Kernel& k) {
  const ImageGrid& c = cal.size;
  const ImageGrid pos{c.nx - k.size.nx + 1, c.ny - k.size.ny + 1, c.nz - k.size.nz + 1};
  const int n = k.columns(), kv = int(k.size.voxels());
  const std::size_t rows = pos.voxels();
  std::vector<cdouble> y(rows * n);  // row p = y_p
  for_each_index(pos, [&](int px, int py, int pz) {
    cdouble* row = &y[linear(px, py, pz, pos) * n];
    for (int coil = 0; coil < k.coils; ++coil)
      for_each_index(k.size, [&](int dx, int dy, int dz) {
        row[coil * kv + int(linear(dx, dy, dz, k.size))] = cdouble(cal.kspace[coil][linear(px + dx, py + dy, pz + dz, c)]);
      });
  });
  CMatrix g(n, n);  // first Y^H Y = conj(G), then conjugated
#ifdef FHD_HAVE_CBLAS
  const cdouble one = 1.0, zero = 0.0;
  cblas_zgemm(CblasRowMajor, CblasConjTrans, CblasNoTrans, n, n, int(rows), &one, y.data(), n, y.data(), n, &zero,
              g.v.data(), n);
#else
#pragma omp parallel for schedule(dynamic)
  for (int a = 0; a < n; ++a)
    for (std::size_t p = 0; p < rows; ++p) {
      const cdouble ya = std::conj(y[p * n + a]);
      for (int b = 0; b < n; ++b) g(a, b) += ya * y[p * n + b];
    }
#endif
  for (cdouble& v : g.v) v = std::conj(v);
  return g;
}

// The signal subspace's projector folded into one convolution kernel per coil
// pair: h_cc'[e] = (1/|kernel|) sum_{d - d' = e} P[(c,d),(c',d')], P = W W^H.
// Its inverse centred DFT is the voxel operator H(x) whose eigenvector of
// eigenvalue 1 is the sensitivity vector (docs/coils.md derives it).
std::vector<std::vector<cdouble>> pair_kernels(const CMatrix& w, const Kernel& k, const ImageGrid& hsize) {
  const CMatrix p = multiply(w, adjoint(w));
  const int kv = int(k.size.voxels());
  std::vector<std::vector<cdouble>> h;
  for (int c = 0; c < k.coils; ++c)
    for (int c2 = c; c2 < k.coils; ++c2) {
      std::vector<cdouble> hk(hsize.voxels());
      for_each_index(k.size, [&](int dx, int dy, int dz) {
        const int d = int(linear(dx, dy, dz, k.size));
        for_each_index(k.size, [&](int ex, int ey, int ez) {
          const int d2 = int(linear(ex, ey, ez, k.size));
          const std::size_t e = linear(dx - ex + k.size.nx - 1, dy - ey + k.size.ny - 1, dz - ez + k.size.nz - 1, hsize);
          hk[e] += p(c * kv + d, c2 * kv + d2) / double(kv);
        });
      });
      h.push_back(std::move(hk));
    }
  return h;
}

// Dominant eigenpair of a small Hermitian positive semi-definite matrix by
// power iteration from its strongest column.
double dominant(const CMatrix& h, std::vector<cdouble>& v) {
  const int n = h.rows;
  int start = 0;
  for (int i = 1; i < n; ++i)
    if (h(i, i).real() > h(start, start).real()) start = i;
  for (int i = 0; i < n; ++i) v[i] = h(i, start);
  std::vector<cdouble> next(n);
  double lambda = 0;
  for (int it = 0; it < 60; ++it) {
    double norm = 0;
    for (const cdouble& x : v) norm += std::norm(x);
    norm = std::sqrt(norm);
    if (norm == 0) return 0;
    for (cdouble& x : v) x /= norm;
    for (int i = 0; i < n; ++i) {
      cdouble s = 0;
      for (int j = 0; j < n; ++j) s += h(i, j) * v[j];
      next[i] = s;
    }
    lambda = 0;
    for (int i = 0; i < n; ++i) lambda += (std::conj(v[i]) * next[i]).real();
    std::swap(v, next);
  }
  double norm = 0;
  for (const cdouble& x : v) norm += std::norm(x);
  for (cdouble& x : v) x /= std::sqrt(norm);
  return lambda;
}

Kernel espirit_kernel(const Calibration& cal, const ImageGrid& grid, int width) {
  Kernel k{{}, int(cal.kspace.size())};
  auto axis = [&](int calib, int n, const char* name) {
    if (calib == 1) return 1;
    if (width < 2 || width > calib || 2 * width - 1 > n)
      throw InputError("coil maps", std::string("ESPIRiT kernel (") + name + ")", std::to_string(width),
                       "must be in 2..calibration size " + std::to_string(calib) + " and fit the image (2w - 1 <= " +
                           std::to_string(n) + ")");
    return width;
  };
  k.size = {axis(cal.size.nx, grid.nx, "x"), axis(cal.size.ny, grid.ny, "y"), axis(cal.size.nz, grid.nz, "z")};
  return k;
}

}  // namespace

CoilData maps_espirit(const Calibration& cal, const ImageGrid& grid, const EspiritOptions& opt) {
  const Kernel k = espirit_kernel(cal, grid, opt.kernel);
  const int nc = k.coils;
  const std::size_t pairs = std::size_t(nc) * (nc + 1) / 2;
  if (double(pairs) * grid.voxels() * sizeof(cfloat) > 4.0 * (1 << 30))
    throw InputError("coil maps", "ESPIRiT operator size", std::to_string(pairs) + " coil pairs x " +
                     std::to_string(grid.voxels()) + " voxels", "over 4 GiB: compress the coils first (--virtual-coils)");
  const Eigen e = hermitian_eigen(block_gram(cal, k));
  int keep = 0;
  while (keep < int(e.values.size()) && e.values[keep] >= opt.threshold * opt.threshold * e.values[0]) ++keep;
  CMatrix w(e.vectors.rows, keep);
  for (int i = 0; i < w.rows; ++i)
    for (int j = 0; j < keep; ++j) w(i, j) = e.vectors(i, j);
  const ImageGrid hsize{2 * k.size.nx - 1, 2 * k.size.ny - 1, 2 * k.size.nz - 1};
  std::vector<std::vector<cfloat>> hx;  // H(x) per coil pair (c <= c'), on the image grid
  for (auto& h : pair_kernels(w, k, hsize)) {
    std::vector<cdouble> full(grid.voxels());
    for_each_index(hsize, [&](int x, int y, int z) {
      full[linear(grid.nx / 2 + x - (k.size.nx - 1), grid.ny / 2 + y - (k.size.ny - 1),
                  grid.nz / 2 + z - (k.size.nz - 1), grid)] = h[linear(x, y, z, hsize)];
    });
    centered_dft(full, grid, +1);
    hx.emplace_back(full.begin(), full.end());
  }
  CoilData maps(nc, std::vector<cfloat>(grid.voxels()));
  const std::int64_t nv = std::int64_t(grid.voxels());
#pragma omp parallel
  {
    CMatrix h(nc, nc);
    std::vector<cdouble> v(nc);
#pragma omp for schedule(static)
    for (std::int64_t vox = 0; vox < nv; ++vox) {
      for (int c = 0, pair = 0; c < nc; ++c)
        for (int c2 = c; c2 < nc; ++c2, ++pair) {
          h(c, c2) = cdouble(hx[pair][vox]);
          h(c2, c) = std::conj(h(c, c2));
        }
      if (dominant(h, v) < opt.crop) continue;  // outside the support: zero
      const cdouble ref = std::abs(v[0]) > 0 ? std::conj(v[0]) / std::abs(v[0]) : 1.0;
      for (int c = 0; c < nc; ++c) maps[c][vox] = cfloat(v[c] * ref);
    }
  }
  return maps;
}

double map_difference(const CoilData& est, const CoilData& truth, const std::vector<bool>& mask) {
  if (est.size() != truth.size() || est.empty()) throw std::invalid_argument("map_difference: coil counts differ");
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t v = 0; v < mask.size(); ++v) {
    if (!mask[v]) continue;
    double tt = 0, ee = 0;
    cdouble inner = 0;
    for (std::size_t c = 0; c < truth.size(); ++c) {
      tt += std::norm(cdouble(truth[c][v]));
      ee += std::norm(cdouble(est[c][v]));
      inner += std::conj(cdouble(est[c][v])) * cdouble(truth[c][v]);
    }
    if (tt == 0) continue;
    // ||e - t/|t| e^{-i phi}||^2 minimized over phi: |e|^2 + 1 - 2 |<e, t>| / |t|.
    sum += std::max(0.0, ee + 1 - 2 * std::abs(inner) / std::sqrt(tt));
    ++count;
  }
  return count ? std::sqrt(sum / double(count)) : 0.0;
}

}  // namespace fhd
