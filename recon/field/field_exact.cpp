// The exact off-resonance model on the host (recon/field/field.hpp). The phase of a
// (sample, voxel) pair is k_m . r_n + f_n t_m: separable in k . r (a factor
// per axis and sample) but not in f t. Samples that share a time share the
// field's phase exp(-i 2 pi f_n t), so the samples are grouped by time (a
// readout's j-th samples all have the same t): per group one phase per voxel,
// then a separable direct sum, one complex multiply-add per pair.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "core/error.hpp"
#include "core/phase.hpp"
#include "recon/field/field.hpp"
#include "recon/device/cpu_device.hpp"

namespace fhd {
namespace {

constexpr double kTwoPi = 6.283185307179586;

double reduce(double turns) { return turns - std::rint(turns); }

// The samples of each distinct time, in time order.
std::vector<std::vector<std::size_t>> groups_by_time(const std::vector<float>& times) {
  std::map<float, std::vector<std::size_t>> by;
  for (std::size_t m = 0; m < times.size(); ++m) by[times[m]].push_back(m);
  std::vector<std::vector<std::size_t>> out;
  out.reserve(by.size());
  for (auto& g : by) out.push_back(std::move(g.second));
  return out;
}

// Per sample of a group: exp(sign i 2 pi k_axis x_i) for every voxel
// coordinate of each axis, real and imaginary parts apart (the inner loops
// vectorize). x_i = (i - n/2)/n is a geometric sequence, so each axis costs
// two sin/cos and a float64 recurrence.
struct AxisFactors {
  std::vector<float> xr, xi;  // [s * nx + i]
  std::vector<cfloat> ey, ez; // [s * ny + i], [s * nz + i]
};

void axis_row(double k, int n, double sign, float* re, float* im) {
  const cdouble start(std::polar(1.0, sign * kTwoPi * reduce(k * axis_coord(0, n, n))));
  const cdouble step(std::polar(1.0, sign * kTwoPi * reduce(k / n)));
  cdouble v = start;
  for (int i = 0; i < n; ++i, v *= step) {
    re[i] = float(v.real());
    im[i] = float(v.imag());
  }
}

void axis_row(double k, int n, double sign, cfloat* out) {
  std::vector<float> re(static_cast<std::size_t>(n)), im(static_cast<std::size_t>(n));
  axis_row(k, n, sign, re.data(), im.data());
  for (int i = 0; i < n; ++i) out[i] = cfloat(re[std::size_t(i)], im[std::size_t(i)]);
}

AxisFactors axis_factors(const Trajectory& k, const std::vector<std::size_t>& group, const ImageGrid& g, double sign) {
  AxisFactors a;
  const std::size_t s = group.size();
  a.xr.resize(s * g.nx);
  a.xi.resize(s * g.nx);
  a.ey.resize(s * g.ny);
  a.ez.resize(s * g.nz);
  for (std::size_t j = 0; j < s; ++j) {
    const std::size_t m = group[j];
    axis_row(k.kx[m], g.nx, sign, &a.xr[j * g.nx], &a.xi[j * g.nx]);
    axis_row(k.ky[m], g.ny, sign, &a.ey[j * g.ny]);
    axis_row(k.kz.empty() ? 0.0 : k.kz[m], g.nz, sign, &a.ez[j * g.nz]);
  }
  return a;
}

}  // namespace

void check_field_sizes(std::size_t samples, const FieldData& f, const ImageGrid& grid, std::size_t given,
                       std::size_t want, const char* what) {
  if (f.hz.size() != grid.voxels() || f.times.size() != samples)
    throw InputError("field model", "field map / sample times",
                     std::to_string(f.hz.size()) + " / " + std::to_string(f.times.size()),
                     "must number the voxels and samples, " + std::to_string(grid.voxels()) + " / " +
                         std::to_string(samples));
  if (given != want)
    throw InputError("field model", what, std::to_string(given), "must be " + std::to_string(want) + " long");
}

// sum_i (xr + i xi)_i (rr + i ri)_i in float, eight partial sums so that the
// loop vectorizes without reassociation flags.
cdouble row_sum(const float* xr, const float* xi, const float* rr, const float* ri, int n) {
  constexpr int W = 8;
  float re[W] = {}, im[W] = {};
  int i = 0;
  for (; i + W <= n; i += W)
    for (int l = 0; l < W; ++l) {
      re[l] += xr[i + l] * rr[i + l] - xi[i + l] * ri[i + l];
      im[l] += xr[i + l] * ri[i + l] + xi[i + l] * rr[i + l];
    }
  double sr = 0, si = 0;
  for (; i < n; ++i) {
    sr += double(xr[i]) * rr[i] - double(xi[i]) * ri[i];
    si += double(xr[i]) * ri[i] + double(xi[i]) * rr[i];
  }
  for (int l = 0; l < W; ++l) {
    sr += re[l];
    si += im[l];
  }
  return {sr, si};
}

// Both run one parallel loop over the time groups (each thread takes whole
// groups): the groups are many and small (a spiral readout's 800 sample
// indices of 64 interleaves each), and a parallel region per group spent
// more time in barriers than in sums on a shared machine.
std::vector<cfloat> field_forward_host(const Trajectory& k, const FieldData& f, const std::vector<cfloat>& image,
                                       const ImageGrid& grid) {
  check_field_sizes(k.size(), f, grid, image.size(), grid.voxels(), "image");
  std::vector<cfloat> out(k.size());
  const std::vector<std::vector<std::size_t>> groups = groups_by_time(f.times);
  const int nx = grid.nx, rows = grid.ny * grid.nz;
#pragma omp parallel
  {
    std::vector<float> yr(grid.voxels()), yi(grid.voxels());
#pragma omp for schedule(dynamic)
    for (std::int64_t g = 0; g < std::int64_t(groups.size()); ++g) {
      const std::vector<std::size_t>& group = groups[std::size_t(g)];
      const double t = f.times[group[0]];
      for (std::size_t n = 0; n < yr.size(); ++n) {  // y = x exp(-i 2 pi f t)
        const cfloat y = image[n] * cfloat(off_resonance_phase(f.hz[n], t));
        yr[n] = y.real();
        yi[n] = y.imag();
      }
      const AxisFactors a = axis_factors(k, group, grid, -1);
      for (std::size_t j = 0; j < group.size(); ++j) {
        const float* xr = &a.xr[j * nx];
        const float* xi = &a.xi[j * nx];
        cdouble sum = 0;
        for (int r = 0; r < rows; ++r) {
          const float* rr = &yr[std::size_t(r) * nx];
          const float* ri = &yi[std::size_t(r) * nx];
          const cdouble row = row_sum(xr, xi, rr, ri, nx);
          const cfloat eyz = a.ey[j * grid.ny + r % grid.ny] * a.ez[j * grid.nz + r / grid.ny];
          sum += row * cdouble(eyz);
        }
        out[group[j]] = cfloat(sum);
      }
    }
  }
  return out;
}

std::vector<cfloat> field_adjoint_host(const Trajectory& k, const FieldData& f, const std::vector<cfloat>& data,
                                       const ImageGrid& grid) {
  check_field_sizes(k.size(), f, grid, data.size(), k.size(), "data");
  std::vector<cfloat> out(grid.voxels());
  const std::vector<std::vector<std::size_t>> groups = groups_by_time(f.times);
  const int nx = grid.nx, rows = grid.ny * grid.nz;
#pragma omp parallel
  {
    std::vector<cfloat> mine(grid.voxels());
    std::vector<float> ar(static_cast<std::size_t>(nx)), ai(static_cast<std::size_t>(nx));
#pragma omp for schedule(dynamic)
    for (std::int64_t g = 0; g < std::int64_t(groups.size()); ++g) {
      const std::vector<std::size_t>& group = groups[std::size_t(g)];
      const double t = f.times[group[0]];
      const AxisFactors a = axis_factors(k, group, grid, +1);
      for (int r = 0; r < rows; ++r) {
        const int iy = r % grid.ny, iz = r / grid.ny;
        std::fill(ar.begin(), ar.end(), 0.f);
        std::fill(ai.begin(), ai.end(), 0.f);
        for (std::size_t j = 0; j < group.size(); ++j) {  // acc[ix] += c_j ex_j[ix]
          const cfloat c = data[group[j]] * a.ey[j * grid.ny + iy] * a.ez[j * grid.nz + iz];
          const float cr = c.real(), ci = c.imag();
          const float* xr = &a.xr[j * nx];
          const float* xi = &a.xi[j * nx];
          for (int ix = 0; ix < nx; ++ix) {
            ar[std::size_t(ix)] += cr * xr[ix] - ci * xi[ix];
            ai[std::size_t(ix)] += cr * xi[ix] + ci * xr[ix];
          }
        }
        for (int ix = 0; ix < nx; ++ix) {
          const std::size_t n = std::size_t(r) * nx + ix;
          mine[n] += cfloat(ar[std::size_t(ix)], ai[std::size_t(ix)]) * cfloat(std::conj(off_resonance_phase(f.hz[n], t)));
        }
      }
    }
#pragma omp critical
    for (std::size_t n = 0; n < out.size(); ++n) out[n] += mine[n];
  }
  return out;
}

namespace {

// The CPU's exact model: the host sums above on host vectors.
class CpuFieldModel : public FieldModel {
 public:
  CpuFieldModel(const Points& k, const FieldData& f, const ImageGrid& grid) : k_(k), f_(f), grid_(grid) {}
  void forward(const DeviceVector& x, DeviceVector& d) override {
    check_field_sizes(k_.size(), f_, grid_, x.size(), grid_.voxels(), "image");
    put(field_forward_host(k_.host(), f_, values(x), grid_), d);
  }
  void adjoint(const DeviceVector& d, DeviceVector& x) override {
    check_field_sizes(k_.size(), f_, grid_, d.size(), k_.size(), "data");
    put(field_adjoint_host(k_.host(), f_, values(d), grid_), x);
  }

 private:
  static std::vector<cfloat> values(const DeviceVector& v) {
    const cfloat* p = host_data(v);
    return std::vector<cfloat>(p, p + v.size());
  }
  static void put(const std::vector<cfloat>& v, DeviceVector& out) { std::copy(v.begin(), v.end(), host_data(out)); }
  const Points& k_;
  FieldData f_;  // a copy: the model outlives the scan it was made from
  ImageGrid grid_;
};

class CpuField : public FieldKernels {
 public:
  std::unique_ptr<FieldModel> model(const Points& k, const FieldData& f, const ImageGrid& grid) override {
    return std::make_unique<CpuFieldModel>(k, f, grid);
  }
};

}  // namespace

std::unique_ptr<FieldKernels> make_cpu_field(Device&) { return std::make_unique<CpuField>(); }

}  // namespace fhd
