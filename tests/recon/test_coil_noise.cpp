// Coil linear algebra (Cholesky, triangular inverse, Hermitian eigen) and
// noise prewhitening: the whitened noise covariance is the identity.
#include <cmath>

#include "catch.hpp"
#include "phantom/coils.hpp"
#include "recon/coils/coil_linalg.hpp"
#include "recon/coils/coil_noise.hpp"
#include "core/error.hpp"
#include "test_util.hpp"

using namespace fhd;

namespace {

// A random Hermitian positive definite n x n matrix B B^H + n I.
CMatrix random_hpd(int n, unsigned seed) {
  auto r = test::random_complex(std::size_t(n) * n, seed);
  CMatrix b(n, n);
  for (std::size_t i = 0; i < r.size(); ++i) b.v[i] = cdouble(r[i]);
  CMatrix a = multiply(b, adjoint(b));
  for (int i = 0; i < n; ++i) a(i, i) += n;
  return a;
}

double max_abs_diff(const CMatrix& a, const CMatrix& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) m = std::max(m, std::abs(a.v[i] - b.v[i]));
  return a.v.size() == b.v.size() ? m : HUGE_VAL;
}

CMatrix scaled_identity(int n, double s) {
  CMatrix i = CMatrix::identity(n);
  for (cdouble& v : i.v) v *= s;
  return i;
}

CoilData correlated_noise(const NoiseModel& model, std::size_t m, std::uint64_t seed) {
  return noise_scan(model, 0.3, m, seed);
}

}  // namespace

TEST_CASE("row_gram is the sum over samples of x_i conj(x_j), Hermitian", "[recon][coils]") {
  std::vector<std::vector<cfloat>> rows;
  for (unsigned r = 0; r < 5; ++r) rows.push_back(test::random_complex(10007, 40 + r));  // odd: uneven thread shares
  const CMatrix g = row_gram(rows);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      cdouble want = 0;
      for (std::size_t k = 0; k < rows[0].size(); ++k) want += cdouble(rows[i][k]) * std::conj(cdouble(rows[j][k]));
      CHECK(std::abs(g(i, j) - want) < 1e-9 * std::abs(g(i, i)));
    }
}

TEST_CASE("cholesky and the lower-triangular inverse", "[recon][coils]") {
  const CMatrix a = random_hpd(7, 3);
  const CMatrix l = cholesky(a);
  for (int i = 0; i < 7; ++i)
    for (int j = i + 1; j < 7; ++j) CHECK(l(i, j) == cdouble(0));
  CHECK(max_abs_diff(multiply(l, adjoint(l)), a) < 1e-10 * 7);
  CHECK(max_abs_diff(multiply(lower_inverse(l), l), CMatrix::identity(7)) < 1e-12);
  CMatrix singular = a;
  for (int j = 0; j < 7; ++j) singular(3, j) = singular(2, j), singular(j, 3) = singular(j, 2);
  singular(3, 3) = singular(2, 2);
  CHECK_THROWS_AS(cholesky(singular), std::domain_error);
}

TEST_CASE("Hermitian eigen-decomposition: A V = V diag(values), descending, V unitary", "[recon][coils]") {
  for (int n : {1, 5, 24}) {
    const CMatrix a = random_hpd(n, 11 + n);
    for (bool jacobi : {true, false}) {
      INFO("n " << n << (jacobi ? " jacobi" : " default"));
      const Eigen e = jacobi ? hermitian_eigen_jacobi(a) : hermitian_eigen(a);
      CMatrix lambda(n, n);
      for (int i = 0; i < n; ++i) lambda(i, i) = e.values[i];
      CHECK(max_abs_diff(multiply(a, e.vectors), multiply(e.vectors, lambda)) < 1e-9 * n * n);
      CHECK(max_abs_diff(multiply(adjoint(e.vectors), e.vectors), CMatrix::identity(n)) < 1e-10 * n);
      for (int i = 1; i < n; ++i) CHECK(e.values[i - 1] >= e.values[i]);
    }
  }
}

TEST_CASE("the top of a spectrum: eigenpairs at least ratio times the largest; power iteration", "[recon][coils]") {
  // A = U diag(lambda) U^H with a known spectrum, U unitary (a random HPD matrix's vectors).
  const int n = 40;
  const CMatrix u = hermitian_eigen(random_hpd(n, 5)).vectors;
  std::vector<double> lambda(n);
  for (int i = 0; i < n; ++i) lambda[i] = 100.0 * std::pow(0.6, i);  // 100, 60, 36, 21.6, 12.96, 7.776, ...
  CMatrix d(n, n);
  for (int i = 0; i < n; ++i) d(i, i) = lambda[i];
  const CMatrix a = multiply(multiply(u, d), adjoint(u));
  for (double ratio : {1.0, 0.2, 0.05, 1e-4}) {
    INFO("ratio " << ratio);
    const Eigen e = hermitian_eigen_top(a, ratio);
    int want = 0;
    while (want < n && lambda[want] >= ratio * lambda[0]) ++want;  // none within 1% of the cut
    REQUIRE(int(e.values.size()) == want);
    REQUIRE(e.vectors.cols == want);
    CMatrix l(want, want);
    for (int i = 0; i < want; ++i) {
      CHECK(std::abs(e.values[i] - lambda[i]) < 1e-9 * lambda[0]);
      l(i, i) = e.values[i];
    }
    CHECK(max_abs_diff(multiply(a, e.vectors), multiply(e.vectors, l)) < 1e-9 * lambda[0]);
    CHECK(max_abs_diff(multiply(adjoint(e.vectors), e.vectors), CMatrix::identity(want)) < 1e-10 * n);
  }
  CHECK_THROWS_AS(hermitian_eigen_top(a, 0.0), std::invalid_argument);

  std::vector<cdouble> v;
  const double top = power_iteration(a, v, 500, 1e-10);
  CHECK(std::abs(top - lambda[0]) < 1e-8 * lambda[0]);
  double overlap = 0;  // |<u_0, v>| = 1 for the dominant vector, up to a phase
  cdouble inner = 0;
  for (int i = 0; i < n; ++i) inner += std::conj(u(i, 0)) * v[i];
  overlap = std::abs(inner);
  CHECK(overlap > 1 - 1e-8);
  // Stopped early, still a lower bound of the largest eigenvalue (a Rayleigh quotient).
  CHECK(power_iteration(a, v, 2, 0) <= lambda[0] * (1 + 1e-12));
}

TEST_CASE("prewhitening makes the noise covariance the identity", "[recon][coils]") {
  const int nc = 8;
  const NoiseModel model = make_noise_model(nc, 21);
  const CoilData calib = correlated_noise(model, 20000, 1);
  const CMatrix psi = noise_covariance(calib);
  // The estimate is 2 sigma^2 A A^H within sampling error (1/sqrt(20000)).
  const auto truth = model.covariance();
  double err = 0, ref = 0;
  for (int i = 0; i < nc * nc; ++i) {
    err += std::norm(psi.v[i] - 2 * 0.09 * truth[i]);
    ref += std::norm(2 * 0.09 * truth[i]);
  }
  CHECK(std::sqrt(err / ref) < 0.03);

  SECTION("exactly on the calibration samples, in float") {
    CoilData white = calib;
    mix_coils(whitening_matrix(psi, false), white);
    CHECK(max_abs_diff(noise_covariance(white), CMatrix::identity(nc)) < 1e-5);
  }
  SECTION("statistically on fresh noise of the same receiver") {
    CoilData fresh = correlated_noise(model, 20000, 2);
    CHECK(max_abs_diff(noise_covariance(fresh), CMatrix::identity(nc)) > 0.1);  // not white before
    mix_coils(whitening_matrix(psi, false), fresh);
    CHECK(max_abs_diff(noise_covariance(fresh), CMatrix::identity(nc)) < 0.05);
  }
  SECTION("keep_scale: the mean noise power stays") {
    double mean = 0;
    for (int i = 0; i < nc; ++i) mean += psi(i, i).real() / nc;
    const CMatrix w = whitening_matrix(psi, true);
    CHECK(max_abs_diff(multiply(multiply(w, psi), adjoint(w)), scaled_identity(nc, mean)) < 1e-10);
  }
}

TEST_CASE("prewhiten on scans: data and noise mixed alike, bad noise refused", "[recon][coils]") {
  const int nc = 4;
  const NoiseModel model = make_noise_model(nc, 2);
  const CoilData calib = correlated_noise(model, 5000, 3);
  std::vector<Scan> coils(nc);
  for (int c = 0; c < nc; ++c) {
    coils[c].data = test::random_complex(50, 40 + c);
    coils[c].noise = calib[c];
  }
  std::vector<Scan> before = coils;
  REQUIRE(prewhiten(coils));
  const CMatrix w = whitening_matrix(noise_covariance(calib), true);
  for (int i = 0; i < nc; ++i)
    for (std::size_t m : {std::size_t(0), std::size_t(49)}) {
      cdouble want = 0;
      for (int j = 0; j < nc; ++j) want += w(i, j) * cdouble(before[j].data[m]);
      CHECK(std::abs(cdouble(coils[i].data[m]) - want) < 1e-5 * std::abs(want) + 1e-6);
    }
  double mean = 0;
  for (int i = 0; i < nc; ++i) mean += noise_covariance(calib)(i, i).real() / nc;
  CHECK(max_abs_diff(noise_covariance({coils[0].noise, coils[1].noise, coils[2].noise, coils[3].noise}),
                     scaled_identity(nc, mean)) < 1e-5 * mean);

  std::vector<Scan> none(2);
  none[0].data = none[1].data = test::random_complex(5, 1);
  CHECK_FALSE(prewhiten(none));
  CHECK(none[0].data == test::random_complex(5, 1));
  std::vector<Scan> some = before;
  some[2].noise.clear();
  CHECK_THROWS_AS(prewhiten(some), InputError);
  std::vector<Scan> dead = before;
  for (auto& v : dead[1].noise) v = 0;  // a dead channel: covariance singular
  CHECK_THROWS_AS(prewhiten(dead), InputError);
  CHECK(dead[0].data == before[0].data);  // refused before touching anything
  // Fewer noise samples than coils: singular whatever the channels; the cause is named.
  std::vector<Scan> few = before;
  for (Scan& s : few) s.noise.resize(3);
  try {
    prewhiten(few);
    FAIL("3 noise samples for 4 coils were taken");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "noise: samples per coil = 3: fewer than the 4 coils: their covariance is singular; record at least as "
          "many (--noise-samples)");
  }
}

TEST_CASE("whitening_matrix refuses a covariance that is not square, finite, Hermitian or positive definite",
          "[recon][coils]") {
  const auto error_of = [](const CMatrix& psi) -> std::string {
    try {
      whitening_matrix(psi, true);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  const auto has = [](const std::string& s, const std::string& what) {
    INFO(s);
    return s.find(what) != std::string::npos;
  };
  CMatrix psi(2, 2);
  psi(0, 0) = 2, psi(1, 1) = 1, psi(1, 0) = {0.5, 0.25}, psi(0, 1) = {0.5, -0.25};
  REQUIRE(error_of(psi) == "no error");

  SECTION("not Hermitian: cholesky reads one triangle and used to give some W") {
    CMatrix bad = psi;
    bad(0, 1) = {0.5, 0.25};  // the transpose's value, not the adjoint's
    CHECK(has(error_of(bad), "noise: covariance[1][0] = (0.5, 0.25): not Hermitian: covariance[0][1] = (0.5, 0.25)"));
    bad = psi;
    bad(1, 1) = {1, 0.01};  // a diagonal entry that is not real
    CHECK(has(error_of(bad), "covariance[1][1] = (1, 0.01): not Hermitian"));
  }
  SECTION("rounding within the tolerance passes") {
    CMatrix near = psi;
    near(0, 1) += cdouble(0.5e-6, 0);  // 0.25 x the tolerance x the largest diagonal entry
    CHECK(error_of(near) == "no error");
  }
  SECTION("not positive definite") {
    CMatrix neg = psi;
    neg(0, 0) = -2, neg(1, 1) = -1;
    CHECK(has(error_of(neg), "not positive definite"));
  }
  SECTION("not finite, not square, empty") {
    CMatrix nan = psi;
    nan(1, 0) = {std::nan(""), 0};
    CHECK(has(error_of(nan), "covariance[1][0] = (nan, 0): not a finite number"));
    CHECK(has(error_of(CMatrix(2, 3)), "noise: covariance = 2x3: must be a square"));
    CHECK(has(error_of(CMatrix()), "noise: covariance = 0x0: must be a square"));
  }
}
