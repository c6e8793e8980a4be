// Coil compression: K virtual coils keep all of a rank-K array's data, the
// compression has orthonormal rows (white noise stays white), bad K refused.
#include <cmath>

#include "catch.hpp"
#include "phantom/coils.hpp"
#include "recon/coils/coil_compress.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

using namespace fhd;

namespace {

// 6 coils that are mixtures of 2 sources: rank 2.
CoilData rank_two(std::size_t m) {
  const auto src0 = test::random_complex(m, 1), src1 = test::random_complex(m, 2), mix = test::random_complex(12, 3);
  CoilData d(6, std::vector<cfloat>(m));
  for (int c = 0; c < 6; ++c)
    for (std::size_t k = 0; k < m; ++k) d[c][k] = mix[2 * c] * src0[k] + mix[2 * c + 1] * src1[k];
  return d;
}

}  // namespace

TEST_CASE("coil compression keeps a rank-K array's data in K virtual coils", "[recon][coils]") {
  const CoilData d = rank_two(500);
  const Compression c = compression_matrix(d, 2);
  REQUIRE(c.matrix.rows == 2);
  CHECK(c.kept() > 1 - 1e-9);
  CHECK(compression_matrix(d, 1).kept() < 0.99);
  // Rows orthonormal: C C^H = I.
  const CMatrix cch = multiply(c.matrix, adjoint(c.matrix));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) CHECK(std::abs(cch(i, j) - cdouble(i == j)) < 1e-12);
  // Back-projection C^H C D = D.
  CoilData v = d;
  mix_coils(c.matrix, v);
  mix_coils(adjoint(c.matrix), v);
  for (int coil = 0; coil < 6; ++coil) CHECK(test::rel_l2(v[coil], d[coil]) < 1e-5);
  CHECK_THROWS_AS(compression_matrix(d, 0), InputError);
  CHECK_THROWS_AS(compression_matrix(d, 7), InputError);
}

TEST_CASE("compress_coils: data and white noise alike; noise stays white", "[recon][coils]") {
  const CoilData d = rank_two(300);
  const CoilData noise = noise_scan(make_noise_model(6, 4), 1.0, 20000, 5);
  std::vector<Scan> coils(6);
  for (int c = 0; c < 6; ++c) {
    coils[c].data = d[c];
    coils[c].noise = noise[c];
  }
  REQUIRE(prewhiten(coils));  // white first, as the pipeline does
  CoilData white;
  for (const Scan& s : coils) white.push_back(s.noise);
  const CMatrix before = noise_covariance(white);
  const Compression c = compress_coils(coils, 3);
  REQUIRE(coils.size() == 3);
  CoilData virt;
  for (const Scan& s : coils) virt.push_back(s.noise);
  const CMatrix after = noise_covariance(virt);
  // C Psi C^H with Psi = s^2 I is s^2 I.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) CHECK(std::abs(after(i, j) - (i == j ? before(0, 0) : 0.0)) < 1e-4 * before(0, 0).real());
  CHECK(c.kept() > 0.99);
  std::vector<Scan> same = coils;
  compress_coils(same, 5);  // k >= coils: unchanged
  CHECK(same.size() == 3);
  CHECK(same[1].data == coils[1].data);
}
