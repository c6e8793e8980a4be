// cuBLAS is opened on first use, not at start-up (cuda/device/cublas_loader.hpp):
// these run without a GPU, since loading the library and finding its
// functions needs none.
#include <fstream>
#include <string>

#include "catch.hpp"
#include "cuda/device/cublas_loader.hpp"

namespace {

bool mapped(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(library) != std::string::npos) return true;
  return false;
}

// Read before main, so no test run before this one can have loaded it.
const bool cublas_mapped_at_start = mapped("libcublas");

}  // namespace

TEST_CASE("start-up maps no cuBLAS; the first use loads it and finds every function", "[cublas]") {
  CHECK_FALSE(cublas_mapped_at_start);
  const fhd::gpu::CublasApi& api = fhd::gpu::cublas();
  CHECK(fhd::gpu::cublas_loaded());
  CHECK(mapped("libcublas"));
  CHECK(api.create != nullptr);
  CHECK(api.destroy != nullptr);
  CHECK(api.set_stream != nullptr);
  CHECK(api.cgemm != nullptr);
  CHECK(api.cgemm3m != nullptr);
  CHECK(api.gemm_ex != nullptr);
  REQUIRE(api.status_string != nullptr);
  // The resolved function is the real one: it names a status, and two statuses differently.
  const std::string ok = api.status_string(CUBLAS_STATUS_SUCCESS);
  CHECK_FALSE(ok.empty());
  CHECK(ok != api.status_string(CUBLAS_STATUS_NOT_INITIALIZED));
}
