#pragma once
// Figures people read without the JSON (Cairo): the reconstruction montage,
// the CG convergence plot, the bench ladder and the batch overview sheet.
// Each render_* returns the picture plus a record of every text drawn (its
// string and box), so tests can check that titles and numbers are there; each
// write_* renders and writes a PNG atomically (io/atomic_file.hpp). Without
// Cairo (FHD_HAVE_CAIRO undefined) render_* throws InputError naming the figure.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/bar_chart.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

struct TextBox {
  std::string text;
  double x = 0, y = 0, w = 0, h = 0;  // device pixels, y down
};

struct Figure {
  int width = 0, height = 0;
  std::vector<std::uint32_t> argb;  // width * height, row-major, Cairo's ARGB32 (premultiplied)
  std::vector<TextBox> texts;
  std::string png() const;  // the PNG file's bytes
};

bool figures_available();  // built with Cairo

// One column of the montage: a magnitude volume and its title; `psnr`/`nrmse`
// print under the title when known. `error_map` columns use a colour scale
// (0 .. their maximum) drawn beside them; the others share one gray window.
struct MontageColumn {
  std::string title;
  const std::vector<float>* volume;  // grid.voxels(), x fastest; not owned (no 8 MB copy per column)
  std::optional<double> psnr, nrmse;
  bool error_map = false;
};

// Rows = central slices (axial z = nz/2, coronal y = ny/2, sagittal x = nx/2;
// one row in 2D), columns = methods. Small matrices are enlarged by an integer
// factor (nearest neighbour) to about 200 pixels per tile.
Figure render_montage(const std::vector<MontageColumn>& cols, const ImageGrid& grid, const std::string& title);

// A labelled curve on the convergence plot's PSNR panel.
struct RefLevel {
  std::string label;
  double value = 0;
  Rgb color{200, 40, 40};
};

// Left: relative residual per iteration (log scale). Right, when psnr is not
// empty: PSNR per iteration with `levels` as horizontal lines and the best
// iteration marked (semi-convergence).
Figure render_convergence(const std::vector<double>& residuals, const std::vector<double>& psnr,
                          const std::vector<RefLevel>& levels, const std::string& title);

// Horizontal bars, one labelled row each with its value printed; `ceilings`
// as labelled vertical lines. Values <= 0 or not finite draw "failed" instead of a bar.
struct LabelledBar {
  std::string label;
  double value = 0;
  Rgb color{70, 110, 170};
};
Figure render_bars(const std::vector<LabelledBar>& bars, const std::vector<RefLevel>& ceilings,
                   const std::string& title, const std::string& unit);

// Cairo's image surfaces end at this many pixels a side. A figure that would
// be larger is refused with an InputError naming it; a failure Cairo reports
// while drawing is a runtime_error. Neither is ever a crash (a batch of 636
// scans drew a sheet 32828 pixels high on a null surface and segfaulted).
constexpr int kMaxFigureSide = 32767;

// The batch overview: one tile per scan (its central axial slice) with its
// name and caption (PSNR or status); a scan without an image shows its
// caption in a gray box. At most kSheetMaxTiles tiles, the first ones (100
// rows of 5, 25,660 pixels high), and a note saying how many were left out:
// the summary lists every scan.
constexpr std::size_t kSheetMaxTiles = 500;
struct SheetTile {
  std::string name, caption;
  std::vector<float> slice;  // w * h, x fastest, y up; empty = no image
  int w = 0, h = 0;
  bool failed = false;
};
Figure render_sheet(const std::vector<SheetTile>& tiles, const std::string& title);

void write_figure(const std::string& path, const Figure& f);

}  // namespace fhd
