// Density compensation: analytic radial shells and Pipe-Menon iteration.
#include "recon/gridding/dcf.hpp"

#include <algorithm>
#include <parallel/algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>

#include "core/error.hpp"
#include "recon/gridding/gridding.hpp"
#include "recon/gridding/kaiser_bessel.hpp"

namespace fhd {

bool is_radial_kind(const std::string& kind) {
  return kind == "radial3d" || kind == "radial2d" || kind == "stack-of-stars";
}

namespace {

const double kPi = 3.14159265358979323846;

// Radii closer than this are one shell: float rounding of spoke coordinates
// is ~1e-5 cycles/FOV, readout spacings are ~0.5.
double same_level(double r) { return 1e-3 + 1e-5 * r; }

// Volume of a ball (dim 3) or disk (dim 2) of radius r.
double ball(double r, int dim) { return dim == 3 ? 4.0 / 3.0 * kPi * r * r * r : kPi * r * r; }

// Shell weights of one group of samples, in the order of their radii: each
// sample finds its level (radius_levels) by binary search.
std::vector<float> shell_weights(const std::vector<double>& radii, int dim, double factor, const std::string& kind) {
  const RadiusLevels lv = radius_levels(radii);
  const std::vector<double>& level = lv.start;
  const std::size_t nlev = level.size();
  if (nlev < 2) throw DcfError(kind, "a group of samples has only one radius");
  if (nlev > radii.size() / 2)
    throw DcfError(kind, "the samples do not look radial (few of them share a radius)");
  std::vector<float> wl(nlev);
  for (std::size_t l = 0; l < nlev; ++l) {
    double inner = l == 0 ? 0.0 : 0.5 * (level[l - 1] + level[l]);
    double outer = l + 1 == nlev ? level[l] : 0.5 * (level[l] + level[l + 1]);
    wl[l] = float(factor * (ball(outer, dim) - ball(inner, dim)) / double(lv.count[l]));
  }
  std::vector<float> w(radii.size());
  // A radius belongs to the last level starting at or below it (the runs are disjoint).
#pragma omp parallel for
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(radii.size()); ++i)
    w[std::size_t(i)] =
        wl[std::size_t(std::upper_bound(level.begin(), level.end(), radii[std::size_t(i)]) - level.begin()) - 1];
  return w;
}

// Partitions of a stack: sample indices grouped by kz, and the kz spacing.
std::vector<std::vector<std::size_t>> kz_partitions(const Trajectory& t, double& spacing) {
  std::vector<std::size_t> order(t.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&t](std::size_t a, std::size_t b) { return t.kz[a] < t.kz[b]; });
  std::vector<std::vector<std::size_t>> parts;
  std::vector<double> levels;
  for (std::size_t m : order) {
    if (levels.empty() || t.kz[m] - levels.back() > same_level(std::fabs(levels.back()))) {
      levels.push_back(t.kz[m]);
      parts.emplace_back();
    }
    parts.back().push_back(m);
  }
  spacing = 1.0;  // one partition: a 2D acquisition, no third dimension to weigh
  for (std::size_t i = 1; i < levels.size(); ++i)
    spacing = i == 1 ? levels[1] - levels[0] : std::min(spacing, levels[i] - levels[i - 1]);
  return parts;
}

// Sample order by nearest grid cell (z, then y, then x): neighbours in the
// iteration then touch the same cache lines; it cut Pipe-Menon from 10 s to 3.2 s on
// a 1M-sample kooshball, whose spokes otherwise sweep the whole grid.
std::vector<std::size_t> cell_order(const Trajectory& t, const GridMap& map) {
  const float* kk[3] = {t.kx.data(), t.ky.data(), t.kz.data()};
  std::vector<std::uint64_t> key(t.size());
  for (std::size_t m = 0; m < t.size(); ++m) {
    std::uint64_t c = 0;
    for (int a = 2; a >= 0; --a) {
      long cell = map.size[a] == 1 ? 0 : std::lround(kk[a][m] * map.scale[a] + map.offset[a]);
      c = c * std::uint64_t(map.size[a] + 1) + std::uint64_t(std::max(0L, std::min(cell, long(map.size[a]))));
    }
    key[m] = c;
  }
  std::vector<std::size_t> order(t.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&key](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  return order;
}

// Whether samples m and n lie on one line through the origin: the cross
// product of k_m and k_n small against their lengths (a sample at the origin
// is on every line). in_plane: kx-ky only.
bool on_one_line(const Trajectory& t, std::size_t m, std::size_t n, bool in_plane) {
  const double a[3] = {t.kx[m], t.ky[m], in_plane ? 0.0 : t.kz[m]};
  const double b[3] = {t.kx[n], t.ky[n], in_plane ? 0.0 : t.kz[n]};
  const double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  const double na = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  const double nb = std::sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
  const double nc = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  return nc <= 1e-4 * na * nb + 1e-6;
}

// Fraction of consecutive sample pairs on one line through the origin.
double collinear_fraction(const Trajectory& t, bool in_plane) {
  if (t.size() < 2) return 0.0;
  std::size_t hits = 0;
  for (std::size_t m = 0; m + 1 < t.size(); ++m)
    if (on_one_line(t, m, m + 1, in_plane)) ++hits;
  return double(hits) / double(t.size() - 1);
}

// Whether every sample lies on the line through the origin and the sample
// farthest from it: a 1D scan, or a single spoke, is collinear throughout but
// has no spokes whose density radial weights describe.
bool single_line(const Trajectory& t, bool in_plane) {
  std::size_t far = 0;
  double far2 = -1;
  for (std::size_t m = 0; m < t.size(); ++m) {
    const double r2 = double(t.kx[m]) * t.kx[m] + double(t.ky[m]) * t.ky[m] + (in_plane ? 0.0 : double(t.kz[m]) * t.kz[m]);
    if (r2 > far2) far2 = r2, far = m;
  }
  for (std::size_t m = 0; m < t.size(); ++m)
    if (!on_one_line(t, far, m, in_plane)) return false;
  return true;
}

// Readouts have tens to hundreds of samples, so a line change costs one pair in
// that many; random samples are almost never collinear with the origin.
const double kCollinear = 0.9;

}  // namespace

// The sort is plain values (libstdc++'s parallel mode, OpenMP): at 1M samples
// a sort of the indices through r took 94 ms of the GPU machine's sixteen
// cores. Levels: the first radius of each run of radii within same_level of it.
RadiusLevels radius_levels_by_sort(std::vector<double> radii) {
  __gnu_parallel::sort(radii.begin(), radii.end());
  RadiusLevels lv;
  for (double v : radii) {
    if (lv.start.empty() || v - lv.start.back() > same_level(lv.start.back())) {
      lv.start.push_back(v);
      lv.count.push_back(0);
    }
    ++lv.count.back();
  }
  return lv;
}

// One pass over buckets of width kBucket (half the smallest same_level): a run
// of non-empty buckets is a shell. It is the sort's level exactly when the
// shell spans no more than same_level of its smallest radius and starts
// beyond same_level of the previous shell's; otherwise, or for radii too
// large for the buckets, nothing is returned. Radial trajectories' shells are
// a readout spacing apart (about 0.5) and 1e-5 wide: at 1M samples this took
// 0.06-0.08 s by the sort (16 cores of the GPU machine) and a few ms here.
std::optional<RadiusLevels> radius_levels_by_buckets(const std::vector<double>& radii) {
  constexpr double kBucket = 0.5e-3;
  constexpr std::size_t kMaxBuckets = std::size_t(1) << 21;  // radii up to 1048 (48 MB)
  double top = 0.0;
  for (double v : radii) {
    if (!(v >= 0.0)) return std::nullopt;
    top = std::max(top, v);
  }
  const std::size_t nb = std::size_t(top / kBucket) + 2;
  if (radii.empty() || nb > kMaxBuckets) return std::nullopt;
  struct Bucket {
    std::uint32_t n = 0;
    double lo = 0, hi = 0;
  };
  std::vector<Bucket> b(nb);
  for (double v : radii) {
    Bucket& k = b[std::size_t(v / kBucket)];
    k.lo = k.n ? std::min(k.lo, v) : v;
    k.hi = k.n ? std::max(k.hi, v) : v;
    ++k.n;
  }
  RadiusLevels lv;
  for (std::size_t i = 0; i < nb;) {
    if (!b[i].n) {
      ++i;
      continue;
    }
    double lo = b[i].lo, hi = b[i].hi;
    std::size_t n = 0;
    for (; i < nb && b[i].n; ++i) {
      hi = std::max(hi, b[i].hi);
      n += b[i].n;
    }
    if (hi - lo > same_level(lo)) return std::nullopt;
    if (!lv.start.empty() && !(lo - lv.start.back() > same_level(lv.start.back()))) return std::nullopt;
    lv.start.push_back(lo);
    lv.count.push_back(n);
  }
  return lv;
}

RadiusLevels radius_levels(const std::vector<double>& radii) {
  if (std::optional<RadiusLevels> lv = radius_levels_by_buckets(radii)) return *lv;
  return radius_levels_by_sort(radii);
}

std::string detect_radial_kind(const Trajectory& t) {
  bool flat = true;
  for (float z : t.kz) flat = flat && z == 0.0f;
  if (collinear_fraction(t, false) >= kCollinear) return single_line(t, false) ? "" : flat ? "radial2d" : "radial3d";
  if (flat || collinear_fraction(t, true) < kCollinear || single_line(t, true)) return "";
  // In-plane spokes: a stack of stars when kz takes few values (partitions).
  std::vector<float> kz(t.kz);
  std::sort(kz.begin(), kz.end());
  const std::size_t levels = std::size_t(std::unique(kz.begin(), kz.end()) - kz.begin());
  return levels * 8 <= t.size() ? "stack-of-stars" : "";
}

std::string effective_kind(const Trajectory& t, const std::string& traj_kind) {
  if (is_radial_kind(traj_kind)) return traj_kind;
  return traj_kind.empty() ? detect_radial_kind(t) : traj_kind;
}

std::vector<float> radial_weights(const Trajectory& t, const std::string& traj_kind) {
  if (!is_radial_kind(traj_kind))
    throw DcfError(traj_kind, "radial weights need radial3d, radial2d or stack-of-stars");
  std::vector<double> r(t.size());
  const bool volume = traj_kind == "radial3d";
  const std::ptrdiff_t n = std::ptrdiff_t(t.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t m = 0; m < n; ++m) {
    double z2 = volume ? double(t.kz[m]) * t.kz[m] : 0.0;
    r[m] = std::sqrt(double(t.kx[m]) * t.kx[m] + double(t.ky[m]) * t.ky[m] + z2);
  }
  if (volume || traj_kind == "radial2d") return shell_weights(r, volume ? 3 : 2, 1.0, traj_kind);
  std::vector<float> w(t.size());
  double dkz = 1.0;
  for (const std::vector<std::size_t>& part : kz_partitions(t, dkz)) {
    std::vector<double> pr(part.size());
    for (std::size_t i = 0; i < part.size(); ++i) pr[i] = r[part[i]];
    const std::vector<float> pw = shell_weights(pr, 2, dkz, traj_kind);
    for (std::size_t i = 0; i < part.size(); ++i) w[part[i]] = pw[i];
  }
  return w;
}

std::vector<float> pipe_menon_weights(const Trajectory& t, const ImageGrid& grid, const PipeMenonOptions& opt) {
  GridKernel gk;
  gk.width = opt.width;
  gk.oversampling = 2.0;  // Beatty's shape for sigma 2: a smooth bell with low sidelobes
  ResolvedKernel k = resolve_kernel(gk);
  const int n[3] = {grid.nx, grid.ny, grid.nz};
  const std::vector<float>* kk[3] = {&t.kx, &t.ky, &t.kz};
  GridMap map;
  double volume_per_weight = 1.0;
  for (int a = 0; a < 3; ++a) {
    if (n[a] == 1) continue;
    double kmax = 0.0;
    for (float v : *kk[a]) kmax = std::max(kmax, double(std::fabs(v)));
    // Room on both sides so no sample's kernel wraps onto the far edge.
    int half = int(std::ceil(kmax * opt.cells_per_k + 0.5 * k.width)) + 2;
    map.size[a] = 2 * half;
    map.scale[a] = opt.cells_per_k;
    map.offset[a] = half;
    // C * w sums the kernel's autocorrelation, whose integral is (int C)^2 cells.
    double c0 = k.transform(0.0);
    volume_per_weight *= c0 * c0 / opt.cells_per_k;
  }
  std::vector<std::size_t> order = cell_order(t, map);
  Trajectory sorted;
  sorted.resize(t.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    sorted.kx[i] = t.kx[order[i]];
    sorted.ky[i] = t.ky[order[i]];
    sorted.kz[i] = t.kz[order[i]];
  }
  std::size_t cells = std::size_t(map.size[0]) * map.size[1] * map.size[2];
  std::vector<float> w(t.size(), 1.0f), density(t.size()), g(cells);
  for (int it = 0; it < opt.iterations; ++it) {
    std::fill(g.begin(), g.end(), 0.0f);
    scatter(sorted, w.data(), map, k, g.data());
    gather(sorted, g.data(), map, k, density.data());
    for (std::size_t m = 0; m < w.size(); ++m) w[m] /= density[m];
  }
  std::vector<float> out(t.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[order[i]] = float(w[i] * volume_per_weight);
  return out;
}

std::vector<float> density_weights(const Trajectory& t, const ImageGrid& grid, const std::string& method,
                                   const std::string& traj_kind) {
  if (method == "pipe-menon") return pipe_menon_weights(t, grid);
  const std::string kind = method == "radial" || method == "auto" ? effective_kind(t, traj_kind) : traj_kind;
  if (method == "radial") return radial_weights(t, kind.empty() ? "an imported trajectory (not radial)" : kind);
  if (method == "auto") return is_radial_kind(kind) ? radial_weights(t, kind) : pipe_menon_weights(t, grid);
  throw InputError("density compensation", "method", method, "must be auto, radial or pipe-menon");
}

}  // namespace fhd
