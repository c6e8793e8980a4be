#pragma once
// A label-free PNG bar chart (libpng): one bar per value in order, horizontal
// reference lines, light grid lines every `grid_step` units from 0. Labels
// live in the accompanying JSON/table (bench writes both); the picture is for
// seeing the ladder's shape and where it sits against its ceilings.
#include <string>
#include <vector>

namespace fhd {

struct Rgb {
  unsigned char r = 0, g = 0, b = 0;
};

struct ChartBar {
  double value = 0;  // <= 0 draws nothing (a failed or skipped entry)
  Rgb color{70, 110, 170};
};

struct ChartLine {
  double value = 0;
  Rgb color{200, 40, 40};
};

struct ChartSpec {
  int width = 900, height = 450;
  double grid_step = 1e12;  // light horizontal lines at multiples of this
};

// Writes atomically (io/atomic_file.hpp). Throws InputError naming the path
// on failure, and when the build has no libpng (FHD_HAVE_PNG undefined).
void write_bar_chart_png(const std::string& path, const std::vector<ChartBar>& bars,
                         const std::vector<ChartLine>& lines, const ChartSpec& spec = {});

}  // namespace fhd
