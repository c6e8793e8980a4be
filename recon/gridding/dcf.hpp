#pragma once
// Density compensation weights in absolute k-space volume per sample,
// (cycles/FOV)^d with d the number of image axes longer than 1, so that
// sum_m w_m g(k_m) approximates the integral of g over the sampled region.
// docs/gridding.md describes the methods and their measured PSF quality.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

// A trajectory the radial weights cannot take (a non-radial kind, one radius,
// samples that do not share radii). The library knows no file names: a front
// end catches it to name its own source and option (the CLI: the scan file and
// --dcf); problem() is the reason alone, kind() the trajectory kind used.
class DcfError : public InputError {
 public:
  DcfError(const std::string& kind, const std::string& problem)
      : InputError("density compensation", "radial weights for a trajectory of kind", kind,
                   problem + "; use pipe-menon"),
        kind_(kind), problem_(problem) {}
  const std::string& kind() const { return kind_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string kind_, problem_;
};

// method: "radial" (analytic shells, radial kinds only), "pipe-menon"
// (iterative, any trajectory) or "auto" (radial for radial3d, radial2d and
// stack-of-stars, else Pipe-Menon). traj_kind names the trajectory as in
// trajectory_kinds(); "" (an imported file) means: detect it from the samples.
// Throws InputError for an unknown method, DcfError for "radial" on a
// non-radial kind or a trajectory that does not look radial.
// The kinds radial weights apply to (radial3d, radial2d, stack-of-stars).
bool is_radial_kind(const std::string& kind);

std::vector<float> density_weights(const Trajectory& t, const ImageGrid& grid, const std::string& method,
                                   const std::string& traj_kind);

// The radial kind the samples themselves show, for files that do not name
// their trajectory: "radial3d" (or "radial2d" when every kz is 0) when almost
// all consecutive samples lie on one line through the origin, "stack-of-stars"
// when that holds in the kx-ky plane only and kz takes few values, else "".
// Samples all on one line (a 1D scan, one spoke) are not radial: "".
std::string detect_radial_kind(const Trajectory& t);

// The trajectory kind density_weights should treat the samples as: the named
// kind when it is one, else what detect_radial_kind sees.
std::string effective_kind(const Trajectory& t, const std::string& traj_kind);

// The analytic radial weights: samples are grouped by radius (3D |k| for
// radial3d; in-plane radius per kz partition for radial2d and stack-of-stars,
// times the partition spacing); a sample's weight is the volume of its radius
// shell (midpoints between neighbouring radii, from 0 to the largest radius)
// divided by the number of samples at that radius.
std::vector<float> radial_weights(const Trajectory& t, const std::string& traj_kind);

// The radius groups of radial_weights: sorted, each run of radii that lie
// within 1e-3 + 1e-5 r of its first (smallest) radius is one level, its start
// that radius and its count the run's length. radius_levels finds them by
// buckets where the shells stand clearly apart (radial trajectories) and by a
// sort otherwise; both are here for the test that they agree.
struct RadiusLevels {
  std::vector<double> start;
  std::vector<std::size_t> count;
};
RadiusLevels radius_levels(const std::vector<double>& radii);
RadiusLevels radius_levels_by_sort(std::vector<double> radii);
std::optional<RadiusLevels> radius_levels_by_buckets(const std::vector<double>& radii);

// Pipe & Menon (MRM 41:179, 1999): w <- w / (C * w) at the samples, with C a
// Kaiser-Bessel kernel on a grid of `cells_per_k` cells per cycle/FOV and
// `width` cells, then scaled to absolute k-volume by the kernel's integral.
struct PipeMenonOptions {
  int iterations = 15;
  double cells_per_k = 1.0;
  double width = 3.0;
};
std::vector<float> pipe_menon_weights(const Trajectory& t, const ImageGrid& grid,
                                      const PipeMenonOptions& opt = {});

}  // namespace fhd
