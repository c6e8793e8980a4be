// The conformance suites (tests/conformance.hpp, tests/solver_conformance.hpp)
// on the GPU device.
#include "conformance.hpp"
#include "solver_conformance.hpp"
#include "test_backend_util.hpp"

TEST_CASE("conformance: gpu", "[gpu][conformance]") {
  FHD_NEED_GPU();
  fhd::conformance::run_all([] { return fhd::make_gpu_device(); });
}

TEST_CASE("proxes against their direct solutions: gpu", "[gpu][conformance][prox]") {
  FHD_NEED_GPU();
  auto dev = fhd::make_gpu_device();
  fhd::solver_conformance::proxes(*dev);
}

TEST_CASE("solvers reach known minimisers: gpu", "[gpu][conformance][solvers]") {
  FHD_NEED_GPU();
  auto dev = fhd::make_gpu_device();
  fhd::solver_conformance::solvers(*dev);
}
