// The exact gather on the GPU (recon/gather/gather_kernels.hpp): the cmpFhD
// kernel table (cuda/gather/fhd_kernels.hpp) with tuned launch profiles, Q by
// its Hermitian half, and the slabs a partition over devices takes.
#include <string>

#include "core/error.hpp"
#include "cuda/device/gpu_internal.hpp"
#include "cuda/gather/fhd_kernels.hpp"
#include "cuda/gather/fhd_launchers.cuh"
#include "cuda/gather/q_hermitian.hpp"
#include "cuda/gather/tune.hpp"
#include "cuda/ops/gpu_kernels.hpp"
#include "recon/gather/direct_sum.hpp"

namespace fhd::gpu {

std::string gpu_tune_dir(const Device& dev);  // cuda/device/gpu_device.cu

namespace {

void require_samples(const DeviceTrajectory& traj, std::size_t n, const char* where, const char* field) {
  if (n != traj.m)
    throw InputError(where, field, std::to_string(n), "must equal the trajectory's " + std::to_string(traj.m) + " samples");
}

// A box of the doubled grid starting at `origin` (per axis) is a kernel
// output grid whose coordinates are shifted by (origin + b/2 - L/2)/n.
double box_shift(int origin, int box, int len, int n) {
  return len > 1 ? double(origin + box / 2 - len / 2) / double(n) : 0.0;
}

class GpuGather : public GatherKernels {
 public:
  explicit GpuGather(Device& dev) : dev_(dev), s_(stream_of(dev)) {}

  void adjoint(const Points& k, const DeviceVector& mu, const ImageGrid& grid, const FhdOptions& opt,
               DeviceVector& out) override {
    DeviceScope scope(dev_);
    const DeviceTrajectory& traj = on_device(k);
    require_samples(traj, mu.size(), "fhd", "mu size");
    check_out(mu, out, grid.voxels(), "fhd");
    gather_into(traj, dptr(mu), OutGrid{grid.nx, grid.ny, grid.nz, grid.nx, grid.ny, grid.nz}, opt, dptr(out));
  }

  // The exact forward model on the host (float64 direct sums): tests and
  // small problems only; the NUFFT's type 2 is the forward model that runs.
  void forward(const Points& k, const DeviceVector& x, const ImageGrid& grid, const FhdOptions&,
               DeviceVector& out) override {
    DeviceScope scope(dev_);
    check_out(x, out, k.size(), "forward");
    const std::vector<cdouble> d = forward_reference(k.host(), dev_.download(x), grid);
    const std::vector<cfloat> f(d.begin(), d.end());
    dev_.to_device(f.data(), out);
  }

  VecPtr q(const Points& k, const std::vector<float>& w, const ImageGrid& grid, const FhdOptions& opt) override {
    DeviceScope scope(dev_);
    const DeviceTrajectory& traj = on_device(k);
    DeviceBuffer<float2> wc = complex_weights(w, traj.m, s_);
    return wrap(q_from_half(traj, wc.get(), grid, opt, nullptr));
  }

  void adjoint_slab(const Points& k, const DeviceVector& mu, const ImageGrid& grid, int a0, int h,
                    const FhdOptions& opt, DeviceVector& out) override {
    DeviceScope scope(dev_);
    const DeviceTrajectory& traj = on_device(k);
    require_samples(traj, mu.size(), "fhd", "mu size");
    const int axis = grid.nz > 1 ? 2 : 1;
    int origin[3] = {0, 0, 0}, box[3] = {grid.nx, grid.ny, grid.nz};
    origin[axis] = a0;
    box[axis] = h;
    check_out(mu, out, std::size_t(box[0]) * box[1] * box[2], "fhd slab");
    DeviceBuffer<float2> shifted(mu.size(), "a slab of the FhD image on " + dims_string(grid), Reach::DeviceOnly);
    gather_box(traj, dptr(mu), grid, origin, box, dptr(out), shifted, opt, false);
    CUDA_CHECK(cudaStreamSynchronize(s_));  // shifted goes at scope end
  }

  VecPtr q_half_slab(const Points& k, const std::vector<float>& w, const ImageGrid& grid, int a0, int h,
                     const FhdOptions& opt) override {
    DeviceScope scope(dev_);
    const DeviceTrajectory& traj = on_device(k);
    DeviceBuffer<float2> wc = complex_weights(w, traj.m, s_);
    const int axis = grid.nz > 1 ? 2 : 1;
    int origin[3] = {0, 0, 0}, box[3];
    q_half_box(grid, box);
    origin[axis] = a0;
    box[axis] = h;
    DeviceBuffer<float2> shifted(traj.m, "cmpQ shifted weights", Reach::DeviceOnly);
    DeviceBuffer<float2> out(std::size_t(box[0]) * box[1] * box[2], "a slab of Q's half box");
    gather_box(traj, wc.get(), grid, origin, box, out.get(), shifted, opt);
    CUDA_CHECK(cudaStreamSynchronize(s_));
    return wrap(std::move(out));
  }

  VecPtr q_from_half(const Points& k, const std::vector<float>& w, const ImageGrid& grid, const FhdOptions& opt,
                     const DeviceVector& half) override {
    DeviceScope scope(dev_);
    const DeviceTrajectory& traj = on_device(k);
    DeviceBuffer<float2> wc = complex_weights(w, traj.m, s_);
    return wrap(q_from_half(traj, wc.get(), grid, opt, &half));
  }

 private:
  // Both vectors this device's, the output of the size the kernel writes.
  void check_out(const DeviceVector& in, const DeviceVector& out, std::size_t want, const char* where) const {
    require_gpu(dev_, in, where);
    require_gpu(dev_, out, where);
    if (out.size() != want)
      throw std::invalid_argument(std::string("gpu ") + where + ": output of " + std::to_string(out.size()) +
                                  " values, expected " + std::to_string(want));
  }

  VecPtr wrap(DeviceBuffer<float2>&& buf) {
    auto mem = std::make_shared<DeviceBuffer<float2>>(std::move(buf));
    return std::make_unique<DeviceVector>(dev_, reinterpret_cast<cfloat*>(mem->get()), mem->size(), mem);
  }

  // out = sum_m w_m exp(i 2 pi k_m . x) on g, with the kernel the options name
  // and its tuned launch configuration (cuda/gather/tune.hpp) when a profile has one.
  void gather_into(const DeviceTrajectory& traj, const float2* w, const OutGrid& g, const FhdOptions& opt,
                   float2* out) {
    gather_set(SampleSet{traj.kx.get(), traj.ky.get(), traj.kz.get(), w, traj.m}, g, opt, out);
  }
  void gather_set(const SampleSet& s, const OutGrid& g, const FhdOptions& opt, float2* out) {
    if (g.points() == 0) return;
    const KernelVariant& v = find_kernel(opt.kernel.empty() ? default_kernel(opt.trig) : opt.kernel);
    if (s.m == 0) {
      launch_fill(make_float2(0.f, 0.f), out, g.points(), s_);
      return;
    }
    v.launch(s, g, out, opt.trig, tuned_config(v.name, opt.trig, gpu_tune_dir(dev_)), s_);
  }

  // A box of `full` (the doubled grid for Q, the image for FhD) at `origin`.
  void gather_box(const DeviceTrajectory& traj, const float2* w, const ImageGrid& img, const int origin[3],
                  const int box[3], float2* out, DeviceBuffer<float2>& shifted, const FhdOptions& opt,
                  bool doubled = true) {
    const ImageGrid d = doubled ? img.doubled() : img;
    const SampleSet s{traj.kx.get(), traj.ky.get(), traj.kz.get(), w, traj.m};
    launch_phase_shift(s, box_shift(origin[0], box[0], d.nx, img.nx), box_shift(origin[1], box[1], d.ny, img.ny),
                       box_shift(origin[2], box[2], d.nz, img.nz), shifted.get(), s_);
    if (box[0] == 1 && box[1] > 1) {
      // A box one voxel wide in x (Q's face at x = 0) is gathered with x and y
      // swapped, the same values in the same order: every kernel runs its
      // fastest axis along x (the separable GEMM's rows, the direct kernels'
      // coarsened x), and one row wide that axis wasted nearly all its work
      // (H200, 256^3 / 4,194,304 samples: the face cost about 2 s of Q's 49).
      const SampleSet t{traj.ky.get(), traj.kx.get(), traj.kz.get(), shifted.get(), traj.m};
      gather_set(t, OutGrid{box[1], 1, box[2], img.ny, img.nx, img.nz}, opt, out);
      return;
    }
    gather_into(traj, shifted.get(), OutGrid{box[0], box[1], box[2], img.nx, img.ny, img.nz}, opt, out);
  }

  // Q(-y) = conj(Q(y)): compute the mirror axis's slices 0..n (z in 3D, y in
  // 2D) and the faces through index 0 whose mirror is off the grid (lag +n);
  // the rest is conjugate mirrors. About half the pairs of the full grid.
  // With `given` (the half box computed elsewhere, by slabs on other
  // devices), only the faces are gathered here.
  DeviceBuffer<float2> q_from_half(const DeviceTrajectory& traj, const float2* w, const ImageGrid& img,
                                   const FhdOptions& opt, const DeviceVector* given) {
    const ImageGrid d = img.doubled();
    const bool is3d = d.nz > 1;
    const int n = is3d ? img.nz : img.ny, rest = n - 1;
    int half_box[3];
    q_half_box(img, half_box);
    const int zero[3] = {0, 0, 0};
    const int face0_org[3] = {0, is3d ? 0 : n + 1, is3d ? n + 1 : 0};
    const int face0_box[3] = {1, is3d ? d.ny : rest, is3d ? rest : 1};
    const int face1_org[3] = {1, 0, n + 1};
    const int face1_box[3] = {d.nx - 1, 1, is3d ? rest : 0};
    const std::string what = "Q on the doubled grid " + dims_string(d);
    DeviceBuffer<float2> shifted(traj.m, "cmpQ shifted weights", Reach::DeviceOnly);
    DeviceBuffer<float2> half(std::size_t(half_box[0]) * half_box[1] * half_box[2], what, Reach::DeviceOnly);
    DeviceBuffer<float2> face0(std::size_t(face0_box[1]) * face0_box[2], what, Reach::DeviceOnly);
    DeviceBuffer<float2> face1(is3d ? std::size_t(face1_box[0]) * face1_box[2] : 0, what, Reach::DeviceOnly);
    if (given) {
      if (given->size() != half.size())
        throw std::invalid_argument("gpu gather: Q's half box has " + std::to_string(given->size()) +
                                    " values, expected " + std::to_string(half.size()));
      require_gpu(dev_, *given, "q_from_half");
      CUDA_CHECK(cudaMemcpyAsync(half.get(), dptr(*given), half.bytes(), cudaMemcpyDeviceToDevice, s_));
    } else {
      gather_box(traj, w, img, zero, half_box, half.get(), shifted, opt);
    }
    gather_box(traj, w, img, face0_org, face0_box, face0.get(), shifted, opt);
    if (is3d) gather_box(traj, w, img, face1_org, face1_box, face1.get(), shifted, opt);
    DeviceBuffer<float2> q(d.voxels(), what);
    launch_assemble_q(half.get(), face0.get(), face1.get(), d.nx, d.ny, d.nz, q.get(), s_);
    CUDA_CHECK(cudaStreamSynchronize(s_));  // the boxes are freed at scope end
    return q;
  }

  Device& dev_;
  cudaStream_t s_;
};

}  // namespace

std::unique_ptr<GatherKernels> make_gpu_gather(Device& dev) { return std::make_unique<GpuGather>(dev); }

}  // namespace fhd::gpu
