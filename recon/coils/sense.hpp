#pragma once
// SENSE (Pruessmann et al., MRM 42:952, 1999) by composition: one image x seen
// by C coils with sensitivities S_c through one trajectory,
//   E = [A S_0; A S_1; ...]  (vstack of compose(A, diag(S_c))),
// so E^H y = sum_c conj(S_c) A^H y_c and E^H E = sum_c S_c^H T S_c, with
// A the plan's model and T its Toeplitz operator: one Q for all coils, the
// coils' FFT pairs batched in one operator (GPU: up to 8 doubled grids per
// batched cuFFT pair; the CPU keeps one pair per coil; docs/coils.md). Any model works in A's place: the
// field models give SENSE with off-resonance compensation.
#include <memory>
#include <vector>

#include "recon/coils/coil_maps.hpp"
#include "recon/ops/linop.hpp"
#include "recon/plan/plan.hpp"

namespace fhd {

// The maps on `dev`, once for E^H y and every iteration. maps: C vectors of
// grid.voxels() values each (InputError otherwise).
std::vector<std::shared_ptr<DeviceVector>> upload_maps(Device& dev, const CoilData& maps, const ImageGrid& grid);

// E for the model A (image -> one coil's samples) and maps on A's device.
OpPtr sense_op(const OpPtr& model, const std::vector<std::shared_ptr<DeviceVector>>& maps);

// E split by coils across devices (--gpus): part i is sense_op(models[i],
// maps[i]), a model and its coils' maps on one device, and the parts are
// stacked with vstack_across(home, ...): the coils' samples one after another
// as sense_op's, E^H y and E^H E x (the sum of each part's S_c^H T S_c, with
// the T of its own device) reduced on home, where CG keeps its vectors.
OpPtr sense_op_across(Device& home, const std::vector<OpPtr>& models,
                      const std::vector<std::vector<std::shared_ptr<DeviceVector>>>& maps);

// E with its adjoint by sample chunks across devices: E x and E^H E are
// `by_coils`'s (sense_op_across: the CG's work, each device its coils' T),
// E^H y sums part i = sense_op(chunk_models[i], maps[i]) over the devices:
// every coil's model over chunk i of the samples, with every coil's map on
// its device, so each device makes all coils' type 1s over its points in one
// batch (that batch's cost is mostly per point: split by coils, it halved
// little). The chunks' rows interleave with the coils' (vstack_blocks_across).
OpPtr sense_adjoint_by_chunks(const OpPtr& by_coils, Device& home, const std::vector<OpPtr>& chunk_models,
                              const std::vector<std::vector<std::shared_ptr<DeviceVector>>>& maps);

// SENSE's low-resolution maps on a device (recon/coils/coil_maps.hpp's
// maps_lowres): the CPU makes them on the host; the GPU where SENSE uses them
// (at 128^3 with 8 coils the host maps and their 128 MB upload took 0.3 s).
class MapsKernels {
 public:
  virtual ~MapsKernels() = default;
  virtual std::vector<std::shared_ptr<DeviceVector>> lowres(const Calibration& cal, const ImageGrid& grid,
                                                            double crop) = 0;
};
std::unique_ptr<MapsKernels> make_cpu_maps(Device& dev);

}  // namespace fhd
