// The host's share of SENSE's map estimation, timed piece by piece. Hidden
// (runs only when named; the data are random, only the time is measured):
//   FHD_BENCH_N=128 FHD_BENCH_SAMPLES=1048576 FHD_BENCH_COILS=8 \
//     build/tests_recon "[.maps-bench]"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "bench_util.hpp"
#include "catch.hpp"
#include "phantom/trajectory.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/device/cpu_device.hpp"
#include "test_util.hpp"

using namespace fhd;

namespace {

using fhd::bench::env_or;

// Wall and CPU seconds (all threads) since construction: the CPU time does not
// depend on what else the machine runs, the wall time does.
struct Clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
  std::string since() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f s wall, %.3f s CPU",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(),
                  double(std::clock() - cpu) / CLOCKS_PER_SEC);
    return buf;
  }
};

}  // namespace

TEST_CASE("coil maps: host time at scale", "[.maps-bench]") {
  const int n = int(env_or("FHD_BENCH_N", 128)), nc = int(env_or("FHD_BENCH_COILS", 8));
  TrajectorySpec spec;
  spec.nx = spec.ny = spec.nz = n;
  spec.total = std::size_t(env_or("FHD_BENCH_SAMPLES", 1048576));
  std::vector<Scan> coils(nc);
  const Trajectory t = make_trajectory(spec);
  for (int c = 0; c < nc; ++c) {
    coils[c].grid = {n, n, n};
    coils[c].traj = t;
    coils[c].data = test::random_complex(t.size(), unsigned(c + 1));
    coils[c].provenance["trajectory"] = "radial3d";
  }
  auto be = make_cpu_device();
  std::printf("%d^3, %zu samples, %d coils\n", n, t.size(), nc);
  Clock all, part;
  std::vector<const Scan*> ptrs;
  for (const Scan& c : coils) ptrs.push_back(&c);
  const CalibrationSamples samples = calibration_samples(ptrs, 24);
  std::printf("calibration samples (the centre):  %s\n", part.since().c_str());
  part = Clock();
  const Calibration cal = calibration_from_samples(*be, samples, 24);
  std::printf("calibration (their images, DFT):   %s\n", part.since().c_str());
  part = Clock();
  const CoilData maps = maps_lowres(cal, coils[0].grid);
  std::printf("low-resolution maps:               %s\n", part.since().c_str());
  std::printf("total:                             %s\n", all.since().c_str());
  CHECK(maps.size() == std::size_t(nc));
}
