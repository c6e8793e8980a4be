#pragma once
// Toeplitz embedding of the normal operator on the CPU (FFTW, single precision):
//   y = crop(IFFT(K . FFT(pad(x)))) / (voxels of the doubled grid)
// K = FFT of Q rearranged so lag 0 sits at index 0. See docs/cpu-backend.md.
// The CPU's ToeplitzKernels (recon/plan/toeplitz_kernels.hpp).
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "recon/ops/fft_pruned.hpp"
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
// voxels skipped (recon/ops/fft_pruned.hpp): one batched 1D FFT per axis (x, then
// y, then z forward; the reverse inverse), each batched over the faster axes
// whole and the slower axes' lower halves only (forward: not yet transformed,
// so zero beyond them; inverse: already transformed, and only those are
// cropped). In 3D 7/12 of a full transform's line FFTs. `batch` doubled grids
// follow each other in data and go through each plan together. The buffer's
// voxels outside the low corner hold garbage after inverse(); the caller
// zeroes them before the next forward().
class PaddedFftw {
 public:
  PaddedFftw(const ImageGrid& n, const ImageGrid& doubled, cfloat* data, int batch = 1);
  void forward() { forward_.execute(); }
  void inverse() { inverse_.execute(); }

 private:
  PrunedFft forward_, inverse_;
};

class ToeplitzOperator : public HermitianOp {
 public:
  ToeplitzOperator(Device& dev, const std::vector<cfloat>& q, const ImageGrid& grid);
  // Not re-entrant (one scratch buffer per operator); x and y must not overlap.
  void apply(const cfloat* x, cfloat* y) { apply(x, y, 1); }
  // n vectors at once (vector t at x + t * grid.voxels(), y likewise; SENSE's
  // coils): one batched FFT pair over all n doubled grids, the same results
  // as n single applies. The scratch for n grids is made at the first call
  // with that n and kept (n doubled grids: 16 MB each at 64^3).
  void apply(const cfloat* x, cfloat* y, int n);

 protected:
  void do_apply(const DeviceVector& x, DeviceVector& y) override;

 private:
  struct Batch {
    std::vector<cfloat> buffer;  // n doubled grids, transformed in place
    std::unique_ptr<PaddedFftw> fft;
  };
  Batch& batch(int n);

  ImageGrid grid_, dbl_;
  std::vector<cfloat> spectrum_;  // K / (doubled voxels)
  std::map<int, Batch> batches_;  // by n
};

std::unique_ptr<ToeplitzKernels> make_cpu_toeplitz(Device& dev);

}  // namespace fhd
