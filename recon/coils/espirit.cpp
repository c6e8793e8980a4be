// ESPIRiT coil sensitivity maps (recon/coils/espirit.hpp, docs/coils.md).
#include "recon/coils/espirit.hpp"

#include <cstdint>

#include <complex>
#include <string>

#include <spdlog/spdlog.h>

#include "core/error.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/coils/grid_index.hpp"

#ifdef FHD_HAVE_CBLAS
#include <cblas.h>
#endif

namespace fhd {
namespace {

using grid_index::for_each_index;
using grid_index::linear;

constexpr double kMaxKeptShare = 0.8;  // of the calibration blocks, as signal directions (check_subspace)

struct Kernel {
  ImageGrid size;  // per axis, 1 on an axis of 1
  int coils = 0;
  int columns() const { return coils * int(size.voxels()); }
};

// Gram matrix G = sum_p y_p y_p^H of the calibration blocks y_p (entries
// (coil, offset d): x_c[p + d]). Its top eigenvectors span the blocks.
// Where a kernel-sized block fits in the calibration region: its rows.
ImageGrid block_positions(const Calibration& cal, const Kernel& k) {
  const ImageGrid& c = cal.size;
  return {c.nx - k.size.nx + 1, c.ny - k.size.ny + 1, c.nz - k.size.nz + 1};
}

CMatrix block_gram(const Calibration& cal, const Kernel& k) {
  const ImageGrid& c = cal.size;
  const ImageGrid pos = block_positions(cal, k);
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
  // Hermitian: one triangle by zherk (half zgemm's work), then mirrored.
  cblas_zherk(CblasRowMajor, CblasLower, CblasConjTrans, n, int(rows), 1.0, y.data(), n, 0.0, g.v.data(), n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) g(a, b) = std::conj(g(b, a));
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

Kernel espirit_kernel(const Calibration& cal, const ImageGrid& grid, int width) {
  Kernel k{{}, int(cal.kspace.size())};
  auto axis = [&](int calib, int n, const char* name) {
    if (calib == 1) return 1;
    if (width < 2 || width > calib || 2 * width - 1 > n)
      throw InputError("coil maps", std::string("ESPIRiT kernel (") + name + ")", std::to_string(width),
                       "must be in 2..calibration size " + std::to_string(calib) + " and fit the image (2w - 1 <= " +
                           std::to_string(n) + "): ESPIRiT needs a matrix of at least " +
                           std::to_string(2 * width - 1) + " and a calibration of at least " +
                           std::to_string(width) + " per axis; use lowres maps below that");
    return width;
  };
  k.size = {axis(cal.size.nx, grid.nx, "x"), axis(cal.size.ny, grid.ny, "y"), axis(cal.size.nz, grid.nz, "z")};
  return k;
}

// The signal subspace must be found, not just every block kept: with a
// calibration region barely larger than the kernel there are too few blocks
// (rows) for the coils' structure to leave a null space, every direction
// passes the threshold, and the maps came out zero (no eigenvalue reached the
// crop) or wrong with exit 0 (2D, 24^2, 4 coils: calibration 8 kept 9 of 9
// blocks, 0 voxels mapped; 9 kept 16 of 16, 3.3 dB; 10 kept 24 of 25, 14.9 dB;
// 12 kept 38 of 49, 19.0 dB like the default 24, 54 of 361. 3D, 16^3: 10 kept
// 110 of 125, 8.7 dB; 12 kept 214 of 343, 21.5 dB). So at most 80% of them.
void check_subspace(const Calibration& cal, const Kernel& k, int kept) {
  const std::size_t blocks = block_positions(cal, k).voxels();
  spdlog::debug("ESPIRiT: {} of {} calibration blocks' directions kept ({} columns)", kept, blocks, k.columns());
  if (double(kept) > kMaxKeptShare * double(blocks))
    throw InputError("coil maps", "ESPIRiT calibration region (--calibration)", std::to_string(cal.size.nx),
                     "too small for its kernel of width " + std::to_string(k.size.nx) + ": " +
                         std::to_string(kept) + " of its " + std::to_string(blocks) +
                         " blocks are signal (at most 80% may be), so the maps are not determined; use a larger "
                         "--calibration (default 24) or --maps lowres");
}

}  // namespace

CoilData maps_espirit(const Calibration& cal, const ImageGrid& grid, const EspiritOptions& opt,
                      const std::vector<bool>& support) {
  if (!support.empty() && support.size() != grid.voxels())
    throw std::invalid_argument("maps_espirit: the support has " + std::to_string(support.size()) + " voxels");
  const Kernel k = espirit_kernel(cal, grid, opt.kernel);
  const int nc = k.coils;
  const std::size_t pairs = std::size_t(nc) * (nc + 1) / 2;
  if (double(pairs) * grid.voxels() * sizeof(cfloat) > 4.0 * (1 << 30))
    throw InputError("coil maps", "ESPIRiT operator size", std::to_string(pairs) + " coil pairs x " +
                     std::to_string(grid.voxels()) + " voxels", "over 4 GiB: compress the coils first (--virtual-coils)");
  // Singular values of the calibration matrix at least threshold times the
  // largest: its Gram matrix's eigenvalues at least threshold^2 times.
  const CMatrix w = hermitian_eigen_top(block_gram(cal, k), opt.threshold * opt.threshold).vectors;
  check_subspace(cal, k, w.cols);
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
      if (!support.empty() && !support[std::size_t(vox)]) continue;
      for (int c = 0, pair = 0; c < nc; ++c)
        for (int c2 = c; c2 < nc; ++c2, ++pair) {
          h(c, c2) = cdouble(hx[pair][vox]);
          h(c2, c) = std::conj(h(c, c2));
        }
      if (power_iteration(h, v, 60, 1e-7) < opt.crop) continue;  // outside the support: zero
      const cdouble ref = std::abs(v[0]) > 0 ? std::conj(v[0]) / std::abs(v[0]) : 1.0;
      for (int c = 0; c < nc; ++c) maps[c][vox] = cfloat(v[c] * ref);
    }
  }
  return maps;
}

}  // namespace fhd
