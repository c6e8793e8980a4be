#pragma once
// Shared by the binding files (python/src/*.cpp): arrays handed to Python
// without a copy (a std::vector moved into a capsule), and the module's parts.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <initializer_list>
#include <string>
#include <vector>

namespace fhd::py {

namespace nb = nanobind;

// A NumPy array that owns `v` (moved, not copied), of the given shape (C order).
template <class T>
nb::ndarray<nb::numpy, T> owned_array(std::vector<T>&& v, const std::vector<std::size_t>& shape) {
  auto* held = new std::vector<T>(std::move(v));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T>(held->data(), shape.size(), shape.data(), owner);
}

template <class T>
nb::ndarray<nb::numpy, T> owned_array(std::vector<T>&& v, std::initializer_list<std::size_t> shape) {
  return owned_array(std::move(v), std::vector<std::size_t>(shape));
}

// The module's parts, one file each.
void bind_nufft(nb::module_& m);
void bind_io(nb::module_& m);
void bind_coils(nb::module_& m);
void bind_recon(nb::module_& m);

}  // namespace fhd::py

#include "recon/problem/scan.hpp"

namespace fhd::py {

// A scan's coils as the Python side sees them (python/fhdrecon/_io.py, Scan):
// a dict of "kspace" [C, M] complex64, "traj" [M, 3] float32 (kx, ky, kz,
// cycles/FOV), "matrix" (nx, ny, nz), optional "noise" [C, Mn], "dcf" [M],
// "phi" [M], "field_map" [nz, ny, nx] (Hz), "sample_times" [M] (s), "geometry"
// (dict of fov_mm, position, read_dir, phase_dir, slice_dir, or None) and
// "provenance" (dict of str). The arrays are copied (the coils share one
// trajectory on the Python side and own one each here).
nb::dict scans_to_dict(const std::vector<Scan>& coils);
std::vector<Scan> scans_from_dict(const nb::dict& d);

}  // namespace fhd::py
