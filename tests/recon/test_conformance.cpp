// The conformance suites (tests/conformance.hpp, tests/solver_conformance.hpp)
// on the CPU device.
#include "conformance.hpp"
#include "solver_conformance.hpp"

TEST_CASE("conformance: cpu", "[conformance]") {
  fhd::conformance::run_all([] { return fhd::make_cpu_device(); });
}

TEST_CASE("proxes against their direct solutions: cpu", "[conformance][prox]") {
  auto dev = fhd::make_cpu_device();
  fhd::solver_conformance::proxes(*dev);
}

TEST_CASE("solvers reach known minimisers: cpu", "[conformance][solvers]") {
  auto dev = fhd::make_cpu_device();
  fhd::solver_conformance::solvers(*dev);
}
