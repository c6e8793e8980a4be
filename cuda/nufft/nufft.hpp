#pragma once
// The GPU NUFFT (docs/nufft-gpu.md): type 1 (adjoint) and type 2 (forward) in
// single precision, 2D and 3D, in cmpFhD's convention:
//   type 1: f_i = sum_m c_m exp(+i 2 pi k_m . x_i),  x_i = (i - n/2) / N per axis,
//   type 2: c_m = sum_i f_i exp(-i 2 pi k_m . x_i)   (its conjugate transpose),
// k in cycles/FOV, i over a grid of `modes` (x fastest) and N the image size
// that sets the coordinates (modes == image for FhD; modes = 2 image for Q,
// whose grid is (j - N)/N). A plan is made once per trajectory (points
// rescaled to fine-grid cells and counting-sorted into bins, subproblems cut;
// fine grids and cuFFT plan at the first execute) and executed many times.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "cuda/device/device_buffer.hpp"
#include "recon/problem/scan.hpp"

namespace fhd::gpu {

// Shared: one block per subproblem through a shared-memory tile (privatized).
// Global: one thread per sorted point straight on the fine grid in global memory.
// Rows (interpolation only): a few threads per sorted point, one per tap along
// x, so each warp load reads short runs of adjacent cells.
// Gather (spreading only, 3D): a thread per fine-grid cell of an 8^3 box sums
// the points that reach it (cuda/nufft/gather_spread.cuh); the transforms of
// a batch share each point's staging, so a batch of 8 costs about 1.7 single
// ones. Plans whose fine grid is too small for it (and 2D plans) spread
// through the shared tile.
// Auto: what measured fastest. Interpolation: rows or the shared tile by the
// fine grid's size. Spreading: the shared tile for single transforms and
// small batches, gather for batches of kGatherMinBatch or more.
enum class NufftMethod { Shared, Global, Rows, Auto, Gather };
inline bool interpolation_only(NufftMethod m) { return m == NufftMethod::Rows; }
inline bool spreading_only(NufftMethod m) { return m == NufftMethod::Gather; }
constexpr int kGatherMinBatch = 3;
// Auto's choice: rows on fine grids of at most this many cells (256^3: 0.99
// against 1.21 ms for the shared tile at 128^3 modes on the H100), the shared
// tile on larger ones (512^3: 10.7 against 11.8 ms at 256^3 modes).
constexpr std::size_t kRowsMaxFineCells = std::size_t(1) << 26;

struct NufftOptions {
  double tol = 1e-6;    // requested relative accuracy: sets the kernel width
  // Upsampling factor, 2.0 or 1.25; below nufft::kMinTolSigma125
  // (recon/nufft/nufft_kernel.hpp) the plan uses 2.0.
  double sigma = 2.0;
  // Defaults measured on the H100 (docs/nufft-gpu.md): privatized spreading,
  // interpolation by rows or from the shared tile by the fine grid's size.
  NufftMethod spread = NufftMethod::Auto;
  NufftMethod interp = NufftMethod::Auto;
  int bin[3] = {0, 0, 0};     // bin (tile core) in fine cells per axis; 0 = default (16x16x8, 2D 32x32)
  int max_subproblem = 1024;  // points per block at most (dense bins are cut)
  int threads = 512;          // threads per block of the spread/interp kernels
  // Spreading stages this many points' kernel values at a time, so each
  // point's rows are shared by threads / chunk threads (coarsening knob).
  int chunk = 128;
};

// A non-blocking stream owned for one scope (one-shot calls, the bench).
class OwnedStream {
 public:
  OwnedStream();
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class NufftPlan {
 public:
  // An axis of 1 mode, x, y or z, is not transformed (its x is 0); two axes
  // need 2 or more modes (InputError), as the CPU plan's.
  NufftPlan(const ImageGrid& modes, const ImageGrid& image, const NufftOptions& opt, cudaStream_t s);
  ~NufftPlan();
  NufftPlan(const NufftPlan&) = delete;
  NufftPlan& operator=(const NufftPlan&) = delete;

  // Device arrays of m points, k in cycles/FOV (kz ignored for a 2D plan).
  void set_points(const float* kx, const float* ky, const float* kz, std::size_t m);
  // Device arrays: c of n x points() values (original order; transform t at
  // c + t points()), f of n x modes.voxels() (transform t at f + t voxels).
  // Asynchronous on the plan's stream. A batch (n > 1) shares the sorted
  // points and runs one spread/interpolation launch, one batched cuFFT and one
  // deapodization over all n (in groups where the n fine grids do not fit);
  // the results equal n single calls to float32 rounding. The fine grids and
  // cuFFT plan for a batch size are made at its first call and kept.
  void type1(const float2* c, float2* f, int n = 1);
  void type2(const float2* f, float2* c, int n = 1);
  // What type 1's first call of n transforms makes, made now: the fine grids
  // (as many as it would group), the FFT's scratch or plan and, where it
  // spreads by gather, the boxes' parts. A caller pays them beside other work.
  void reserve_type1(int n);

  // The bench's split of one execute by phase (type 1: zero + spread, FFT,
  // deapodize; type 2: deapodize + pad, FFT, interpolate): where ev is not
  // null, each pass records ev[0] before its first phase and ev[1..3] after
  // each. Null (the default) records nothing.
  void set_phase_events(cudaEvent_t* ev);

  int width() const;
  double sigma() const;  // the upsampling used (see NufftOptions::sigma)
  ImageGrid fine() const;
  std::size_t points() const;
  std::size_t subproblems() const;
  // Whether type 1 of n transforms spreads by gather.
  bool gathers(int n) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Host conveniences (tests, bench): upload,
// plan, execute, download. grid is the image; Q goes onto grid.doubled().
std::vector<cfloat> nufft_type1(const Trajectory& t, const std::vector<cfloat>& c, const ImageGrid& grid,
                                const NufftOptions& opt);
std::vector<cfloat> nufft_type2(const Trajectory& t, const std::vector<cfloat>& f, const ImageGrid& grid,
                                const NufftOptions& opt);
std::vector<cfloat> nufft_q(const Trajectory& t, const std::vector<float>& w, const ImageGrid& grid,
                            const NufftOptions& opt);

}  // namespace fhd::gpu
