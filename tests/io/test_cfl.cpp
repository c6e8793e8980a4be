// BART .cfl/.hdr: round trips, layout as bart reads it, and the interop facts
// of docs/conventions.md ("Interop": sign, orientation and scaling) checked
// with bart itself.
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>

#include "catch.hpp"
#include "io/cfl.hpp"
#include "io_test_util.hpp"

using namespace fhd;
using namespace fhd::test;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Direct float64 sum over samples or voxels with our convention:
// sign = +1: adjoint FhD_n = sum_m D_m exp(+i 2 pi k_m.x_n)
// sign = -1: forward D_m = sum_n rho_n exp(-i 2 pi k_m.x_n)
std::vector<cdouble> adjoint_sum(const Scan& s, double sign = 1.0) {
  const ImageGrid g = s.grid;
  std::vector<cdouble> out(g.voxels());
  for (int iz = 0; iz < g.nz; ++iz)
    for (int iy = 0; iy < g.ny; ++iy)
      for (int ix = 0; ix < g.nx; ++ix) {
        const double x = axis_coord(ix, g.nx, g.nx), y = axis_coord(iy, g.ny, g.ny), z = axis_coord(iz, g.nz, g.nz);
        cdouble acc = 0;
        for (std::size_t m = 0; m < s.traj.size(); ++m) {
          const double ph = sign * 2 * kPi * (s.traj.kx[m] * x + s.traj.ky[m] * y + s.traj.kz[m] * z);
          acc += cdouble(s.data[m]) * cdouble(std::cos(ph), std::sin(ph));
        }
        out[ix + std::size_t(g.nx) * (iy + std::size_t(g.ny) * iz)] = acc;
      }
  return out;
}

std::vector<cdouble> forward_sum(const Trajectory& t, const ImageGrid& g, const std::vector<cfloat>& rho) {
  std::vector<cdouble> out(t.size());
  for (std::size_t m = 0; m < t.size(); ++m) {
    cdouble acc = 0;
    for (int iz = 0; iz < g.nz; ++iz)
      for (int iy = 0; iy < g.ny; ++iy)
        for (int ix = 0; ix < g.nx; ++ix) {
          const double ph = -2 * kPi * (t.kx[m] * axis_coord(ix, g.nx, g.nx) + t.ky[m] * axis_coord(iy, g.ny, g.ny) +
                                        t.kz[m] * axis_coord(iz, g.nz, g.nz));
          acc += cdouble(rho[ix + std::size_t(g.nx) * (iy + std::size_t(g.ny) * iz)]) * cdouble(std::cos(ph), std::sin(ph));
        }
    out[m] = acc;
  }
  return out;
}

template <class A, class B>
double rel_error(const std::vector<A>& got, const std::vector<B>& ref, double scale = 1.0) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    num += std::norm(cdouble(got[i]) * scale - cdouble(ref[i]));
    den += std::norm(cdouble(ref[i]));
  }
  return std::sqrt(num / den);
}

std::string dims_arg(const ImageGrid& g) {
  return std::to_string(g.nx) + ":" + std::to_string(g.ny) + ":" + std::to_string(g.nz);
}

}  // namespace

TEST_CASE("cfl round trip of any dims, dimension 0 fastest", "[io][cfl]") {
  TempDir dir;
  std::vector<cfloat> v(2 * 3 * 1 * 4);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = {float(i), -0.5f * float(i)};
  write_cfl(dir.file("a"), {2, 3, 1, 4}, v);
  CHECK(dir.entries() == 2);
  CflArray a = read_cfl(dir.file("a.cfl"));
  CHECK(a.dims[0] == 2);
  CHECK(a.dims[1] == 3);
  CHECK(a.dims[3] == 4);
  CHECK(a.dims[15] == 1);
  CHECK(a.data == v);
  CHECK(std::filesystem::file_size(dir.file("a.cfl")) == v.size() * 8);
}

TEST_CASE("cfl layout as bart reads it", "[io][cfl][bart]") {
  if (!on_path("bart")) FHD_SKIP("bart is not on PATH");
  TempDir dir;
  std::vector<cfloat> v(4 * 3 * 2);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = {float(i), 100.0f + float(i)};
  write_cfl(dir.file("a"), {4, 3, 2}, v);
  // bart slice 1 2: the y = 2 plane, [4, 1, 2]: element (x, z) = v[x + 4*(2 + 3*z)].
  std::string out;
  REQUIRE(run("bart slice 1 2 " + dir.file("a") + " " + dir.file("b"), &out) == 0);
  CflArray b = read_cfl(dir.file("b"));
  CHECK(b.dims[0] == 4);
  CHECK(b.dims[1] == 1);
  CHECK(b.dims[2] == 2);
  REQUIRE(b.data.size() == 8);
  for (int z = 0; z < 2; ++z)
    for (int x = 0; x < 4; ++x) CHECK(b.data[x + 4 * z] == v[x + 4 * (2 + 3 * z)]);
}

// Runs `bart nufft -a <opts>` on scan s written with our writer; returns BART's image.
static std::vector<cfloat> bart_adjoint(const Scan& s, const std::string& opts, const TempDir& dir) {
  write_bart_scan(dir.file("traj"), dir.file("ksp"), {s}, s.traj.size() % 40 == 0 ? 40 : 0);
  std::string out;
  const std::string cmd = "bart nufft -a " + opts + " -d " + dims_arg(s.grid) + " " + dir.file("traj") + " " +
                          dir.file("ksp") + " " + dir.file("img");
  const int rc = run(cmd, &out);
  INFO(cmd << "\n" << out);
  REQUIRE(rc == 0);
  ImageGrid found;
  std::vector<cfloat> img = read_bart_image(dir.file("img"), &found);
  REQUIRE(found == s.grid);
  return img;
}

// Non-square grids so that a swap of x and y (or a flip of z) cannot pass.
static const ImageGrid kBartGrids[] = {{16, 12, 1}, {10, 8, 6}};

TEST_CASE("bart nufft -s (exact DFT) adjoint equals our FhD / sqrt(Ntot): sign and orientation", "[io][cfl][bart]") {
  if (!on_path("bart")) FHD_SKIP("bart is not on PATH");
  for (ImageGrid g : kBartGrids) {
    INFO("grid " << dims_arg(g));
    TempDir dir;
    Scan s = random_scan(g, 400, 3);  // the full band
    std::vector<cfloat> img = bart_adjoint(s, "-s", dir);
    // We divided D by sqrt(N) on export; BART's -s adjoint is the plain sum.
    const double scale = std::sqrt(double(g.voxels()));
    double err = rel_error(img, adjoint_sum(s), scale);
    INFO("relative error vs direct adjoint " << err);
    CHECK(err < 1e-4);
    // The opposite sign must fail: the comparison can tell.
    CHECK(rel_error(img, adjoint_sum(s, -1.0), scale) > 0.5);
  }
}

TEST_CASE("bart nufft adjoint is unitary: equals our FhD / Ntot away from the band edge", "[io][cfl][bart]") {
  if (!on_path("bart")) FHD_SKIP("bart is not on PATH");
  for (ImageGrid g : kBartGrids) {
    INFO("grid " << dims_arg(g));
    TempDir dir;
    Scan s = random_scan(g, 400, 3, 0.5);  // |k| <= N/4: BART's gridding is accurate there
    std::vector<cfloat> img = bart_adjoint(s, "", dir);
    double err = rel_error(img, adjoint_sum(s), double(g.voxels()));
    INFO("relative error vs direct adjoint " << err);
    CHECK(err < 1e-2);
  }
}

TEST_CASE("bart 0.8 nufft attenuates samples near |k| = N/2 (documented in formats.md)", "[io][cfl][bart]") {
  if (!on_path("bart")) FHD_SKIP("bart is not on PATH");
  TempDir dir;
  const ImageGrid g{16, 16, 1};
  Scan s = random_scan(g, 1);
  s.traj.kx[0] = 7.9f;
  s.traj.ky[0] = 0.0f;
  s.data[0] = 1.0f;
  const std::size_t center = 8 + 16 * 8;
  // Exact: the centre voxel of the unitary adjoint is D / Ntot = 1/256.
  const double exact = 1.0 / 256.0;
  const double plain = std::abs(bart_adjoint(s, "", dir)[center]);
  const double periodic = std::abs(bart_adjoint(s, "-P", dir)[center]);
  INFO("nufft " << plain * 256 << " x exact, nufft -P " << periodic * 256 << " x exact");
  CHECK(plain < 0.6 * exact);
  CHECK(std::fabs(periodic - exact) < 1e-2 * exact);
}

TEST_CASE("bart nufft forward, read back, equals our non-unitary sum", "[io][cfl][bart]") {
  if (!on_path("bart")) FHD_SKIP("bart is not on PATH");
  TempDir dir;
  const ImageGrid g{12, 10, 1};
  Scan s = random_scan(g, 200, 5, 0.5);  // |k| <= N/4, see the attenuation test
  write_bart_scan(dir.file("traj"), dir.file("unused"), {s}, 20);
  std::vector<cfloat> rho(g.voxels());
  for (std::size_t i = 0; i < rho.size(); ++i) rho[i] = {float(std::sin(0.7 * i)), float(std::cos(1.3 * i))};
  write_bart_image(dir.file("rho"), rho, g);
  REQUIRE(run("bart nufft -d " + dims_arg(g) + " " + dir.file("traj") + " " + dir.file("rho") + " " + dir.file("ksp")) == 0);
  std::vector<Scan> coils = read_bart_scan(dir.file("traj"), dir.file("ksp"), g);
  REQUIRE(coils.size() == 1);
  CHECK(coils[0].traj.kx == s.traj.kx);
  double err = rel_error(coils[0].data, forward_sum(s.traj, g, rho));
  INFO("relative error " << err);
  CHECK(err < 1e-2);
}

TEST_CASE("bart traj radial spokes pass the band check", "[io][cfl][bart]") {
  if (!on_path("bart")) FHD_SKIP("bart is not on PATH");
  TempDir dir;
  // -x N -o 2: 2N samples per spoke at spacing 0.5, k in [-N/2 + 1/4, N/2 - 1/4].
  REQUIRE(run("bart traj -x 16 -o 2 -y 9 -r " + dir.file("t")) == 0);
  std::vector<cfloat> k(32 * 9 * 2, cfloat(1, 0));
  write_cfl(dir.file("k"), {1, 32, 9, 2}, k);
  std::vector<Scan> coils = read_bart_scan(dir.file("t"), dir.file("k"), {16, 16, 1});
  REQUIRE(coils.size() == 2);
  CHECK(coils[1].traj.size() == 32u * 9u);
  CHECK(coils[1].data[0] == cfloat(16, 0));  // 1 * sqrt(16*16)
  double kmax = 0;
  for (std::size_t m = 0; m < coils[0].traj.size(); ++m)
    kmax = std::max(kmax, std::hypot(double(coils[0].traj.kx[m]), double(coils[0].traj.ky[m])));
  CHECK(std::fabs(kmax - 7.75) < 1e-5);
}

TEST_CASE("multi-coil write and read round trip", "[io][cfl]") {
  TempDir dir;
  const ImageGrid g{8, 8, 4};
  Scan a = random_scan(g, 60, 1), b = a;
  for (auto& v : b.data) v *= cfloat(0, 2);
  write_bart_scan(dir.file("t"), dir.file("k"), {a, b}, 12);
  CHECK(read_cfl(dir.file("k")).dims[3] == 2);
  std::vector<Scan> r = read_bart_scan(dir.file("t"), dir.file("k"), g);
  REQUIRE(r.size() == 2);
  CHECK(r[0].traj.kz == a.traj.kz);
  CHECK(rel_error(r[0].data, a.data) < 1e-6);
  CHECK(rel_error(r[1].data, b.data) < 1e-6);
}

TEST_CASE("cfl bad inputs name file, field and value", "[io][cfl]") {
  TempDir dir;
  const ImageGrid g{16, 16, 1};
  Scan s = random_scan(g, 32);
  write_bart_scan(dir.file("t"), dir.file("k"), {s}, 8);
  auto err = [&] { return error_of([&] { read_bart_scan(dir.file("t"), dir.file("k"), g); }); };
  auto put = [&](const std::string& file, const std::string& text) { std::ofstream(dir.file(file)) << text; };

  SECTION("missing header") {
    std::filesystem::remove(dir.file("t.hdr"));
    CHECK(err() == dir.file("t.hdr") + ": does not exist");
  }
  SECTION("missing data") {
    std::filesystem::remove(dir.file("k.cfl"));
    CHECK(contains(err(), dir.file("k.cfl")));
  }
  SECTION("truncated data") {
    std::filesystem::resize_file(dir.file("k.cfl"), 100);
    CHECK(contains(err(), dir.file("k.cfl") + ": size = 100 bytes: expected 256"));
  }
  SECTION("bad dimension") {
    put("t.hdr", "# Dimensions\n3 8 -4 1\n");
    CHECK(contains(err(), "# Dimensions[2] = -4"));
  }
  SECTION("no dimensions line") {
    put("t.hdr", "hello\n");
    CHECK(contains(err(), dir.file("t.hdr") + ": # Dimensions = (missing)"));
  }
  SECTION("trajectory not [3, ...]") {
    put("t.hdr", "# Dimensions\n2 12 4\n");
    CHECK(contains(err(), dir.file("t.cfl") + ": dims = [2 12 4]"));
  }
  SECTION("k-space shape differs") {
    put("k.hdr", "# Dimensions\n1 4 8\n");
    CHECK(contains(err(), dir.file("k.cfl") + ": dims = [1 4 8]"));
  }
  SECTION("out of band") {
    Scan wide = s;
    wide.grid = {32, 32, 1};
    wide.traj.ky[5] = 12.0f;
    write_bart_scan(dir.file("t"), dir.file("k"), {wide}, 8);
    CHECK(contains(err(), dir.file("t.cfl") + ": sample[5].ky = 12"));
  }
  SECTION("NaN in k-space") {
    Scan nan = s;
    nan.data[3] = {0, std::nanf("")};
    write_bart_scan(dir.file("t"), dir.file("k"), {nan}, 8);
    CHECK(contains(err(), dir.file("k.cfl") + ": sample[3] = (0, nan)"));
  }
  SECTION("writer refuses a mismatched size and leaves nothing") {
    std::string e = error_of([&] { write_cfl(dir.file("x"), {3, 5}, std::vector<cfloat>(14)); });
    CHECK(contains(e, "data length = 14"));
    CHECK(dir.entries() == 4);
  }
}
