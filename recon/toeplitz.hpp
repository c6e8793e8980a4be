#pragma once
// Toeplitz embedding of the normal operator on the CPU (FFTW, single precision):
//   y = crop(IFFT(K . FFT(pad(x)))) / (voxels of the doubled grid) + lambda R^H R x
// K = FFT of Q rearranged so lag 0 sits at index 0. See docs/cpu-backend.md.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "recon/backend.hpp"
#include "recon/fft_pruned.hpp"

namespace fhd {

// FFTW's planner is not thread-safe: every plan made in recon/ takes this lock.
// The first call also starts FFTW's OpenMP threads when fftw3f_omp is linked.
std::mutex& fftw_planner_lock();

// Kernel spectrum from Q on grid.doubled() (Q index j on an axis holds lag j - n).
std::vector<cfloat> toeplitz_spectrum(const std::vector<cfloat>& q, const ImageGrid& grid);

// y += lambda R^H R x, R = first differences (x[i+1] - x[i], i < n-1) along
// every axis of length > 1, no wrap-around (Neumann ends).
void add_roughness(const cfloat* x, cfloat* y, const ImageGrid& grid, double lambda);
// The same for the one row (iy, iz), lambda != 0.
void add_roughness_row(const cfloat* x, cfloat* y, const ImageGrid& grid, float lambda, int iy, int iz);

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
// voxels skipped (recon/fft_pruned.hpp): one batched 1D FFT per axis (x, then
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

class ToeplitzOperator : public NormalOperator {
 public:
  ToeplitzOperator(const std::vector<cfloat>& q, const ImageGrid& grid, double lambda);
  ToeplitzOperator(const ToeplitzOperator&) = delete;
  ToeplitzOperator& operator=(const ToeplitzOperator&) = delete;

  // Not re-entrant (one scratch buffer per operator); x and y must not overlap.
  void apply(const BackendVector& x, BackendVector& y) override;
  void apply(const cfloat* x, cfloat* y) { apply(x, y, 1); }
  // n vectors at once (vector t at x + t * grid.voxels(), y likewise; SENSE's
  // coils): one batched FFT pair over all n doubled grids, the same results
  // as n single applies. The scratch for n grids is made at the first call
  // with that n and kept (n doubled grids: 16 MB each at 64^3).
  void apply(const cfloat* x, cfloat* y, int n);

 private:
  struct Batch {
    std::vector<cfloat> buffer;  // n doubled grids, transformed in place
    std::unique_ptr<PaddedFftw> fft;
  };
  Batch& batch(int n);

  ImageGrid grid_, dbl_;
  double lambda_;
  std::vector<cfloat> spectrum_;  // K / (doubled voxels)
  std::map<int, Batch> batches_;  // by n
};

}  // namespace fhd
