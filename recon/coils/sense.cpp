#include "recon/coils/sense.hpp"

#include <string>

#include "core/error.hpp"
#include "recon/ops/device_stack.hpp"

namespace fhd {
namespace {

void check_maps(const CoilData& maps, const ImageGrid& grid) {
  if (maps.empty()) throw InputError("sense", "coil maps", "0", "needs at least one coil");
  for (std::size_t c = 0; c < maps.size(); ++c)
    if (maps[c].size() != grid.voxels())
      throw InputError("sense", "coil map " + std::to_string(c) + " size", std::to_string(maps[c].size()),
                       "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
}

class CpuMaps : public MapsKernels {
 public:
  explicit CpuMaps(Device& dev) : dev_(dev) {}
  std::vector<std::shared_ptr<DeviceVector>> lowres(const Calibration& cal, const ImageGrid& grid,
                                                    double crop) override {
    return upload_maps(dev_, maps_lowres(cal, grid, crop), grid);
  }

 private:
  Device& dev_;
};

}  // namespace

std::vector<std::shared_ptr<DeviceVector>> upload_maps(Device& dev, const CoilData& maps, const ImageGrid& grid) {
  check_maps(maps, grid);
  std::vector<std::shared_ptr<DeviceVector>> out;
  for (const std::vector<cfloat>& m : maps) out.push_back(dev.upload(m));
  return out;
}

OpPtr sense_op(const OpPtr& model, const std::vector<std::shared_ptr<DeviceVector>>& maps) {
  if (maps.empty()) throw InputError("sense", "coil maps", "0", "needs at least one coil");
  std::vector<OpPtr> coils;
  for (const auto& m : maps) coils.push_back(compose({model, diag(m, model->in())}));
  return vstack(coils);
}

OpPtr sense_op_across(Device& home, const std::vector<OpPtr>& models,
                      const std::vector<std::vector<std::shared_ptr<DeviceVector>>>& maps) {
  if (models.size() != maps.size())
    throw std::invalid_argument("sense_op_across: " + std::to_string(models.size()) + " models for " +
                                std::to_string(maps.size()) + " shares of maps");
  std::vector<OpPtr> parts;
  for (std::size_t i = 0; i < models.size(); ++i) parts.push_back(sense_op(models[i], maps[i]));
  return vstack_across(home, parts);
}

std::unique_ptr<MapsKernels> make_cpu_maps(Device& dev) { return std::make_unique<CpuMaps>(dev); }

}  // namespace fhd
