#include "recon/coils/coil_compress.hpp"

#include <numeric>
#include <string>

#include "core/error.hpp"

namespace fhd {

double Compression::kept() const {
  const double total = std::accumulate(energy.begin(), energy.end(), 0.0);
  const double part = std::accumulate(energy.begin(), energy.begin() + matrix.rows, 0.0);
  return total > 0 ? part / total : 1.0;
}

Compression compression_matrix(const CoilData& data, int k) {
  const int nc = int(data.size());
  if (k < 1 || k > nc)
    throw InputError("coil compression", "--virtual-coils", std::to_string(k),
                     "must be in 1..coils (" + std::to_string(nc) + ")");
  const Eigen e = hermitian_eigen(row_gram(data));
  Compression out{CMatrix(k, nc), e.values};
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < nc; ++j) out.matrix(i, j) = std::conj(e.vectors(j, i));
  return out;
}

Compression compress_coils(std::vector<Scan>& coils, int k) {
  const int nc = int(coils.size());
  CoilData data;
  for (const Scan& s : coils) data.push_back(s.data);
  // As many as the coils: the coils unchanged, but their energies reported
  // as for any k (they were all 1).
  if (k >= nc) return {CMatrix::identity(nc), compression_matrix(data, nc).energy};
  Compression c = compression_matrix(data, k);
  mix_coils(c.matrix, data);
  bool noisy = !coils[0].noise.empty();
  for (const Scan& s : coils) noisy = noisy && s.noise.size() == coils[0].noise.size();
  CoilData noise;
  if (noisy) {
    for (const Scan& s : coils) noise.push_back(s.noise);
    mix_coils(c.matrix, noise);
  }
  coils.resize(k);
  for (int i = 0; i < k; ++i) {
    coils[i].data = std::move(data[i]);
    if (noisy) coils[i].noise = std::move(noise[i]);
    coils[i].provenance["coil"] = std::to_string(i);
  }
  return c;
}

}  // namespace fhd
