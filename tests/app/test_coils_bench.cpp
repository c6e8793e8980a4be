// Coil processing measured on a synthetic array. Hidden (runs only when named):
//   FHD_BENCH_N=64 FHD_BENCH_COILS=8 FHD_BENCH_ITERS=20 FHD_BENCH_K=4 \
//     build/tests_app "[.coils-bench]"
// Prints, for the same phantom, trajectory and 1% noise: single-coil CG (what
// fhdrecon did for one channel), per-coil CG + root sum of squares on C coils
// and on K compressed coils, scored against the object as the prewhitened
// array sees it (|f| ||W s||); the time of prewhitening, compression, and map
// estimation, and the maps' distance from the truth.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "app/batch.hpp"
#include "app/source.hpp"
#include "bench_util.hpp"
#include "catch.hpp"
#include "phantom/coils.hpp"
#include "recon/coils/coil_compress.hpp"
#include "recon/coils/coil_maps.hpp"
#include "recon/eval/metrics.hpp"

using namespace fhd;

namespace {

using fhd::bench::env_or;
using fhd::bench::seconds_since;

// The object as the array sees it after the coil mixing W: |f(x)| ||W s(x)||,
// and W s itself (the true maps after prewhitening).
std::vector<float> array_reference(const Phantom& p, const CoilData& maps, const ImageGrid& g) {
  const auto img = voxel_image(p, g.nx, g.ny, g.nz);
  std::vector<float> ref(img.size());
  for (std::size_t v = 0; v < img.size(); ++v) {
    double rss = 0;
    for (const auto& m : maps) rss += std::norm(m[v]);
    ref[v] = float(std::abs(img[v]) * std::sqrt(rss));
  }
  return ref;
}

struct Run {
  double psnr, seconds;
};

Run per_coil_rss(Device& be, const std::vector<Scan>& coils, const ReconOptions& ro, const std::vector<float>& ref) {
  std::vector<const Scan*> ptrs;
  for (const Scan& s : coils) ptrs.push_back(&s);
  auto t0 = std::chrono::steady_clock::now();
  ReconResult r = reconstruct_coils(be, ptrs, ro);
  return {psnr(r.methods[0].image, ref), seconds_since(t0)};
}

}  // namespace

TEST_CASE("coil processing: PSNR and time", "[.coils-bench]") {
  const int n = int(env_or("FHD_BENCH_N", 64)), nc = int(env_or("FHD_BENCH_COILS", 8));
  const int k = int(env_or("FHD_BENCH_K", 4)), iters = int(env_or("FHD_BENCH_ITERS", 20));
  app::SourceOptions so;
  so.phantom = env_or("FHD_BENCH_2D", 0) ? "shepp2d" : "shepp3d";
  so.matrix = n;
  so.noise = 0.01;
  so.coils = nc;
  so.prewhiten = false;
  auto t0 = std::chrono::steady_clock::now();
  app::Source src = app::make_source(so);
  const double synth_s = seconds_since(t0);
  const ImageGrid g = src.scan.grid;
  std::vector<Scan> coils = {src.scan};
  coils.insert(coils.end(), src.more_coils.begin(), src.more_coils.end());

  t0 = std::chrono::steady_clock::now();
  CMatrix w;
  REQUIRE(prewhiten(coils, &w));
  const double white_s = seconds_since(t0);
  CoilSpec spec;
  spec.coils = nc;
  spec.dims = src.phantom->dims();
  spec.seed = so.seed;
  CoilData truth = coil_maps(make_coil_array(spec), g.nx, g.ny, g.nz);
  mix_coils(w, truth);  // the maps of the prewhitened coils
  const std::vector<float> ref = array_reference(*src.phantom, truth, g);

  auto be = make_cpu_device();
  ReconOptions ro;
  ro.iters = iters;
  ro.lambda = 0.03;
  ro.gridding = false;
  std::printf("%s | %s %d^%d, %zu samples, %d coils, noise 1%%, CG %d iterations, lambda 0.03\n", be->name().c_str(),
              so.phantom.c_str(), n, g.is3d() ? 3 : 2, src.scan.traj.size(), nc, iters);
  std::printf("synthesis %.2f s, prewhitening %.3f s\n", synth_s, white_s);

  app::SourceOptions one = so;
  one.coils = 1;
  app::Source single = app::make_source(one);
  ReconOptions scored = ro;
  scored.truth = app::truth_of(*single.phantom);
  t0 = std::chrono::steady_clock::now();
  ReconResult r1 = run_reconstruction(*be, single.scan, scored);
  std::printf("single coil CG (vs the phantom):         PSNR %6.2f dB  %7.2f s\n", *r1.methods[0].psnr,
              seconds_since(t0));
  const Run all = per_coil_rss(*be, coils, ro, ref);
  std::printf("per-coil CG + RSS, %2d coils:             PSNR %6.2f dB  %7.2f s\n", nc, all.psnr, all.seconds);

  std::vector<Scan> virt = coils;
  t0 = std::chrono::steady_clock::now();
  const Compression c = compress_coils(virt, k);
  const double compress_s = seconds_since(t0);
  const Run few = per_coil_rss(*be, virt, ro, ref);
  std::printf("per-coil CG + RSS, %2d virtual coils:     PSNR %6.2f dB  %7.2f s  (compression %.3f s, %.2f%% energy)\n",
              k, few.psnr, few.seconds, compress_s, 100 * c.kept());

  std::vector<bool> mask(ref.size());
  for (std::size_t v = 0; v < ref.size(); ++v) mask[v] = ref[v] > 0;
  t0 = std::chrono::steady_clock::now();
  const Calibration cal = calibration_from_scans(*be, coils, 24);
  const double cal_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const double low = map_difference(maps_lowres(cal, g), truth, mask);
  const double low_s = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const double esp = map_difference(maps_espirit(cal, g), truth, mask);
  const double esp_s = seconds_since(t0);
  std::printf("maps from gridded calibration (24, %.2f s): low-resolution error %.4f (%.2f s), ESPIRiT error %.4f (%.2f s)\n",
              cal_s, low, low_s, esp, esp_s);
}
