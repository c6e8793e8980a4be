#pragma once
// What reading (io/ismrmrd_io.cpp) and writing (io/ismrmrd_write.cpp) ISMRMRD
// files share: the header's parameter names, libismrmrd's error handler
// silenced, and element-wise access to the acquisition header's vectors.
#if defined(FHD_HAVE_ISMRMRD)
#include <ismrmrd/ismrmrd.h>

namespace fhd {
namespace ismrmrd_shared {

constexpr const char* kUnitsParam = "fhdrecon_traj_units";
constexpr const char* kProvenancePrefix = "provenance.";

// ISMRMRD's default handler prints every error to stderr; its C++ layer also
// throws with the same text, which we turn into one InputError line.
inline void quiet_ismrmrd() {
  static const bool once = (ISMRMRD::ismrmrd_set_error_handler([](const char*, int, const char*, int, const char*) {}), true);
  (void)once;
}

}  // namespace ismrmrd_shared
}  // namespace fhd

// The header is packed (2-byte alignment): its float arrays are read and
// written element by element through the struct, never through a reference.
#define FHD_VEC3(h, member) Vec3{(h).member[0], (h).member[1], (h).member[2]}
#define FHD_SET_VEC3(h, member, v) ((h).member[0] = float((v)[0]), (h).member[1] = float((v)[1]), (h).member[2] = float((v)[2]))

#endif
