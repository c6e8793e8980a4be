#pragma once
// Evaluation (docs/architecture.md): the scores of a reconstruction against
// a known object, shared by the CLI, validate and batch: PSNR and NRMSE of
// each method, PSNR per iteration (timed apart from the solver), the
// band-limited ceiling (the best image the sampled frequencies allow), and
// the root-sum-of-squares combination of per-coil results.
#include <future>
#include <vector>

#include "recon/eval/result.hpp"
#include "recon/eval/stages.hpp"
#include "recon/problem/options.hpp"

namespace fhd {

// PSNR of each iterate against the reference, summed where the iterate lives:
// one scalar crosses per iteration (the 128^3 record took 1.3 s of downloads
// and host sums on the GPU before).
class PsnrRecorder {
 public:
  PsnrRecorder(Device& dev, const std::vector<float>& reference, std::vector<double>& out);
  void operator()(int iter, const DeviceVector& x);
  // The PSNR of the zero image (CG's start), from the reference alone.
  double zero_start() const { return zero_start_; }
  // Time spent scoring (its setup included), taken off the solver's stage and
  // the method's wall: evaluation is not the reconstruction's work.
  double seconds = 0;

 private:
  Device& dev_;
  std::size_t n_;
  double peak_ = 0;
  double zero_start_ = 0;
  VecPtr ref_;
  std::vector<double>& out_;
};

// A method without iterations (gridding, the ceiling), not yet scored.
MethodResult direct_method(std::string name, std::vector<cfloat> image, double seconds);

struct TimedImage {
  std::vector<cfloat> image;
  double seconds = 0.0;
};
// The band-limited ceiling on a host thread beside a GPU's stages (`beside`),
// when the object's k-space is known; else nothing started.
std::future<TimedImage> start_ceiling(const ReconOptions& opt, const ImageGrid& grid, bool beside);
// Adds the ceiling as a method: the started one's result, else computed now.
void ceiling(std::future<TimedImage>& started, const ReconOptions& opt, const ImageGrid& grid, ReconResult& res);

// PSNR and NRMSE of every method against res.reference (nothing when empty),
// and each method's PSNR against the ceiling's image when there is one.
void score(ReconResult& res);

// one(c) for every coil, the images combined by root sum of squares and the
// stage times summed by name (one coil: as it is).
ReconResult combine_rss(std::size_t coils, const std::function<ReconResult(std::size_t)>& one);

// 99th percentile of |x|: the image scale TV's and the wavelet's lambdas are
// relative to (robust to a few bright voxels).
double image_scale(const std::vector<cfloat>& x);

}  // namespace fhd
