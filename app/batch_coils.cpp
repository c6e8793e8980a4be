// The coils of a source, in order.
#include "app/batch.hpp"

namespace fhd::app {
std::vector<const Scan*> coil_list(const Source& src) {
  std::vector<const Scan*> coils = {&src.scan};
  for (const Scan& c : src.more_coils) coils.push_back(&c);
  return coils;
}

}  // namespace fhd::app
