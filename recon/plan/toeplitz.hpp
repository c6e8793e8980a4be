#pragma once
// Toeplitz embedding of the normal operator on the CPU (FFTW, single precision):
//   y = crop(IFFT(K . FFT(pad(x)))) / (voxels of the doubled grid)
// K = FFT of Q rearranged so lag 0 sits at index 0. See docs/cpu-backend.md.
// The CPU's ToeplitzKernels (recon/plan/toeplitz_kernels.hpp).
#include <mutex>
#include <memory>
#include <vector>

#include "recon/plan/toeplitz_kernels.hpp"

namespace fhd {

// FFTW's planner is not thread-safe: every plan made in recon/ takes this lock.
// The first call also starts FFTW's OpenMP threads when fftw3f_omp is linked.
std::mutex& fftw_planner_lock();

// Kernel spectrum from Q on grid.doubled() (Q index j on an axis holds lag j - n).
std::vector<cfloat> toeplitz_spectrum(const std::vector<cfloat>& q, const ImageGrid& grid);

// An in-place FFTW single-precision plan over a grid (x fastest), made with
// FFTW_ESTIMATE: planning is instant, needs no wisdom, and leaves data alone.
// forward: sign -1; inverse: sign +1, unnormalized (FFTW's convention).
class FftwPlan {
 public:
  FftwPlan(const ImageGrid& dims, cfloat* data, bool inverse);
  ~FftwPlan();
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;
  void execute();

 private:
  void* plan_;  // fftwf_plan, kept out of the header
};

// The doubled grid's FFT pair with pad(x)'s zeros and the crop's unread
// voxels skipped: one batched 1D FFT per axis (x, then y, then z forward; the
// reverse inverse), each batched over the faster axes whole and the slower
// axes' lower halves only (forward: not yet transformed, so zero beyond them;
// inverse: already transformed, and only those are cropped). In 3D 7/12 of a
// full transform's line FFTs. The buffer's voxels outside the low corner hold
// garbage after inverse(); the caller zeroes them before the next forward().
class PaddedFftw {
 public:
  PaddedFftw(const ImageGrid& n, const ImageGrid& doubled, cfloat* data);
  ~PaddedFftw();
  PaddedFftw(const PaddedFftw&) = delete;
  PaddedFftw& operator=(const PaddedFftw&) = delete;
  void forward();
  void inverse();

 private:
  std::vector<void*> forward_, inverse_;  // fftwf_plans per axis, in execution order
};

class ToeplitzOperator : public HermitianOp {
 public:
  ToeplitzOperator(Device& dev, const std::vector<cfloat>& q, const ImageGrid& grid);
  // Not re-entrant (one scratch buffer per operator); x and y must not overlap.
  void apply(const cfloat* x, cfloat* y);

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override;

 private:
  ImageGrid grid_, dbl_;
  std::vector<cfloat> spectrum_;  // K / (doubled voxels)
  std::vector<cfloat> buffer_;    // the doubled grid, transformed in place
  PaddedFftw fft_;
};

std::unique_ptr<ToeplitzKernels> make_cpu_toeplitz(Device& dev);

}  // namespace fhd
