#pragma once
// SENSE's batched normal (recon/coils/sense.cpp, issue 25) against the
// per-coil sum it replaces, on any device: N x = sum_c conj(S_c) T (S_c x)
// with T the model's own normal applied coil by coil, and <x, N x> real and
// >= 0; and its adjoint E^H y against the per-coil sum. Shared by the CPU
// (tests/recon) and GPU (tests/gpu) tests.
#include <complex>
#include <string>
#include <vector>

#include "catch.hpp"
#include "recon/coils/sense.hpp"
#include "test_util.hpp"

namespace fhd::test {

// `coils` smooth maps of distinct phase ramps and magnitudes.
inline CoilData ramp_maps(const ImageGrid& g, int coils) {
  CoilData maps(coils, std::vector<cfloat>(g.voxels()));
  for (int c = 0; c < coils; ++c)
    for (std::size_t i = 0; i < g.voxels(); ++i) {
      const double x = double(i % g.nx) / g.nx, y = double((i / g.nx) % g.ny) / g.ny;
      maps[c][i] = std::polar(float(0.5 + 0.5 * std::cos(3.0 * c + 2.0 * x + y)), float(1.3 * c + 3.0 * x * y));
    }
  return maps;
}

// Checks the batched normal of sense_op(model, maps) against the per-coil sum.
inline void check_sense_normal(Device& dev, const OpPtr& model, const ImageGrid& g, int coils, unsigned seed) {
  const CoilData maps = ramp_maps(g, coils);
  const OpPtr e = sense_op(model, upload_maps(dev, maps, g));
  const OpPtr n = e->normal();
  INFO("device " << dev.name() << ", " << coils << " coils, normal " << n->name());
  CHECK(n->name().find("batched") != std::string::npos);  // not the per-coil sum's fallback
  const std::vector<cfloat> x = random_complex(g.voxels(), seed);
  const std::vector<cfloat> got = n->apply(x);
  const OpPtr t = model->normal();
  std::vector<cdouble> want(g.voxels(), 0.0);
  for (int c = 0; c < coils; ++c) {
    std::vector<cfloat> sx(g.voxels());
    for (std::size_t i = 0; i < sx.size(); ++i) sx[i] = maps[c][i] * x[i];
    const std::vector<cfloat> tsx = t->apply(sx);
    for (std::size_t i = 0; i < sx.size(); ++i) want[i] += std::conj(cdouble(maps[c][i])) * cdouble(tsx[i]);
  }
  CHECK(rel_l2(got, want) < 1e-5);
  cdouble xnx = 0, xx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xnx += std::conj(cdouble(x[i])) * cdouble(got[i]);
    xx += std::norm(cdouble(x[i]));
  }
  CHECK(xnx.real() >= 0);
  CHECK(std::abs(xnx.imag()) < 1e-5 * std::abs(xnx));
  CHECK(xnx.real() > 1e-3 * xx.real());  // not the zero operator
  // E^H E x by its definition (apply, then adjoint) agrees too.
  CHECK(rel_l2(e->adjoint(e->apply(x)), want) < 1e-3);
}

// E^H y of sense_op(model, maps) (the coils' adjoints batched where the
// model batches them) against sum_c conj(S_c) A^H y_c, coil by coil.
inline void check_sense_adjoint(Device& dev, const OpPtr& model, const ImageGrid& g, int coils, unsigned seed) {
  const CoilData maps = ramp_maps(g, coils);
  const OpPtr e = sense_op(model, upload_maps(dev, maps, g));
  const std::size_t m = model->out().size();
  const std::vector<cfloat> y = random_complex(m * coils, seed);
  std::vector<cdouble> want(g.voxels(), 0.0);
  for (int c = 0; c < coils; ++c) {
    const std::vector<cfloat> a = model->adjoint(std::vector<cfloat>(y.begin() + c * m, y.begin() + (c + 1) * m));
    for (std::size_t i = 0; i < a.size(); ++i) want[i] += std::conj(cdouble(maps[c][i])) * cdouble(a[i]);
  }
  INFO("device " << dev.name() << ", " << coils << " coils");
  CHECK(rel_l2(e->adjoint(y), want) < 1e-5);
  // adjoint_add: x + 0.5 E^H y.
  const std::vector<cfloat> x0 = random_complex(g.voxels(), seed + 1);
  VecPtr x = dev.upload(x0), yd = dev.upload(y);
  e->adjoint_add(*yd, *x, 0.5);
  std::vector<cdouble> want_add(g.voxels());
  for (std::size_t i = 0; i < want_add.size(); ++i) want_add[i] = cdouble(x0[i]) + 0.5 * want[i];
  CHECK(rel_l2(dev.download(*x), want_add) < 1e-5);
}

}  // namespace fhd::test
