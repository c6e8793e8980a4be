// The GPU NUFFT (cuda/nufft/nufft.hpp; method and measurements in docs/nufft-gpu.md).
//
// Type 1: spread c_m onto the fine grid with the exponential-of-semicircle
// kernel, inverse FFT (exp +i), deapodize and copy the modes out. Type 2: the
// reverse. Point m sits at fine-grid cell coordinate u = k_m * nf / N per
// axis (unwrapped: |u| stays small, so float keeps its precision) and touches
// the w cells ceil(u - w/2) .. + w - 1, wrapped periodically.
//
// Spreading (PMPP's privatization): points are counting-sorted by the bin
// holding floor(u); each block takes one subproblem (at most max_subproblem
// points of one bin) and spreads into a shared-memory copy of the bin padded
// by ceil(w/2) cells per side, then adds that tile to the fine grid with
// global atomics. Inside a block the points are taken in chunks: each
// point's w kernel values per axis are computed once into shared memory, then
// the chunk's (point, row) pairs are shared out among the threads
// (coarsening: threads per point = threads / chunk), each row w shared
// atomics along x.
//
// Batches (issue 25: coils): n transforms share the sorted points; the spread
// and interpolation kernels take the transform as blockIdx.y, the fine grids
// of a batch lie one after another and go through one batched cuFFT plan, and
// deapodization is one launch over the batch. The fine grids and cuFFT plans
// are made at the first execute that needs them (a plan costs only its
// geometry and deapodization factors until then), per batch size.
//
// Fine grids whose lengths are powers of two from 16 to 512 (sigma 2 on a
// power-of-two image: 128^3 -> 256^3) take the line passes of
// cuda/fft/line_fft.hpp instead of cuFFT and the deapodization launch: type
// 2's x pass reads the modes, deapodizes them and places them centered on
// its lines, and y and z run on the rows and slabs that hold modes only; type
// 1 keeps only the modes' rows, slabs and positions on the way back and
// deapodizes in its last pass. Each transform of a batch runs its passes in
// turn.
#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <string>

#include "cuda/gather/fhd_launchers.cuh"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/fft/line_fft.hpp"
#include "cuda/nufft/nufft.hpp"
#include "core/error.hpp"
#include "recon/nufft/nufft_kernel.hpp"

#include "cuda/nufft/nufft_device.cuh"
#include "cuda/nufft/gather_spread.cuh"

namespace fhd::gpu {

struct NufftPlan::Impl {
  cudaStream_t s;
  NufftOptions opt;
  int dim = 3, w = 0;
  // The plan's axis a is the given axis axis[a] (nufft::axis_order: axes of
  // one mode last, so a 7x1x5 slab is planned as 7x5x1), as on the CPU.
  std::array<int, 3> axis{0, 1, 2};
  ModeMap mm{};
  Geom g{};
  ImageGrid fine_grid;
  std::size_t m = 0, nsub = 0;
  std::size_t smem_spread = 0, smem_interp = 0;
  DeviceBuffer<float> deapod;  // x's factors, then y's, then z's
  const float* dx() const { return deapod.get(); }
  const float* dy() const { return deapod.get() + mm.n[0]; }
  const float* dz() const { return deapod.get() + mm.n[0] + mm.n[1]; }
  // The points in bin order: fine-grid coordinates, w the point's index as
  // bits; kept and reused by a later set_points of at most as many points.
  DeviceBuffer<float4> pts;
  DeviceBuffer<unsigned> bins;  // the sort's per-bin arrays and scan scratch
  DeviceBuffer<int4> subs;
  // Spreading by gather (cuda/nufft/gather_spread.cuh) where the method and
  // the fine grid allow it: the boxes' parts, cut at its first use after
  // set_points, and, kept beside them, the per-box counts and scan.
  bool can_gather = false, parts_cut = false;
  bool gathers(int batch) const {
    return can_gather && (opt.spread == NufftMethod::Gather || batch >= kGatherMinBatch);
  }
  DeviceBuffer<int2> parts;
  DeviceBuffer<unsigned> box_arrays;
  std::size_t nparts = 0;
  // The sort's per-bin arrays in `bins`, each nbins + 1 long, in this order.
  enum BinArray { kCounts, kSub, kStart, kCursor, kSubStart, kBinArrays };
  unsigned* bin_array(BinArray a) { return bins.get() + std::size_t(a) * (nbins() + 1); }
  const unsigned* bin_array(BinArray a) const { return bins.get() + std::size_t(a) * (nbins() + 1); }
  std::size_t nbins() const { return std::size_t(g.nbins[0]) * g.nbins[1] * g.nbins[2]; }
  DeviceBuffer<float2> fine;  // `grids` fine grids, made at the first execute
  std::size_t grids = 0;
  std::map<int, std::unique_ptr<CufftPlan>> ffts;  // by batch size, made at first use
  bool by_lines = false;                           // the fine grid's lengths suit the line passes
  DeviceBuffer<float2> rows, slabs;                // their scratch (nf0 x n1 x n2, nf0 x nf1 x n2)
  cudaEvent_t* phase = nullptr;                    // the bench's phase events (set_phase_events)
  void mark(int i) {
    if (phase) CUDA_CHECK(cudaEventRecord(phase[i], s));
  }

  void sort_points(const float* kx, const float* ky, const float* kz);
  void cut_parts();
  std::size_t fine_voxels() const { return fine_grid.voxels(); }
  std::size_t mode_voxels() const { return std::size_t(mm.n[0]) * mm.n[1] * mm.n[2]; }
  int group(int n);
  float2* workspace(int batch);
  CufftPlan& fft(int batch);
  float2* type1_setup(int batch);
  void type1_pass(const float2* c, float2* f, int batch);
  void type2_pass(const float2* f, float2* c, int batch);
  void line_scratch();
  void lines_forward_x(const float2* f);
  void lines_forward_yz(float2* grid);
  void lines_inverse_zy(const float2* grid);
  void lines_inverse_x(float2* f);
};

namespace {

// cuFFT's dimension list: slowest axis first, an unused z dropped.
std::vector<long long> fine_dims(const ImageGrid& g) {
  std::vector<long long> d;
  if (g.nz > 1) d.push_back(g.nz);
  d.push_back(g.ny);
  d.push_back(g.nx);
  return d;
}

constexpr int kMaxBatch = 65535;  // gridDim.y

// Unsigned elements for `count` arrays of n, then (256-byte aligned, at
// *arrays) the scratch of a cub scan over n (*temp_bytes of it).
std::size_t scan_buffer(std::size_t n, int count, cudaStream_t s, std::size_t* arrays, std::size_t* temp_bytes) {
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, *temp_bytes, (unsigned*)nullptr, (unsigned*)nullptr, unsigned(n), s));
  *arrays = (count * n + 63) / 64 * 64;
  return *arrays + (*temp_bytes + sizeof(unsigned) - 1) / sizeof(unsigned);
}

}  // namespace

// Transforms per pass: all n where the fine grids already exist or 70% of
// the free memory holds them, else as many as fit (at least 1).
int NufftPlan::Impl::group(int n) {
  if (n < 1 || n > kMaxBatch)
    throw InputError("nufft", "transforms", std::to_string(n), "must be 1.." + std::to_string(kMaxBatch));
  line_scratch();  // before the fine grids take their share of the memory
  if (std::size_t(n) <= grids) return n;
  const double grid = double(fine_voxels()) * sizeof(float2);
  const double fit = std::floor(0.7 * (double(free_device_bytes()) + double(fine.bytes())) / grid);
  return int(std::max(1.0, std::min(double(n), fit)));
}

float2* NufftPlan::Impl::workspace(int batch) {
  if (grids < std::size_t(batch)) {
    fine.release();
    grids = 0;
    fine.allocate(fine_voxels() * batch,
                  "the NUFFT fine grids " + std::to_string(batch) + " x " + dims_string(fine_grid), Reach::DeviceOnly);
    grids = batch;
  }
  return fine.get();
}

// The line passes' scratch, made once; where it does not fit beside one fine
// grid, the plan keeps cuFFT.
void NufftPlan::Impl::line_scratch() {
  if (!by_lines || rows.get()) return;
  const std::size_t nr = std::size_t(g.nf[0]) * mm.n[1] * mm.n[2];
  const std::size_t ns = dim == 3 ? std::size_t(g.nf[0]) * g.nf[1] * mm.n[2] : 0;
  const double need = double(nr + ns + (grids ? 0 : fine_voxels())) * sizeof(float2) + double(kHeadroomBytes);
  if (need > double(free_device_bytes())) {
    by_lines = false;
    return;
  }
  const std::string what = "the NUFFT's line passes on " + dims_string(fine_grid);
  rows.allocate(nr, what, Reach::DeviceOnly);
  if (ns) slabs.allocate(ns, what, Reach::DeviceOnly);
}

// Type 2's x pass: each row of modes deapodized and placed centered on a row
// of the fine grid's x length.
void NufftPlan::Impl::lines_forward_x(const float2* f) {
  const long long n0 = mm.n[0], n1 = mm.n[1], f0 = g.nf[0];
  lines::Pass p = lines::pass(f, {n0, n0 * n1, 1}, mm.n[0], rows.get(), {f0, f0 * n1, 1}, g.nf[0], mm.n[1], mm.n[2]);
  p.place_in = lines::Place::Centered;
  p.deapod[0] = dx();
  p.deapod[1] = dy();
  p.deapod[2] = dz();
  lines::run(lines::Mode::Forward, true, g.nf[0], p, s);
}

// Type 2's y and z passes onto the fine grid (2D: y straight onto it).
void NufftPlan::Impl::lines_forward_yz(float2* grid) {
  const long long n1 = mm.n[1], f0 = g.nf[0], f1 = g.nf[1];
  lines::Pass p;
  if (dim == 3) {
    p = lines::pass(rows.get(), {1, f0 * n1, f0}, mm.n[1], slabs.get(), {1, f0 * f1, f0}, g.nf[1], g.nf[0], mm.n[2]);
    p.place_in = lines::Place::Centered;
    lines::run(lines::Mode::Forward, false, g.nf[1], p, s);
    p = lines::pass(slabs.get(), {1, f0, f0 * f1}, mm.n[2], grid, {1, f0, f0 * f1}, g.nf[2], g.nf[0], g.nf[1]);
  } else {
    p = lines::pass(rows.get(), {1, 0, f0}, mm.n[1], grid, {1, 0, f0}, g.nf[1], g.nf[0], 1);
  }
  p.place_in = lines::Place::Centered;
  lines::run(lines::Mode::Forward, false, dim == 3 ? g.nf[2] : g.nf[1], p, s);
}

// Type 1's z and y passes from the fine grid, keeping the modes' positions.
void NufftPlan::Impl::lines_inverse_zy(const float2* grid) {
  const long long n1 = mm.n[1], f0 = g.nf[0], f1 = g.nf[1];
  lines::Pass p;
  if (dim == 3) {
    p = lines::pass(grid, {1, f0, f0 * f1}, g.nf[2], slabs.get(), {1, f0, f0 * f1}, mm.n[2], g.nf[0], g.nf[1]);
    p.place_out = lines::Place::Centered;
    lines::run(lines::Mode::Inverse, false, g.nf[2], p, s);
    p = lines::pass(slabs.get(), {1, f0 * f1, f0}, g.nf[1], rows.get(), {1, f0 * n1, f0}, mm.n[1], g.nf[0], mm.n[2]);
  } else {
    p = lines::pass(grid, {1, 0, f0}, g.nf[1], rows.get(), {1, 0, f0}, mm.n[1], g.nf[0], 1);
  }
  p.place_out = lines::Place::Centered;
  lines::run(lines::Mode::Inverse, false, g.nf[1], p, s);
}

// Type 1's x pass: each row's modes, deapodized, out.
void NufftPlan::Impl::lines_inverse_x(float2* f) {
  const long long n0 = mm.n[0], n1 = mm.n[1], f0 = g.nf[0];
  lines::Pass p = lines::pass(rows.get(), {f0, f0 * n1, 1}, g.nf[0], f, {n0, n0 * n1, 1}, mm.n[0], mm.n[1], mm.n[2]);
  p.place_out = lines::Place::Centered;
  p.deapod[0] = dx();
  p.deapod[1] = dy();
  p.deapod[2] = dz();
  lines::run(lines::Mode::Inverse, true, g.nf[0], p, s);
}

CufftPlan& NufftPlan::Impl::fft(int batch) {
  std::unique_ptr<CufftPlan>& f = ffts[batch];
  if (!f)
    f = std::make_unique<CufftPlan>(FftLayout{fine_dims(fine_grid), 1, (long long)fine_voxels(), batch}, s,
                                    "the NUFFT fine grids " + std::to_string(batch) + " x " + dims_string(fine_grid));
  return *f;
}

namespace {

// The grid in the plan's axis order.
ImageGrid planned_order(const ImageGrid& given, const std::array<int, 3>& axis) {
  const int n[3] = {given.nx, given.ny, given.nz};
  return {n[axis[0]], n[axis[1]], n[axis[2]]};
}

}  // namespace

NufftPlan::NufftPlan(const ImageGrid& given_modes, const ImageGrid& given_image, const NufftOptions& opt,
                     cudaStream_t s)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  const int n_given[3] = {given_modes.nx, given_modes.ny, given_modes.nz};
  p.axis = nufft::axis_order(n_given);
  const ImageGrid modes = planned_order(given_modes, p.axis), image = planned_order(given_image, p.axis);
  p.s = s;
  p.opt = opt;
  if (!(opt.tol > 0 && opt.tol < 1))
    throw InputError("nufft", "tolerance", std::to_string(opt.tol), "must lie in (0, 1)");
  if (opt.sigma != 2.0 && opt.sigma != 1.25)
    throw InputError("nufft", "upsampling", std::to_string(opt.sigma), "must be 2 or 1.25");
  if (interpolation_only(opt.spread))
    throw InputError("nufft", "spreading method", "rows", "is for interpolation only");
  if (spreading_only(opt.interp))
    throw InputError("nufft", "interpolation method", "gather", "is for spreading only");
  if (opt.sigma < 2.0 && opt.tol < fhd::nufft::kMinTolSigma125) p.opt.sigma = 2.0;
  const nufft::KernelParams kp = nufft::kernel_for(opt.tol, p.opt.sigma);
  p.w = kp.width;
  if (p.w < kMinWidth || p.w > kMaxWidth)
    throw InputError("nufft", "tolerance", std::to_string(opt.tol),
                     "gives kernel width " + std::to_string(p.w) + ", outside 2..16");
  if (modes.nx < 2 || modes.ny < 2 || image.nx < 1 || image.ny < 1 || image.nz < 1)
    throw InputError("nufft", "grid", dims_string(given_modes),
                     "needs two axes of 2 or more modes (an axis of 1 mode is idle; a 1D transform is not offered)");
  p.dim = modes.nz > 1 ? 3 : 2;
  const int n[3] = {modes.nx, modes.ny, modes.nz}, img[3] = {image.nx, image.ny, image.nz};
  const int defaults3[3] = {16, 16, 8}, defaults2[3] = {32, 32, 1};
  Geom& g = p.g;
  for (int a = 0; a < 3; ++a) {
    const bool used = a < p.dim;
    p.mm.n[a] = used ? n[a] : 1;
    g.nf[a] = used ? nufft::fine_size(n[a], kp) : 1;
    g.scale[a] = used ? float(double(g.nf[a]) / double(img[a])) : 0.f;
    const int want = opt.bin[a] > 0 ? opt.bin[a] : (p.dim == 3 ? defaults3[a] : defaults2[a]);
    g.bin[a] = used ? std::min(want, g.nf[a]) : 1;
    g.nbins[a] = (g.nf[a] + g.bin[a] - 1) / g.bin[a];
    g.pad[a] = used ? (p.w + 1) / 2 : 0;
    g.tile[a] = g.bin[a] + 2 * g.pad[a];
  }
  g.half_w = 0.5f * float(p.w);
  g.inv_half_w = 2.f / float(p.w);
  g.beta = float(kp.beta);
  g.chunk = opt.chunk;
  if (opt.threads < 32 || opt.threads > 1024 || opt.chunk < 1 || opt.chunk > opt.threads || opt.threads % opt.chunk)
    throw InputError("nufft", "threads/chunk", std::to_string(opt.threads) + "/" + std::to_string(opt.chunk),
                     "threads must be 32..1024 and a multiple of chunk");
  const std::size_t cells = std::size_t(g.tile[0]) * g.tile[1] * g.tile[2];
  p.smem_interp = cells * sizeof(float2);
  p.smem_spread = p.smem_interp + std::size_t(g.chunk) * (sizeof(float2) + 3 * sizeof(int) + 3 * p.w * sizeof(float));
  const int limit = max_shared_bytes();
  if (p.smem_spread > std::size_t(limit))
    throw InputError(
        "nufft", "bin size", std::to_string(g.bin[0]) + "x" + std::to_string(g.bin[1]) + "x" + std::to_string(g.bin[2]),
        "needs " + std::to_string(p.smem_spread) + " bytes of shared memory, the device has " + std::to_string(limit));
  p.fine_grid = {g.nf[0], g.nf[1], g.nf[2]};
  p.can_gather = (opt.spread == NufftMethod::Gather || opt.spread == NufftMethod::Auto) && gather_fits(g, p.dim) &&
                 gather_shared_bytes(p.w, kGatherGroup) <= std::size_t(limit);
  p.by_lines = lines::supported_length(g.nf[0]) && lines::supported_length(g.nf[1]) &&
               (p.dim == 2 || lines::supported_length(g.nf[2]));
  if (p.opt.interp == NufftMethod::Auto)
    p.opt.interp = p.fine_grid.voxels() <= kRowsMaxFineCells ? NufftMethod::Rows : NufftMethod::Shared;
  // One fine grid must fit now (a clear message before any work); it and the
  // cuFFT plan are made at the first execute.
  require_free(double(p.fine_grid.voxels()) * sizeof(float2), "the NUFFT fine grid " + dims_string(p.fine_grid));
  p.deapod = upload_deapodization(p.mm.n, g.nf, p.dim, kp, s);
}

NufftPlan::~NufftPlan() = default;

OwnedStream::OwnedStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
OwnedStream::~OwnedStream() {
  cudaStreamSynchronize(s_);  // no throw from a destructor
  try {
    release_blas_handle(s_);  // the bench's separable rows may have made one
  } catch (const std::exception&) {
  }
  cudaStreamDestroy(s_);
}

// A counting sort in two passes over k (count, then place), so nothing per
// point is stored but the sorted records themselves; the per-bin arrays and
// the scans' scratch are one buffer the plan keeps, like the records, for a
// later set_points (each cudaMalloc and cudaFree costs time, a free also a
// device synchronization: freeing 16.8M points' scratch took 0.3 ms).
void NufftPlan::Impl::sort_points(const float* kx, const float* ky, const float* kz) {
  const std::size_t nbins = this->nbins(), nb1 = nbins + 1;
  const std::string what = "NUFFT bins (" + std::to_string(m) + " points, " + std::to_string(nbins) + " bins)";
  std::size_t temp_bytes = 0, arrays = 0;
  const std::size_t bins_size = scan_buffer(nb1, kBinArrays, s, &arrays, &temp_bytes);
  if (pts.size() < m) pts.allocate(m, what, Reach::DeviceOnly);
  if (bins.size() < bins_size) bins.allocate(bins_size, what, Reach::DeviceOnly);
  unsigned* counts = bin_array(kCounts);
  unsigned* sub = bin_array(kSub);
  unsigned* start = bin_array(kStart);
  unsigned* cursor = bin_array(kCursor);
  unsigned* sub_start = bin_array(kSubStart);
  void* temp = bins.get() + arrays;
  // counts and sub zeroed (entry nbins of each stays 0: the scans' total).
  CUDA_CHECK(cudaMemsetAsync(counts, 0, 2 * nb1 * sizeof(unsigned), s));
  constexpr unsigned threads = 256;
  const unsigned blocks = blocks_for(m, threads);
  if (dim == 3)
    bin_count_kernel<3><<<blocks, threads, 0, s>>>(kx, ky, kz, m, g, counts);
  else
    bin_count_kernel<2><<<blocks, threads, 0, s>>>(kx, ky, kz, m, g, counts);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, counts, start, unsigned(nb1), s));
  CUDA_CHECK(cudaMemcpyAsync(cursor, start, nbins * sizeof(unsigned), cudaMemcpyDeviceToDevice, s));
  if (dim == 3)
    bin_place_kernel<3><<<blocks, threads, 0, s>>>(kx, ky, kz, m, g, cursor, pts.get());
  else
    bin_place_kernel<2><<<blocks, threads, 0, s>>>(kx, ky, kz, m, g, cursor, pts.get());
  CUDA_CHECK_LAUNCH();
  const unsigned maxsub = unsigned(std::max(1, opt.max_subproblem));
  subproblem_count_kernel<<<blocks_for(nbins, threads), threads, 0, s>>>(counts, unsigned(nbins), maxsub, sub);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, sub, sub_start, unsigned(nb1), s));
  unsigned total = 0;
  download(sub_start + nbins, 1, &total, s);  // the launch size: the plan's one round trip
  nsub = total;
  if (subs.size() < std::max<std::size_t>(nsub, 1))
    subs.allocate(std::max<std::size_t>(nsub, 1), what + " (subproblems)");
  subproblem_fill_kernel<<<blocks_for(nbins, threads), threads, 0, s>>>(counts, start, sub, sub_start, unsigned(nbins),
                                                                        maxsub, subs.get());
  CUDA_CHECK_LAUNCH();
}

// The gather's parts (cuda/nufft/gather_spread.cuh) from the bins' counts.
void NufftPlan::Impl::cut_parts() {
  const std::size_t nboxes = std::size_t(boxes_along(g, 0)) * boxes_along(g, 1) * boxes_along(g, 2), nb1 = nboxes + 1;
  std::size_t temp_bytes = 0, arrays = 0;
  const std::size_t size = scan_buffer(nb1, 2, s, &arrays, &temp_bytes);
  const std::string what = "NUFFT gather boxes (" + std::to_string(nboxes) + ")";
  if (box_arrays.size() < size) box_arrays.allocate(size, what, Reach::DeviceOnly);
  unsigned* per_box = box_arrays.get();
  unsigned* part_start = per_box + nb1;
  CUDA_CHECK(cudaMemsetAsync(per_box + nboxes, 0, sizeof(unsigned), s));  // the scan's total
  constexpr unsigned threads = 256;
  gather_count_kernel<<<blocks_for(nboxes, threads), threads, 0, s>>>(bin_array(kCounts), bin_array(kStart), g,
                                                                       unsigned(nboxes), per_box);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(box_arrays.get() + arrays, temp_bytes, per_box, part_start, unsigned(nb1), s));
  unsigned total = 0;
  download(part_start + nboxes, 1, &total, s);
  nparts = total;
  parts_cut = true;
  if (parts.size() < std::max<std::size_t>(nparts, 1))
    parts.allocate(std::max<std::size_t>(nparts, 1), what + " (parts)", Reach::DeviceOnly);
  gather_fill_kernel<<<blocks_for(nboxes, threads), threads, 0, s>>>(per_box, part_start, unsigned(nboxes),
                                                                      parts.get());
  CUDA_CHECK_LAUNCH();
}

void NufftPlan::set_points(const float* kx, const float* ky, const float* kz, std::size_t m) {
  if (m >= (std::size_t(1) << 31)) throw InputError("nufft", "points", std::to_string(m), "must be fewer than 2^31");
  impl_->m = m;
  impl_->nsub = 0;
  impl_->nparts = 0;
  impl_->parts_cut = false;
  const float* given[3] = {kx, ky, kz};
  const std::array<int, 3>& axis = impl_->axis;
  if (m) impl_->sort_points(given[axis[0]], given[axis[1]], given[axis[2]]);
}

// Type 1's set-up for a pass of `batch` transforms, made once and kept.
float2* NufftPlan::Impl::type1_setup(int batch) {
  float2* grid = workspace(batch);
  if (!by_lines) fft(batch);
  if (m && gathers(batch) && !parts_cut) cut_parts();  // once per set_points
  return grid;
}

void NufftPlan::Impl::type1_pass(const float2* c, float2* f, int batch) {
  float2* grid = type1_setup(batch);  // before the first mark: phases time work, not set-up
  const bool gather = gathers(batch);
  mark(0);
  CUDA_CHECK(cudaMemsetAsync(grid, 0, fine_voxels() * batch * sizeof(float2), s));
  if (m && gather)
    with_width<3, GatherKernels>(w, [&](auto k) {
      k.spread(pts.get(), c, parts.get(), nparts, bin_array(kCounts), bin_array(kStart), g, grid, m, batch,
               fine_voxels(), s);
    });
  else if (m)
    dispatch(dim, w, [&](auto k) {
      k.spread(opt.spread != NufftMethod::Global, pts.get(), c, subs.get(), nsub, m, g, smem_spread, opt.threads, grid,
               batch, fine_voxels(), s);
    });
  mark(1);
  if (by_lines) {  // one transform after another through the one scratch
    for (int t = 0; t < batch; ++t) {
      lines_inverse_zy(grid + std::size_t(t) * fine_voxels());
      if (t + 1 == batch) mark(2);
      lines_inverse_x(f + std::size_t(t) * mode_voxels());
    }
  } else {
    fft(batch).exec(grid, CUFFT_INVERSE);
    mark(2);
    deapodize_out<<<dim3(blocks_for(mode_voxels(), 256), batch), 256, 0, s>>>(grid, g, mm, dx(), dy(), dz(), f);
    CUDA_CHECK_LAUNCH();
  }
  mark(3);
}

void NufftPlan::Impl::type2_pass(const float2* f, float2* c, int batch) {
  float2* grid = workspace(batch);
  if (!by_lines) fft(batch);
  mark(0);
  if (by_lines) {
    for (int t = 0; t < batch; ++t) {
      lines_forward_x(f + std::size_t(t) * mode_voxels());
      if (t == 0) mark(1);
      lines_forward_yz(grid + std::size_t(t) * fine_voxels());
    }
  } else {
    deapodize_in<<<dim3(blocks_for(fine_voxels(), 256), batch), 256, 0, s>>>(f, g, mm, dx(), dy(), dz(), grid);
    CUDA_CHECK_LAUNCH();
    mark(1);
    fft(batch).exec(grid, CUFFT_FORWARD);
  }
  mark(2);
  if (m)
    dispatch(dim, w, [&](auto k) {
      k.interp(opt.interp, pts.get(), subs.get(), nsub, m, g, smem_interp, opt.threads, grid, c, batch, fine_voxels(),
               s);
    });
  mark(3);
}

void NufftPlan::type1(const float2* c, float2* f, int n) {
  Impl& p = *impl_;
  const int group = p.group(n);
  for (int t = 0; t < n; t += group)
    p.type1_pass(c + std::size_t(t) * p.m, f + std::size_t(t) * p.mode_voxels(), std::min(group, n - t));
}

void NufftPlan::reserve_type1(int n) {
  Impl& p = *impl_;
  p.type1_setup(p.group(n));
}

void NufftPlan::type2(const float2* f, float2* c, int n) {
  Impl& p = *impl_;
  const int group = p.group(n);
  for (int t = 0; t < n; t += group)
    p.type2_pass(f + std::size_t(t) * p.mode_voxels(), c + std::size_t(t) * p.m, std::min(group, n - t));
}

void NufftPlan::set_phase_events(cudaEvent_t* ev) { impl_->phase = ev; }

int NufftPlan::width() const { return impl_->w; }
double NufftPlan::sigma() const { return impl_->opt.sigma; }
ImageGrid NufftPlan::fine() const { return impl_->fine_grid; }
std::size_t NufftPlan::points() const { return impl_->m; }
std::size_t NufftPlan::subproblems() const { return impl_->nsub; }
bool NufftPlan::gathers(int n) const { return impl_->gathers(n); }

}  // namespace fhd::gpu
