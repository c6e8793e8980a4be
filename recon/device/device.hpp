#pragma once
// The Backend seam (docs/architecture.md): one interface, a CPU implementation in
// recon/ (OpenMP, FFTW, BLAS) and a GPU one in cuda/. Three parts: vector
// operations (VectorOps, for solvers), uploaded trajectories (Points) and the
// operators that take them. A Plan (recon/plan/plan.hpp) binds one trajectory and
// grid to a backend; the pipeline, CG and ADMM are written once against these.
// recon/ never includes a CUDA header.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "recon/problem/scan.hpp"

namespace fhd {

// A complex float vector that lives where the backend computes (host memory
// for the CPU, device memory for the GPU). Only its backend can read it.
struct Calibration;  // recon/coils/coil_maps.hpp

class BackendVector {
 public:
  virtual ~BackendVector() = default;
  virtual std::size_t size() const = 0;
};
using VecPtr = std::unique_ptr<BackendVector>;

// y = (FhF + lambda R^H R) x on backend vectors of grid.voxels() elements.
class NormalOperator {
 public:
  virtual ~NormalOperator() = default;
  virtual void apply(const BackendVector& x, BackendVector& y) = 0;
};

// How FhD and Q are computed: the exact gather (every sample-voxel pair, the
// book's method) or the NUFFT (spread to an oversampled grid, FFT, deapodize;
// accurate to nufft_tol relative).
enum class FhdMethod { Exact, Nufft };

struct FhdOptions {
  TrigMode trig = TrigMode::Single;  // exact kernels only
  // Kernel variant by name; "" = the backend's default (its fastest accurate one).
  // CPU: "direct" (per-pair sum; with trig=double it is the float64 reference)
  //      or "separable" (per-axis factors, complex GEMM through BLAS).
  // GPU: a name from the cmpFhD kernel table (cuda/kernels.hpp).
  std::string kernel;
  // Optional: called on the calling thread between chunks with the fraction done
  // (0..1), so the CLI can show progress on long FhD/Q runs. May be empty.
  std::function<void(double)> progress;
  // Last, so aggregate initializations {trig, kernel} elsewhere keep their meaning.
  FhdMethod method = FhdMethod::Exact;
  double nufft_tol = 1e-6;  // relative tolerance of the NUFFT (method Nufft only)
};

// Gridding interpolation kernel, distances in oversampled-grid cells.
struct GridKernel {
  enum class Type { Trilinear, KaiserBessel } type = Type::KaiserBessel;
  double oversampling = 2.0;  // grid size = round(oversampling * N) per axis (even)
  double width = 4.0;         // full kernel width in grid cells (trilinear: 2)
  double beta = 0.0;          // KB shape; 0 = Beatty et al. 2005 optimum for width and oversampling
};

// The BLAS-1 operations every solver needs (CG, ADMM), apart from the
// operators, like BART's vec_iter_s: a solver is written once against this
// table and runs wherever the vectors live. Reductions accumulate in double.
class VectorOps {
 public:
  virtual ~VectorOps() = default;
  virtual VecPtr upload(const std::vector<cfloat>& host) = 0;
  virtual VecPtr zeros(std::size_t n) = 0;
  virtual std::vector<cfloat> download(const BackendVector& v) = 0;
  // The same into `out` (resized to v's size), whose memory the caller may have
  // made ready beforehand; the default goes through download().
  virtual void download_into(const BackendVector& v, std::vector<cfloat>& out);
  virtual void copy(const BackendVector& src, BackendVector& dst) = 0;
  virtual void axpy(cdouble a, const BackendVector& x, BackendVector& y) = 0;  // y = a x + y
  virtual void xpay(const BackendVector& x, cdouble a, BackendVector& y) = 0;  // y = x + a y
  virtual cdouble dot(const BackendVector& x, const BackendVector& y) = 0;     // sum conj(x) y
  // dot(a, b) and dot(c, d) together: preconditioned CG needs r.r and r.z each
  // iteration, and on a GPU each dot waits for the device (at 64^3 a second
  // wait was a quarter of PCG's time per iteration). The default calls dot twice.
  virtual std::pair<cdouble, cdouble> dot2(const BackendVector& a, const BackendVector& b, const BackendVector& c,
                                           const BackendVector& d);
  // sum (|x_i| - Re ref_i)^2: the squared error of a magnitude image against a
  // real reference held in ref's real parts (PSNR per iteration without
  // bringing each iterate to the host). The default downloads both.
  virtual double magnitude_sse(const BackendVector& x, const BackendVector& ref);
  // y_i = s_i x_i, or conj(s_i) x_i (SENSE's coil sensitivities). y may be x.
  // The default goes through the host.
  virtual void multiply(const BackendVector& s, const BackendVector& x, BackendVector& y, bool conjugate);
};

// A trajectory uploaded once to where its backend computes (a host copy for
// the CPU, device arrays for the GPU). Every trajectory-bound operation takes
// it explicitly: no backend holds a "current" trajectory.
class Points {
 public:
  explicit Points(Trajectory host) : host_(std::move(host)) {}
  virtual ~Points() = default;
  std::size_t size() const { return host_.size(); }
  const Trajectory& host() const { return host_; }  // the k values, for host-side work (DCF, checks)

 private:
  Trajectory host_;
};

class Plan;
struct PlanOptions;

class Backend {
 public:
  virtual ~Backend() = default;
  // Plain description for logs: "cpu (2 threads, FFTW, OpenBLAS)", "gpu 0: NVIDIA H100 ...".
  virtual std::string name() const = 0;
  virtual bool is_gpu() const = 0;

  // The vectors' operations, for solvers (recon/solvers/cg.hpp, recon/solvers/tv.hpp).
  virtual VectorOps& vec() = 0;

  // A plan per trajectory and image grid (recon/plan/plan.hpp): uploads k once and
  // owns what depends only on the trajectory (Q, FFT(Q) per lambda, the DCF).
  std::unique_ptr<Plan> make_plan(const Trajectory& traj, const ImageGrid& grid, const PlanOptions& opt);

  // Uploads k (lengths checked: kz may be empty for 2D). The operators below
  // take the result; it must come from this backend.
  virtual std::unique_ptr<Points> upload_points(const Trajectory& traj) = 0;

  // cmpMu: Mu_m = conj(Phi_m) * D_m; phi empty means Phi = 1.
  virtual std::vector<cfloat> mu(const std::vector<cfloat>& phi, const std::vector<cfloat>& data) = 0;
  // cmpFhD (the adjoint): FhD_n = sum_m Mu_m exp(+i 2 pi k_m . x_n) on grid's voxel centers.
  virtual std::vector<cfloat> fhd(const Points& k, const std::vector<cfloat>& mu, const ImageGrid& grid,
                                  const FhdOptions& opt) = 0;
  // Q(y_j) = sum_m w_m exp(+i 2 pi k_m . y_j) on grid.doubled(), w_m = |Phi_m|^2
  // (w empty means 1).
  virtual std::vector<cfloat> q(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                                const FhdOptions& opt) = 0;
  // The forward model with Phi = 1: D_m = sum_n x_n exp(-i 2 pi k_m . x_n).
  // The default runs on the host: the CPU NUFFT for method Nufft, else the
  // direct sum (O(M N), for tests and small problems); the GPU overrides Nufft.
  virtual std::vector<cfloat> forward(const Points& k, const std::vector<cfloat>& image, const ImageGrid& grid,
                                      const FhdOptions& opt);

  // The exact off-resonance model (recon/field/field.hpp), Phi = 1:
  //   field_forward: D_m = sum_n x_n exp(-i 2 pi (k_m . x_n + f_n t_m)),
  //   field_adjoint: x_n = sum_m D_m exp(+i 2 pi (k_m . x_n + f_n t_m)).
  // The defaults run on the host (recon/field/field_exact.cpp, direct sums grouped by
  // sample time); a GPU gather with the extra phase would override them.
  virtual std::vector<cfloat> field_forward(const Points& k, const FieldData& f, const std::vector<cfloat>& image,
                                            const ImageGrid& grid);
  virtual std::vector<cfloat> field_adjoint(const Points& k, const FieldData& f, const std::vector<cfloat>& data,
                                            const ImageGrid& grid);

  // cmpMu and cmpFhD with the results kept where the backend computes: on the
  // GPU the host versions above move mu and FhD over PCIe (28 MB each way at
  // 1M samples and 128^3, about 10 ms). The defaults go through them.
  virtual VecPtr mu_resident(const std::vector<cfloat>& phi, const std::vector<cfloat>& data);
  virtual VecPtr fhd_resident(const Points& k, const BackendVector& mu, const ImageGrid& grid,
                              const FhdOptions& opt);

  // Toeplitz normal operator from Q on the doubled grid; lambda is absolute.
  virtual std::unique_ptr<NormalOperator> normal(const std::vector<cfloat>& q, const ImageGrid& grid,
                                                 double lambda) = 0;

  // ---- Q kept where the backend computes, so a plan's Q never crosses to the
  // host unless it is cached on disk or asked for. The defaults go through the
  // host versions above; the GPU overrides them to stay on the device.
  virtual VecPtr q_resident(const Points& k, const std::vector<float>& w, const ImageGrid& grid,
                            const FhdOptions& opt);
  virtual std::unique_ptr<NormalOperator> normal_resident(const BackendVector& q, const ImageGrid& grid,
                                                          double lambda);
  // The eigenvalues (FFT order, on the host) of T's smoothed circulant without
  // lambda (recon/plan/precond.hpp's circulant_eigenvalues(q, grid, 0)): --lambda auto's model.
  virtual std::vector<double> circulant_spectrum(const BackendVector& q, const ImageGrid& grid);
  // SENSE's low-resolution coil maps (recon/coils/coil_maps.hpp, maps_lowres) as
  // vectors of this backend. The default makes them on the host and uploads
  // them; the GPU makes them where they are used (at 128^3 with 8 coils the
  // host maps and their 128 MB upload took 0.3 s, five times the whole
  // single-coil reconstruction).
  virtual std::vector<VecPtr> lowres_maps(const Calibration& cal, const ImageGrid& grid, double crop);
  // The circulant preconditioner of (T + lambda R^H R) (recon/plan/precond.hpp) from Q.
  virtual std::unique_ptr<NormalOperator> preconditioner_resident(const BackendVector& q, const ImageGrid& grid,
                                                                  double lambda);

  // Gridding scatter: sum_m w_m D_m C(u - u_m) onto `over` (an oversampled grid),
  // sample m at grid coordinate u_m = k_m * (over.n / N) + over.n / 2 per axis.
  // Returns the grid (x fastest, DC at index over.n/2).
  virtual std::vector<cfloat> grid_scatter(const Points& k, const std::vector<cfloat>& weighted_data,
                                           const ImageGrid& image, const ImageGrid& over,
                                           const GridKernel& kernel) = 0;

  // In-place centered inverse DFT of a grid (DC at n/2 in, origin at n/2 out):
  // x_j = sum_k X_k exp(+i 2 pi (k - n/2)(j - n/2) / n), unnormalized.
  virtual void centered_idft(std::vector<cfloat>& grid, const ImageGrid& dims) = 0;

  // Gridding's heavy part in one call: grid_scatter onto `over`, centered_idft,
  // and the central image.nx x ny x nz window (x_i = (i - N/2)/N as for voxels).
  // This default composes the calls above on the host; the GPU keeps the
  // oversampled grid on the device and moves only the window.
  virtual std::vector<cfloat> grid_to_image(const Points& k, const std::vector<cfloat>& weighted_data,
                                            const ImageGrid& image, const ImageGrid& over, const GridKernel& kernel);

  // ---- Preconditioner and total variation (recon/plan/precond.hpp, recon/solvers/tv.hpp).
  // The defaults run on the host through download/upload (recon/device/device.cpp);
  // the GPU backend overrides them to stay on the device.
  // y = C x, C the circulant on `grid` with eigenvalues `eig` (FFT order).
  virtual std::unique_ptr<NormalOperator> circulant(const std::vector<float>& eig, const ImageGrid& grid);
  // g = D x: forward differences along each axis of length > 1, one image per
  // axis (gradient_axes(grid) * voxels elements), 0 at the far end of the axis.
  virtual void gradient(const BackendVector& x, BackendVector& g, const ImageGrid& grid);
  virtual void gradient_adjoint(const BackendVector& g, BackendVector& x, const ImageGrid& grid);  // x = D^H g
  // ADMM's z and u steps, per voxel over the axes: v = g + u,
  // z = v max(0, 1 - t / |v|) (isotropic shrinkage), u = v - z.
  virtual void tv_shrink(const BackendVector& g, BackendVector& z, BackendVector& u, const ImageGrid& grid,
                         double t);
};

// The central `image` window of a grid of size `over` whose index over.n/2 is
// the origin (as centered_idft leaves it).
std::vector<cfloat> center_window(const std::vector<cfloat>& grid, const ImageGrid& over, const ImageGrid& image);

// The CPU backend (recon/device/cpu_device.cpp). The GPU one is in cuda/device/gpu_device.hpp;
// app/ chooses between them for --device auto|cpu|gpu.
std::unique_ptr<Backend> make_cpu_backend();

}  // namespace fhd
