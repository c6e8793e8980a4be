// The backend conformance suite (tests/conformance.hpp) on the CPU backend.
#include "conformance.hpp"

TEST_CASE("backend conformance: cpu", "[conformance]") {
  fhd::conformance::run_all([] { return fhd::make_cpu_backend(); });
}
