// mix_maps: the maps of coils mixed by a matrix (prewhitening W, compression
// U_K^H W) are the maps mixed alike, so SENSE with the mixed coils and the
// mixed maps models the same object (the CLI's --maps true, Python's given maps).
#include <stdexcept>

#include "catch.hpp"
#include "recon/coils/coil_noise.hpp"
#include "test_util.hpp"

using namespace fhd;

TEST_CASE("mix_maps: the mixed coils' images are the mixed maps times the object", "[recon][coils]") {
  const int nc = 4, voxels = 60;
  CoilData maps;
  for (int c = 0; c < nc; ++c) maps.push_back(test::random_complex(voxels, 10 + c));
  const std::vector<cfloat> x = test::random_complex(voxels, 99);
  CMatrix m(3, nc);  // 3 virtual coils of 4, as compression after prewhitening makes
  const std::vector<cfloat> r = test::random_complex(m.v.size(), 7);
  for (std::size_t i = 0; i < r.size(); ++i) m.v[i] = cdouble(r[i]);

  CoilData images(nc, std::vector<cfloat>(voxels));  // coil c sees maps[c] * x
  for (int c = 0; c < nc; ++c)
    for (int v = 0; v < voxels; ++v) images[c][v] = maps[c][v] * x[v];
  mix_coils(m, images);
  const CoilData mixed = mix_maps(maps, m);
  REQUIRE(mixed.size() == 3);
  for (int k = 0; k < 3; ++k)
    for (int v = 0; v < voxels; ++v) {
      cdouble want = 0;  // float64: sum_c m(k,c) maps[c][v]
      for (int c = 0; c < nc; ++c) want += m(k, c) * cdouble(maps[c][v]);
      CHECK(std::abs(cdouble(mixed[k][v]) - want) < 1e-5 * (1 + std::abs(want)));
      CHECK(std::abs(cdouble(mixed[k][v] * x[v]) - cdouble(images[k][v])) < 1e-5 * (1 + std::abs(want)));
    }
  CHECK(maps[0] == test::random_complex(voxels, 10));  // the given maps are left as they were
  CHECK_THROWS_AS(mix_maps(CoilData(3, std::vector<cfloat>(voxels)), m), std::invalid_argument);
}
