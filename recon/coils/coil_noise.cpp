#include "recon/coils/coil_noise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/number_text.hpp"

namespace fhd {
namespace {

std::string entry(int i, int j) { return "covariance[" + std::to_string(i) + "][" + std::to_string(j) + "]"; }

// A covariance is square, finite and Hermitian. Cholesky reads the lower
// triangle only, so a matrix that is not Hermitian (an estimate summed as
// n n^T, the conjugate forgotten) used to give some W without a word. The tolerance is
// relative to the largest diagonal entry: a covariance computed in float32
// and widened to complex128 differs from its adjoint by rounding, about 1e-7.
void check_covariance(const CMatrix& psi) {
  if (psi.rows < 1 || psi.rows != psi.cols)
    throw InputError("noise", "covariance", std::to_string(psi.rows) + "x" + std::to_string(psi.cols),
                     "must be a square coils x coils matrix");
  double largest = 0;
  for (int i = 0; i < psi.rows; ++i)
    for (int j = 0; j < psi.cols; ++j) {
      if (!std::isfinite(psi(i, j).real()) || !std::isfinite(psi(i, j).imag()))
        throw InputError("noise", entry(i, j), complex_text(psi(i, j)), "not a finite number");
      if (i == j) largest = std::max(largest, std::abs(psi(i, i)));
    }
  for (int i = 0; i < psi.rows; ++i)
    for (int j = 0; j <= i; ++j)
      if (std::abs(psi(i, j) - std::conj(psi(j, i))) > kHermitianTolerance * largest)
        throw InputError("noise", entry(i, j), complex_text(psi(i, j)),
                         "not Hermitian: " + entry(j, i) + " = " + complex_text(psi(j, i)) +
                             " is not its conjugate (tolerance " + number_text(kHermitianTolerance) +
                             " x the largest diagonal entry)");
}

}  // namespace

CMatrix noise_covariance(const CoilData& noise) {
  if (noise.empty() || noise[0].empty())
    throw InputError("noise", "samples", "0", "prewhitening needs noise-only samples");
  const int nc = int(noise.size());
  const std::size_t m = noise[0].size();
  for (int c = 0; c < nc; ++c)
    if (noise[c].size() != m)
      throw InputError("noise", "coil " + std::to_string(c) + " samples", std::to_string(noise[c].size()),
                       "every coil needs the same count (" + std::to_string(m) + ")");
  // Fewer samples than coils make a covariance of rank < coils: singular
  // whatever the channels, so say that rather than blame a channel.
  if (m < std::size_t(nc))
    throw InputError("noise", "samples per coil", std::to_string(m),
                     "fewer than the " + std::to_string(nc) +
                         " coils: their covariance is singular; record at least as many (--noise-samples)");
  CMatrix psi = row_gram(noise);
  for (cdouble& v : psi.v) v /= double(m);
  return psi;
}

CMatrix whitening_matrix(const CMatrix& psi, bool keep_scale) {
  check_covariance(psi);
  CMatrix l;
  try {
    l = cholesky(psi);
  } catch (const std::domain_error& e) {
    throw InputError("noise", "covariance", "(" + std::to_string(psi.rows) + " coils)",
                     std::string("not positive definite, a dead or duplicated channel? (") + e.what() + ")");
  }
  CMatrix w = lower_inverse(l);
  if (keep_scale) {
    double mean = 0;
    for (int i = 0; i < psi.rows; ++i) mean += psi(i, i).real() / psi.rows;
    for (cdouble& v : w.v) v *= std::sqrt(mean);
  }
  return w;
}

void mix_coils(const CMatrix& m, CoilData& data) {
  if (std::size_t(m.cols) != data.size())
    throw std::invalid_argument("mix_coils: matrix has " + std::to_string(m.cols) + " columns for " +
                                std::to_string(data.size()) + " coils");
  const std::size_t n = data.empty() ? 0 : data[0].size();
  for (const auto& coil : data)
    if (coil.size() != n) throw std::invalid_argument("mix_coils: the coils' sample counts differ");
  CoilData out(m.rows, std::vector<cfloat>(n));
  const std::int64_t count = std::int64_t(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < count; ++k)
    for (int i = 0; i < m.rows; ++i) {
      cdouble s = 0;
      for (int j = 0; j < m.cols; ++j) s += m(i, j) * cdouble(data[j][k]);
      out[i][k] = cfloat(s);
    }
  data = std::move(out);
}

CoilData mix_maps(const CoilData& maps, const CMatrix& m) {
  CoilData out = maps;  // a map per coil, a value per voxel: mixed as the coils' samples are
  mix_coils(m, out);
  return out;
}

namespace {

// Moves every scan's data into CoilData (and back).
CoilData take(std::vector<Scan>& coils, std::vector<cfloat> Scan::*f) {
  CoilData d;
  for (Scan& s : coils) d.push_back(std::move(s.*f));
  return d;
}
void give(std::vector<Scan>& coils, CoilData& d, std::vector<cfloat> Scan::*f) {
  for (std::size_t c = 0; c < coils.size(); ++c) coils[c].*f = std::move(d[c]);
}

}  // namespace

bool prewhiten(std::vector<Scan>& coils, CMatrix* applied) {
  std::size_t with_noise = 0;
  for (const Scan& s : coils) with_noise += !s.noise.empty();
  if (with_noise == 0) return false;
  if (with_noise != coils.size())
    throw InputError("noise", "coils with noise samples", std::to_string(with_noise),
                     "every coil or none must have them (" + std::to_string(coils.size()) + " coils)");
  CoilData noise;
  for (const Scan& s : coils) noise.push_back(s.noise);
  const CMatrix w = whitening_matrix(noise_covariance(noise), true);  // may throw: scans untouched
  CoilData data = take(coils, &Scan::data);
  mix_coils(w, data);
  mix_coils(w, noise);
  give(coils, data, &Scan::data);
  give(coils, noise, &Scan::noise);
  if (applied) *applied = w;
  return true;
}

}  // namespace fhd
