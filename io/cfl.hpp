#pragma once
// BART's .cfl/.hdr pair (docs/formats.md, "BART"; docs/conventions.md, "Interop"):
//   NAME.hdr  text, "# Dimensions" then 16 integers (dimension 0 first)
//   NAME.cfl  raw little-endian complex64, dimension 0 fastest
// Scaling at this boundary: BART's nufft is unitary (1/sqrt(Ntot)); fhdrecon's
// data is the plain sum (docs/conventions.md). k-space read from BART is multiplied
// by sqrt(Nx*Ny*Nz); k-space written for BART is divided by it. Trajectories
// (cycles/FOV in both) and images are not scaled.
#include <array>
#include <string>
#include <vector>

#include "io/scan_checks.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

constexpr int kCflDims = 16;
using CflDims = std::array<long, kCflDims>;

struct CflArray {
  CflDims dims{};  // all 16, trailing 1s
  std::vector<cfloat> data;
};

// "x", "x.cfl" and "x.hdr" all name the pair x.cfl/x.hdr.
std::string cfl_base(const std::string& name);

// Throws InputError naming the .hdr/.cfl file for: missing file, no "# Dimensions"
// line, a dimension < 1, more than 16 dims, or a .cfl size that does not match.
// Sizes are checked before allocating: a dimension product that overflows, or
// that the .cfl's real size does not match, or more than memory holds, is refused.
CflArray read_cfl(const std::string& name);
// The header's dims after the same checks, without reading the values.
CflDims read_cfl_dims(const std::string& name);

// Writes both files atomically (each to a temporary, then .cfl and .hdr renamed
// in that order, so a .hdr never points at a missing or partial .cfl).
// `dims` may be shorter than 16; the product must equal data.size().
void write_cfl(const std::string& name, const std::vector<long>& dims, const std::vector<cfloat>& data);

// sqrt(Nx*Ny*Nz): fhdrecon k-space = BART k-space * bart_kspace_scale(grid).
double bart_kspace_scale(const ImageGrid& grid);

// The grid for a BART trajectory: matrix per axis when matrix > 0, else the
// smallest even N per axis whose band [-N/2, N/2] holds every sample; one
// voxel on z when every |kz| <= 0.5 (a 2D trajectory's float noise). The
// CLI's rule for --matrix, and Python's read_scan's for an int or None.
ImageGrid bart_grid(const std::string& traj_name, int matrix);

// Trajectory [3, readout, spokes] + k-space [1, readout, spokes, coils] -> one
// Scan per coil (same trajectory, samples ordered readout fastest:
// m = r + readout * s). The trajectory's imaginary part is ignored, as BART does.
// Validated like a scan file (finite, in band |k| <= N/2).
// `check`, if given, is called with the grid, samples and coils before the k-space is read.
std::vector<Scan> read_bart_scan(const std::string& traj_name, const std::string& ksp_name, const ImageGrid& grid,
                                 const SizeCheck& check = {});

// Writes coils[0]'s trajectory and every coil's data (all coils must share the
// trajectory's length). readout = samples per spoke; 0 writes one spoke of M.
void write_bart_scan(const std::string& traj_name, const std::string& ksp_name, const std::vector<Scan>& coils,
                     int readout = 0);

// Image [Nx, Ny, Nz] (no scaling). read_bart_image rejects any other dimension > 1
// (coils, maps, time) and stores the grid it found in *found.
void write_bart_image(const std::string& name, const std::vector<cfloat>& image, const ImageGrid& grid);
std::vector<cfloat> read_bart_image(const std::string& name, ImageGrid* found);

}  // namespace fhd
