// Partitions across devices equal one device, on CPU devices: a CPU Device
// can be made several times (each its own object, one host's memory), so the
// stacks, copies and reductions across devices run in CI; the GPU runs the
// same checks in tests/gpu/test_multi_partitions.cpp.
#include "recon/multi_checks.hpp"
#include "recon/ops/device_stack.hpp"

using namespace fhd;

namespace {

struct CpuDevices {
  std::vector<std::unique_ptr<Device>> owned;
  std::vector<Device*> list;
  // n CPU devices, listed in the order `order` names them (0,1,0,1: two devices, 4 partitions).
  CpuDevices(int n, const std::vector<int>& order) {
    for (int i = 0; i < n; ++i) owned.push_back(make_cpu_device());
    for (int i : order) list.push_back(owned[std::size_t(i)].get());
  }
};

}  // namespace

TEST_CASE("multi-device: vstack_across's normal is the sum of the parts' normals, on their devices", "[multi]") {
  CpuDevices d(2, {0, 1});
  const ImageGrid g{6, 5, 1};
  const Shape s = image_shape(g);
  const OpPtr a = diag(conformance::random_on(*d.list[0], g.voxels(), 331), s);
  const OpPtr b = diag(conformance::random_on(*d.list[1], g.voxels(), 332), s);
  const OpPtr stack = vstack_across(*d.list[0], {a, b});
  conformance::check_adjoint(*stack, 1e-6, 333);
  conformance::check_normal(*stack, 1e-6, 334);
  CHECK(stack->normal()->name() == "sum across devices");
  // sum_across alone: (A + B) x and its adjoint identity.
  const OpPtr both = sum_across(*d.list[0], {a, b});
  const std::vector<cfloat> x = test::random_complex(g.voxels(), 335);
  const std::vector<cfloat> ax = a->apply(x), got = both->apply(x);
  const std::vector<cfloat> bx = [&] {
    VecPtr xv = d.list[1]->upload(x), yv = d.list[1]->zeros(x.size());
    b->apply(*xv, *yv);
    return d.list[1]->download(*yv);
  }();
  std::vector<cfloat> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = ax[i] + bx[i];
  CHECK(test::rel_l2(got, want) < 1e-6);
  conformance::check_adjoint(*both, 1e-6, 336);
  CHECK_THROWS_AS(sum_across(*d.list[0], {a, identity(*d.list[1], image_shape(ImageGrid{5, 5, 1}))}),
                  std::invalid_argument);
}

TEST_CASE("multi-device: vstack_blocks_across interleaves its parts' rows block by block", "[multi]") {
  CpuDevices d(2, {0, 1});
  const ImageGrid g{4, 3, 1};
  const Shape s = image_shape(g);
  const std::size_t v = g.voxels(), blocks = 3, m = 2 * v;  // each part v rows of every block
  std::vector<std::vector<OpPtr>> rows(2);
  std::vector<OpPtr> parts;
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t b = 0; b < blocks; ++b)
      rows[i].push_back(diag(conformance::random_on(*d.list[i], v, 340 + 10 * i + b), s));
    parts.push_back(vstack(rows[i]));
  }
  const OpPtr op = vstack_blocks_across(*d.list[0], parts, blocks);
  const std::vector<cfloat> x = test::random_complex(v, 351), y = op->apply(x);
  std::vector<cfloat> want(blocks * m);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::vector<cfloat> r = rows[i][b]->apply(x);  // block b's rows of part i
      std::copy(r.begin(), r.end(), want.begin() + std::ptrdiff_t(b * m + i * v));
    }
  CHECK(test::rel_l2(y, want) < 1e-6);
  conformance::check_adjoint(*op, 1e-6, 352);
  CHECK_THROWS_AS(vstack_blocks_across(*d.list[0], parts, 5), std::invalid_argument);  // 36 rows, not 5 blocks
}

TEST_CASE("multi-device: the NUFFT's type 1 by sample chunks equals one device (2 and 4 partitions)", "[multi]") {
  SECTION("2 devices") { multi::nufft_chunks(CpuDevices(2, {0, 1}).list); }
  SECTION("4 partitions on 2 devices") {
    CpuDevices d(2, {0, 1, 0, 1});
    multi::nufft_chunks(d.list);
  }
}

TEST_CASE("multi-device: exact slabs at 4 partitions, and small problems stay on one device", "[multi]") {
  CpuDevices d(4, {0, 1, 2, 3});
  multi::exact_slabs(d.list);
}

TEST_CASE("multi-device: SENSE split by coils gives one device's image (2 and 4 partitions)", "[multi][sense]") {
  SECTION("nufft, 2 devices") {
    CpuDevices d(2, {0, 1});
    multi::sense_across(d.list, FhdMethod::Nufft);
  }
  SECTION("nufft, 4 partitions on 2 devices") {
    CpuDevices d(2, {0, 1, 0, 1});
    multi::sense_across(d.list, FhdMethod::Nufft);
  }
  SECTION("exact, 2 devices") {
    CpuDevices d(2, {0, 1});
    multi::sense_across(d.list, FhdMethod::Exact);
  }
}
