// Issue 26's partitions on the GPU (tests/recon/multi_checks.hpp, which the
// CPU runs with CPU devices): the NUFFT's type 1 by sample chunks, exact slabs
// at 4 partitions and the size rule, SENSE split by coils at 2 and 4
// partitions, each against one device. GPU 0 listed 2 or 4 times is enough
// (each entry its own Device and stream); MULTI_GPUS (e.g. "0,1,0,1") adds
// the list the device script gives on a host with several GPUs. The
// [.bench] case times the single-coil type 1 at 256^3 / 16.8M points.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "recon/multi_checks.hpp"
#include "test_backend_util.hpp"

using namespace fhd;

namespace {

struct GpuList {
  std::vector<std::unique_ptr<Device>> owned;
  std::vector<Device*> list;
  explicit GpuList(const std::vector<int>& ids) : owned(make_gpu_devices(ids, {})) {
    for (auto& d : owned) list.push_back(d.get());
  }
};

// "0,1,0,1" -> {0, 1, 0, 1}; empty when unset.
std::vector<int> ids_from_env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  std::stringstream s(v && *v ? v : fallback);
  std::vector<int> ids;
  for (std::string item; std::getline(s, item, ',');) ids.push_back(std::stoi(item));
  return ids;
}

std::vector<std::vector<int>> lists() {
  std::vector<std::vector<int>> l = {{0, 0}, {0, 0, 0, 0}};
  const std::vector<int> extra = ids_from_env("MULTI_GPUS", "");
  if (extra.size() > 1) l.push_back(extra);
  return l;
}

}  // namespace

TEST_CASE("multi-gpu partitions: NUFFT chunks, exact slabs, SENSE by coils equal one GPU", "[gpu][multi]") {
  FHD_NEED_GPU();
  for (const std::vector<int>& ids : lists()) {
    INFO(ids.size() << " partitions");
    GpuList d(ids);
    multi::nufft_chunks(d.list);
    multi::exact_slabs(d.list);
    multi::sense_across(d.list, FhdMethod::Nufft);
  }
}

// Single-coil type 1 (cmpFhD of --fhd nufft) at 256^3 from 16,777,216 random
// points: one GPU against the GPUs MULTI_GPUS lists (default "0,1"), the
// reduction on the first included; the median of 5 after one warm-up.
TEST_CASE("multi-gpu bench: single-coil type 1 by sample chunks, 256^3, 16.8M points", "[gpu][multi][.bench]") {
  FHD_NEED_GPU();
  const ImageGrid g{256, 256, 256};
  const Trajectory t = test::random_trajectory(std::size_t(1) << 24, g, 341);
  const std::vector<cfloat> y = test::random_complex(t.size(), 342);
  auto time_type1 = [&](const std::vector<int>& ids) {
    GpuList d(ids);
    PlanOptions po;
    po.fhd.method = FhdMethod::Nufft;
    auto plan = Plan::make(*d.list[0], t, g, po, multi::others_of(d.list));
    const OpPtr f = plan->fourier();
    VecPtr yv = d.list[0]->upload(y), x = d.list[0]->zeros(g.voxels());
    std::vector<double> ms;
    for (int r = 0; r < 6; ++r) {
      d.list[0]->synchronize();
      const auto t0 = std::chrono::steady_clock::now();
      f->adjoint(*yv, *x);
      d.list[0]->synchronize();
      if (r) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("type 1, 256^3, %zu points, --gpus with %zu entries: %.1f ms (split by chunks: %s)\n", t.size(),
                ids.size(), ms[ms.size() / 2], plan->fourier_chunks() ? "yes" : "no");
    return std::make_pair(ms[ms.size() / 2], d.list[0]->download(*x));
  };
  const auto one = time_type1({0});
  const std::vector<int> ids = ids_from_env("MULTI_GPUS", "0,1");
  const auto many = time_type1(ids);
  const double speedup = one.first / many.first;
  std::printf("type 1 speed-up at %zu GPUs: %.2fx (goal at 2: >= 1.6x: %s)\n", ids.size(), speedup,
              ids.size() >= 2 && speedup >= 1.6 ? "met" : "NOT met");
  CHECK(test::rel_l2(many.second, one.second) < 1e-5);  // the same transform, summed in another order
}
