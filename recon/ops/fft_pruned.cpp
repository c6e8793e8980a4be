// Pruned FFTW transforms (see fft_pruned.hpp).
#include "recon/ops/fft_pruned.hpp"

#include <fftw3.h>

#include <mutex>
#include <stdexcept>

#include "recon/plan/toeplitz.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace fhd {

namespace {

// The batch dimensions of the lines along `axis`: for each other axis either
// the whole axis or one of its kept ranges; every combination of ranges is
// one plan: its first line's offset (complex values) and its batch dims.
// 64-bit dims (guru64): a batch of fine grids passes 2^31 values.
struct LineSet {
  std::size_t offset;
  std::vector<fftwf_iodim64> dims;
};

void combine(std::vector<LineSet>& sets, std::ptrdiff_t stride, const std::vector<KeptRange>& ranges) {
  std::vector<LineSet> out;
  for (const LineSet& s : sets)
    for (const KeptRange& r : ranges) {
      if (r.length <= 0) continue;
      LineSet t = s;
      t.offset += std::size_t(r.start) * stride;
      t.dims.push_back({r.length, stride, stride});
      out.push_back(t);
    }
  sets.swap(out);
}

// Sets FFTW's thread count for the plans made while it lives, then restores
// the process's (toeplitz.cpp's fftw_planner_lock sets omp_get_max_threads()).
class PlannerThreads {
 public:
  explicit PlannerThreads(int threads) : set_(threads > 0) {
#if defined(FHD_HAVE_FFTW_OMP) && defined(_OPENMP)
    if (set_) fftwf_plan_with_nthreads(threads);
#endif
  }
  ~PlannerThreads() {
#if defined(FHD_HAVE_FFTW_OMP) && defined(_OPENMP)
    if (set_) fftwf_plan_with_nthreads(omp_get_max_threads());
#endif
  }

 private:
  bool set_;
};

}  // namespace

PrunedFft::PrunedFft(const ImageGrid& dims, const std::array<std::vector<KeptRange>, 3>& kept, Pruned which,
                     const std::array<int, 3>& order, int sign, int batch, cfloat* data, int threads)
    : PrunedFft(dims, GridLayout::dense(dims), kept, which, order, sign, batch, data, threads) {}

PrunedFft::PrunedFft(const ImageGrid& dims, const GridLayout& layout, const std::array<std::vector<KeptRange>, 3>& kept,
                     Pruned which, const std::array<int, 3>& order, int sign, int batch, cfloat* data, int threads) {
  const int len[3] = {dims.nx, dims.ny, dims.nz};
  const std::ptrdiff_t* stride = layout.stride;
  std::lock_guard<std::mutex> guard(fftw_planner_lock());
  PlannerThreads planner_threads(threads);
  for (int step = 0; step < 3; ++step) {
    const int axis = order[step];
    if (len[axis] <= 1) continue;
    std::vector<LineSet> sets{{0, {}}};
    for (int other_step = 0; other_step < 3; ++other_step) {
      const int b = order[other_step];
      if (b == axis || len[b] <= 1) continue;
      const bool done_before = other_step < step;
      const bool pruned = (which == Pruned::Input) != done_before;
      if (pruned && !kept[b].empty())
        combine(sets, stride[b], kept[b]);
      else
        combine(sets, stride[b], {{0, len[b]}});
    }
    if (batch > 1) combine(sets, layout.batch_stride, {{0, batch}});
    const fftwf_iodim64 line{len[axis], stride[axis], stride[axis]};
    for (LineSet& s : sets) {
      auto* p = reinterpret_cast<fftwf_complex*>(data + s.offset);
      fftwf_plan plan = fftwf_plan_guru64_dft(1, &line, int(s.dims.size()), s.dims.data(), p, p, sign, FFTW_ESTIMATE);
      if (!plan) {
        for (void* q : plans_) fftwf_destroy_plan(static_cast<fftwf_plan>(q));
        throw std::runtime_error("FFTW could not make a plan");
      }
      plans_.push_back(plan);
    }
  }
}

PrunedFft::~PrunedFft() {
  std::lock_guard<std::mutex> guard(fftw_planner_lock());
  for (void* p : plans_) fftwf_destroy_plan(static_cast<fftwf_plan>(p));
}

void PrunedFft::execute() {
  for (void* p : plans_) fftwf_execute(static_cast<fftwf_plan>(p));
}

}  // namespace fhd
