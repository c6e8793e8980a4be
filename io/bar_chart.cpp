#include "io/bar_chart.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "io/atomic_file.hpp"
#include "core/error.hpp"

#ifdef FHD_HAVE_PNG
#include <png.h>
#endif

namespace fhd {
namespace {

struct Canvas {
  int w, h;
  std::vector<unsigned char> rgb;
  Canvas(int w_, int h_) : w(w_), h(h_), rgb(std::size_t(w_) * h_ * 3, 255) {}
  void fill(int x0, int y0, int x1, int y1, Rgb c) {
    for (int y = std::max(0, y0); y < std::min(h, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(w, x1); ++x) {
        unsigned char* p = &rgb[(std::size_t(y) * w + x) * 3];
        p[0] = c.r, p[1] = c.g, p[2] = c.b;
      }
  }
};

// Draws into a canvas: bars evenly spaced, 0 at the bottom margin.
Canvas draw(const std::vector<ChartBar>& bars, const std::vector<ChartLine>& lines, const ChartSpec& s) {
  Canvas c(s.width, s.height);
  const int margin = 20, base = s.height - margin, top = margin;
  double vmax = 0;
  for (const auto& b : bars) vmax = std::max(vmax, b.value);
  for (const auto& l : lines) vmax = std::max(vmax, l.value);
  vmax = vmax > 0 ? vmax * 1.08 : 1.0;
  auto ypix = [&](double v) { return base - int((base - top) * (v / vmax)); };
  if (s.grid_step > 0 && vmax / s.grid_step < 200)
    for (double v = s.grid_step; v < vmax; v += s.grid_step) c.fill(margin, ypix(v), s.width - margin, ypix(v) + 1, {225, 225, 225});
  const int n = std::max<int>(1, int(bars.size()));
  const double slot = double(s.width - 2 * margin) / n;
  for (int i = 0; i < int(bars.size()); ++i) {
    if (bars[i].value <= 0) continue;
    const int x0 = margin + int(i * slot + slot * 0.15), x1 = margin + int((i + 1) * slot - slot * 0.15);
    c.fill(x0, ypix(bars[i].value), x1, base, bars[i].color);
  }
  for (const auto& l : lines) c.fill(margin, ypix(l.value) - 1, s.width - margin, ypix(l.value) + 2, l.color);
  c.fill(margin, base, s.width - margin, base + 2, {0, 0, 0});  // the zero axis
  return c;
}

}  // namespace

void write_bar_chart_png(const std::string& path, const std::vector<ChartBar>& bars,
                         const std::vector<ChartLine>& lines, const ChartSpec& spec) {
#ifndef FHD_HAVE_PNG
  throw InputError("--png", "path", path, "this build has no libpng");
#else
  const Canvas c = draw(bars, lines, spec);
  make_parent_dir(path);
  AtomicOutput out(path);
  FILE* f = std::fopen(out.tmp().c_str(), "wb");
  if (!f) throw InputError("--png", "path", path, "cannot open for writing");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    throw InputError("--png", "path", path, "libpng failed to write");
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, c.w, c.h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < c.h; ++y) png_write_row(png, const_cast<png_bytep>(&c.rgb[std::size_t(y) * c.w * 3]));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fclose(f) != 0) throw InputError("--png", "path", path, "cannot finish writing");
  out.commit();
#endif
}

}  // namespace fhd
