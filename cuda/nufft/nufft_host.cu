// The GPU NUFFT's host conveniences (cuda/nufft/nufft.hpp): upload, plan,
// execute, download, for tests and the bench.
#include <algorithm>
#include <string>

#include "cuda/device/gpu_internal.hpp"
#include "cuda/nufft/nufft.hpp"

namespace fhd::gpu {

namespace {

struct HostPoints {
  DeviceBuffer<float> kx, ky, kz;
  std::size_t m = 0;
};

HostPoints upload_points(const Trajectory& t, cudaStream_t s) {
  HostPoints h;
  h.m = t.size();
  const std::string what = "NUFFT points (" + std::to_string(h.m) + ")";
  h.kx.allocate(h.m, what);
  h.ky.allocate(h.m, what);
  h.kz.allocate(h.m, what);
  upload(t.kx.data(), h.m, h.kx.get(), s);
  upload(t.ky.data(), h.m, h.ky.get(), s);
  if (t.kz.size() == h.m)
    upload(t.kz.data(), h.m, h.kz.get(), s);
  else if (h.m)
    CUDA_CHECK(cudaMemsetAsync(h.kz.get(), 0, h.m * sizeof(float), s));
  return h;
}

std::vector<cfloat> run_type1(const Trajectory& t, const std::vector<cfloat>& c, const ImageGrid& modes,
                              const ImageGrid& image, const NufftOptions& opt) {
  if (c.size() != t.size())
    throw InputError("nufft", "values", std::to_string(c.size()),
                     "must number the trajectory's " + std::to_string(t.size()) + " points");
  OwnedStream s;
  HostPoints pts = upload_points(t, s);
  DeviceBuffer<float2> dc(std::max<std::size_t>(c.size(), 1), "NUFFT values");
  upload(reinterpret_cast<const float2*>(c.data()), c.size(), dc.get(), s);
  NufftPlan plan(modes, image, opt, s);
  plan.set_points(pts.kx.get(), pts.ky.get(), pts.kz.get(), pts.m);
  DeviceBuffer<float2> df(modes.voxels(), "NUFFT modes " + dims_string(modes));
  plan.type1(dc.get(), df.get());
  std::vector<cfloat> out(modes.voxels());
  download(df.get(), out.size(), reinterpret_cast<float2*>(out.data()), s);
  return out;
}

}  // namespace

std::vector<cfloat> nufft_type1(const Trajectory& t, const std::vector<cfloat>& c, const ImageGrid& grid,
                                const NufftOptions& opt) {
  return run_type1(t, c, grid, grid, opt);
}

std::vector<cfloat> nufft_q(const Trajectory& t, const std::vector<float>& w, const ImageGrid& grid,
                            const NufftOptions& opt) {
  std::vector<cfloat> c(t.size(), cfloat(1.f, 0.f));
  if (!w.empty()) {
    if (w.size() != t.size())
      throw InputError("nufft", "weights", std::to_string(w.size()),
                       "must number the trajectory's " + std::to_string(t.size()) + " points");
    for (std::size_t i = 0; i < w.size(); ++i) c[i] = cfloat(w[i], 0.f);
  }
  return run_type1(t, c, grid.doubled(), grid, opt);
}

std::vector<cfloat> nufft_type2(const Trajectory& t, const std::vector<cfloat>& f, const ImageGrid& grid,
                                const NufftOptions& opt) {
  if (f.size() != grid.voxels())
    throw InputError("nufft", "image", std::to_string(f.size()),
                     "must have the grid's " + std::to_string(grid.voxels()) + " voxels");
  OwnedStream s;
  HostPoints pts = upload_points(t, s);
  NufftPlan plan(grid, grid, opt, s);
  plan.set_points(pts.kx.get(), pts.ky.get(), pts.kz.get(), pts.m);
  DeviceBuffer<float2> df(f.size(), "NUFFT modes"), dc(std::max<std::size_t>(t.size(), 1), "NUFFT values");
  upload(reinterpret_cast<const float2*>(f.data()), f.size(), df.get(), s);
  plan.type2(df.get(), dc.get());
  std::vector<cfloat> out(t.size());
  download(dc.get(), out.size(), reinterpret_cast<float2*>(out.data()), s);
  return out;
}

}  // namespace fhd::gpu
