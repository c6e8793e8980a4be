#pragma once
// Proximal operators (SigPy's prox, BART's prox.c): for f and a step t,
//   prox_{t f}(v) = argmin_z t f(z) + 1/2 ||z - v||^2.
// The solvers (recon/solvers/admm.hpp, fista.hpp, pdhg.hpp) take them with an
// operator G: TV is (finite differences D, group_l1), l1-wavelet is
// (wavelet W, l1), l2 is (D, l2_squared) or solved in closed form by CG.
#include <memory>
#include <string>

#include "recon/ops/linop.hpp"

namespace fhd {

class Prox {
 public:
  virtual ~Prox() = default;
  // out = prox_{t f}(v); out may be v.
  virtual void apply(double t, const DeviceVector& v, DeviceVector& out) = 0;
  // f(v), for objectives and tests (through the host: not on a hot path).
  virtual double value(const DeviceVector& v) = 0;
  virtual std::string name() const = 0;
};
using ProxPtr = std::shared_ptr<Prox>;

// f(z) = 1/2 ||z - y||^2 (y empty: 0): prox = (v + t y) / (1 + t).
ProxPtr l2_squared_prox(Device& dev, std::shared_ptr<const DeviceVector> y = nullptr);
// f(z) = sum_i |z_i| (complex magnitude): soft thresholding, z_i = v_i max(0, 1 - t / |v_i|).
ProxPtr l1_prox(Device& dev);
// f(z) = sum_i ||(z_{k n + i})_{k < parts}||_2: z holds `parts` images of n
// values (D x's axes), shrunk together per voxel (isotropic TV's norm).
ProxPtr group_l1_prox(Device& dev, std::size_t n, int parts);
// f(z) = ||W z||_1 for an orthonormal W (the wavelet): prox = W^H soft(W v, t), exactly.
ProxPtr l1_wavelet_prox(OpPtr w);
// f(z) = TV(z) = ||D z||_{2,1} on `grid`: the exact prox has no closed form; it
// is computed by `iters` steps of Beck and Teboulle's fast gradient projection
// on the dual (IEEE TIP 18:2419, 2009).
ProxPtr tv_prox(Device& dev, const ImageGrid& grid, int iters = 50);

// The kernels proxes need on a device.
class ProxKernels {
 public:
  virtual ~ProxKernels() = default;
  virtual void soft_threshold(const DeviceVector& v, double t, DeviceVector& out) = 0;
  // Per i < n the vector (v_{k n + i})_{k < parts} times max(0, 1 - t / its 2-norm).
  virtual void group_soft_threshold(const DeviceVector& v, double t, std::size_t n, int parts,
                                    DeviceVector& out) = 0;
};
std::unique_ptr<ProxKernels> make_cpu_prox(Device& dev);

}  // namespace fhd
