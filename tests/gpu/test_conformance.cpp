// The backend conformance suite (tests/conformance.hpp) on the GPU backend.
#include "conformance.hpp"
#include "test_backend_util.hpp"

TEST_CASE("backend conformance: gpu", "[gpu][conformance]") {
  FHD_NEED_GPU();
  fhd::conformance::run_all([] { return fhd::make_gpu_backend(); });
}
