#include "io/figures.hpp"

#include <cstdint>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "io/text_outputs.hpp"
#include "io/figure_canvas.hpp"
#include "core/error.hpp"

#if defined(FHD_HAVE_CAIRO) && defined(FHD_HAVE_PNG)
#include <png.h>
#endif

namespace fhd {

void write_figure(const std::string& path, const Figure& f) { write_text(path, f.png()); }

#if !defined(FHD_HAVE_CAIRO)

bool figures_available() { return false; }
namespace {
[[noreturn]] void no_cairo(const char* what) {
  throw InputError(what, "format", "png", "this build has no figures (Cairo not found)");
}
}  // namespace
std::string Figure::png() const { no_cairo("figure"); }
Figure render_montage(const std::vector<MontageColumn>&, const ImageGrid&, const std::string&) { no_cairo("montage"); }
Figure render_convergence(const std::vector<double>&, const std::vector<double>&, const std::vector<RefLevel>&,
                          const std::string&) {
  no_cairo("convergence");
}
Figure render_bars(const std::vector<LabelledBar>&, const std::vector<RefLevel>&, const std::string&,
                   const std::string&) {
  no_cairo("bench chart");
}
Figure render_sheet(const std::vector<SheetTile>&, const std::string&) { no_cairo("batch sheet"); }

#else

bool figures_available() { return true; }

using namespace draw;  // the Canvas, colour maps, ticks and axes (io/figure_canvas.hpp)

namespace {

// Checked before the canvas is made: beyond the limit Cairo gives a null
// surface that finish() would read as pixels.
void check_size(int width, int height, const char* what) {
  if (width >= 1 && height >= 1 && width <= kMaxFigureSide && height <= kMaxFigureSide) return;
  throw InputError(what, "size", std::to_string(width) + "x" + std::to_string(height),
                   "more than Cairo's " + std::to_string(kMaxFigureSide) + " pixels a side");
}

// Cairo reports a failure (out of memory, a surface it could not make) in its
// status and then draws nothing; checked before the pixels are read out.
Figure finish(Canvas& cv, const char* what) {
  cairo_status_t st = cairo_status(cv.cr());
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(cairo_get_target(cv.cr()));
  if (st != CAIRO_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": not drawn (Cairo: " + cairo_status_to_string(st) + ")");
  return cv.finish();
}

// ------------------------------------------------------------ montage

struct SliceView {
  const char* name;
  char axis;   // the fixed axis
  int w, h;    // tile size in voxels
  int fixed;   // the fixed coordinate
};

std::vector<SliceView> slice_views(const ImageGrid& g) {
  if (!g.is3d()) return {{"axial", 'z', g.nx, g.ny, 0}};
  return {{"axial", 'z', g.nx, g.ny, g.nz / 2}, {"coronal", 'y', g.nx, g.nz, g.ny / 2},
          {"sagittal", 'x', g.ny, g.nz, g.nx / 2}};
}

// Voxel of tile pixel (c, r), r counted from the bottom (+y or +z up).
std::size_t voxel(const ImageGrid& g, const SliceView& v, int c, int r) {
  auto at = [&](int x, int y, int z) { return x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z); };
  if (v.axis == 'z') return at(c, r, v.fixed);
  if (v.axis == 'y') return at(c, v.fixed, r);
  return at(v.fixed, c, r);
}

template <class Map>
std::vector<Rgb> slice_pixels(const std::vector<float>& vol, const ImageGrid& g, const SliceView& v, Map map) {
  std::vector<Rgb> px(std::size_t(v.w) * v.h);
  for (int r = 0; r < v.h; ++r)
    for (int c = 0; c < v.w; ++c) px[std::size_t(v.h - 1 - r) * v.w + c] = map(vol[voxel(g, v, c, r)]);
  return px;
}

int enlargement(int n) { return std::max(1, int(std::lround(200.0 / n))); }

void color_bar(Canvas& cv, double x, double y, double h, float hi, const std::string& label) {
  const int steps = int(h);
  for (int i = 0; i < steps; ++i) cv.rect(x, y + h - 1 - i, 16, 1, heat_of(float(hi * i / (steps - 1)), hi));
  cv.line(x, y, x, y + h, kBlack);
  for (double v : ticks(0, hi * 1.0001, 4)) {
    const double ty = y + h - h * v / hi;
    cv.line(x + 16, ty, x + 21, ty, kBlack);
    cv.text(fmt_num(v), x + 24, ty - 7, 12);
  }
  cv.text(label, x - 8, y + h / 2, 12, 0, false, kBlack, true);
}

}  // namespace

#if defined(FHD_HAVE_PNG)
// The PNG through libpng at zlib level 2 with the Sub filter: figures are flat
// colours and smooth slices, which compress nearly as well as at Cairo's
// default (level 6, every filter tried per row) in a third of the time (a
// 128^3 montage took 0.27 s of a 1.4 s run). Figures are opaque: RGB only.
std::string Figure::png() const {
  std::string bytes;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  std::vector<png_byte> row(std::size_t(width) * 3);
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw InputError("figure", "png", "encode", "libpng failed");
  }
  auto sink = [](png_structp p, png_bytep data, png_size_t n) {
    static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<const char*>(data), n);
  };
  png_set_write_fn(png, &bytes, sink, nullptr);
  png_set_compression_level(png, 2);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const std::uint32_t p = argb[std::size_t(y) * width + x];
      row[3 * x] = png_byte(p >> 16);
      row[3 * x + 1] = png_byte(p >> 8);
      row[3 * x + 2] = png_byte(p);
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return bytes;
}
#else
std::string Figure::png() const {
  cairo_surface_t* s = cairo_image_surface_create_for_data(
      reinterpret_cast<unsigned char*>(const_cast<std::uint32_t*>(argb.data())), CAIRO_FORMAT_ARGB32, width, height,
      width * 4);
  std::string bytes;
  auto sink = [](void* closure, const unsigned char* data, unsigned int n) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), n);
    return CAIRO_STATUS_SUCCESS;
  };
  const cairo_status_t st = cairo_surface_write_to_png_stream(s, sink, &bytes);
  cairo_surface_destroy(s);
  if (st != CAIRO_STATUS_SUCCESS) throw InputError("figure", "png", "encode", cairo_status_to_string(st));
  return bytes;
}
#endif

namespace {

// The largest finite value (0 if none), over threads: a scan that kept its
// running maximum in memory took 35 ms of a 128^3 montage's 50.
float finite_max(const std::vector<float>& v) {
  float top = 0;
#pragma omp parallel for reduction(max : top)
  for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(v.size()); ++i)
    if (std::isfinite(v[i])) top = std::max(top, v[i]);
  return top;
}

}  // namespace

Figure render_montage(const std::vector<MontageColumn>& cols, const ImageGrid& grid, const std::string& title) {
  if (cols.empty()) throw InputError("montage", "columns", "0", "nothing to draw");
  float lo = 0, hi = 0, err_hi = 0;
  for (const MontageColumn& c : cols) {
    if (!c.volume || c.volume->size() != grid.voxels())
      throw InputError("montage", c.title + " length", std::to_string(c.volume ? c.volume->size() : 0),
                       "must equal the grid's " + std::to_string(grid.voxels()) + " voxels");
    float& top = c.error_map ? err_hi : hi;
    top = std::max(top, finite_max(*c.volume));
  }
  if (!(hi > lo)) hi = lo + 1;
  if (!(err_hi > 0)) err_hi = 1;
  const std::vector<SliceView> views = slice_views(grid);
  const int scale = enlargement(std::max({grid.nx, grid.ny, grid.nz}));
  int tile = 0;
  for (const SliceView& v : views) tile = std::max({tile, v.w * scale, v.h * scale});
  const bool has_err = std::any_of(cols.begin(), cols.end(), [](const MontageColumn& c) { return c.error_map; });
  const int gap = 8, left = 80, top = 88, col_w = std::max(tile, 150) + gap;
  const int width = left + int(cols.size()) * col_w + (has_err ? 90 : 10);
  const int height = top + int(views.size()) * (tile + gap) + 30;
  check_size(width, height, "montage");
  Canvas cv(width, height);
  cv.text(title, 12, 10, 18, 0, true);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const MontageColumn& c = cols[i];
    const double cx = left + i * col_w + tile / 2.0;
    cv.text(c.title, cx, 42, 15, 0.5, true);
    if (c.psnr) cv.text("PSNR " + fmt_num(*c.psnr, 4) + " dB", cx, 60, 12, 0.5);
    if (c.nrmse) cv.text("NRMSE " + fmt_num(*c.nrmse, 3), cx, 74, 12, 0.5);
    for (std::size_t r = 0; r < views.size(); ++r) {
      const SliceView& v = views[r];
      auto px = c.error_map ? slice_pixels(*c.volume, grid, v, [&](float x) { return heat_of(x, err_hi); })
                            : slice_pixels(*c.volume, grid, v, [&](float x) { return gray_of(x, lo, hi); });
      cv.image(px, v.w, v.h, left + i * col_w + (tile - v.w * scale) / 2.0, top + r * (tile + gap), scale);
    }
  }
  for (std::size_t r = 0; r < views.size(); ++r) {
    const SliceView& v = views[r];
    const double cy = top + r * (tile + gap) + tile / 2.0;
    cv.text(v.name, left - 10, cy - 16, 13, 1, true);
    cv.text(std::string(1, v.axis) + " = " + std::to_string(v.fixed), left - 10, cy + 2, 12, 1);
  }
  if (has_err) color_bar(cv, left + cols.size() * col_w + 14, top, tile, err_hi, "absolute error");
  cv.text("gray: 0 .. " + fmt_num(hi) + " (shared by all magnitude images)" +
              (grid.is3d() ? "; +y/+z up" : "; +y up") + (scale > 1 ? "; enlarged " + std::to_string(scale) + "x" : ""),
          12, height - 22, 12, 0, false, kGray);
  return finish(cv, "montage");
}

// ------------------------------------------------------------ line plots

namespace {

// [lo, hi] of the finite values ({0, 1} when there is none; widened by 1 when
// they are all equal, or by half their size where 1 is lost in rounding).
std::pair<double, double> range_of(const std::vector<double>& v) {
  double lo = INFINITY, hi = -INFINITY;
  for (double x : v)
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  if (!(hi >= lo)) return {0, 1};
  if (hi == lo) {
    const double pad = std::max(1.0, std::abs(lo) / 2);
    return {lo - pad, hi + pad};
  }
  return {lo, hi};
}

// The decades [floor(log10 lo), ceil(log10 hi)] of the finite positive values
// (the residuals' log axis); [-1, 0] when there is none.
std::pair<double, double> decade_range(const std::vector<double>& v) {
  std::vector<double> logs;
  for (double x : v)
    if (std::isfinite(x) && x > 0) logs.push_back(std::log10(x));
  if (logs.empty()) return {-1, 0};
  auto [lo, hi] = range_of(logs);
  lo = std::floor(lo), hi = std::ceil(hi);
  return {lo, hi > lo ? hi : lo + 1};
}

}  // namespace

Figure render_convergence(const std::vector<double>& residuals, const std::vector<double>& psnr,
                          const std::vector<RefLevel>& levels, const std::string& title) {
  const bool two = !psnr.empty();
  const int panel = 520, width = two ? 2 * panel + 60 : panel + 40, height = 470;
  Canvas cv(width, height);
  cv.text(title, 12, 10, 18, 0, true);
  const double n = std::max<double>(1, double(std::max(residuals.size(), psnr.size())) - 1);
  const auto [rlo, rhi] = decade_range(residuals);
  Axes ra{90, 90, panel - 120.0, 300, 0, n, rlo, rhi, true};
  draw_axes(cv, ra, "relative residual ||r|| / ||FhD||", "CG iteration", "relative residual");
  polyline(cv, ra, residuals, {40, 90, 170});
  if (two) {
    std::vector<double> all = psnr;
    for (const RefLevel& l : levels) all.push_back(l.value);
    auto [plo, phi] = range_of(all);
    const double pad = std::isfinite(phi - plo) ? 0.08 * (phi - plo) : 0;
    Axes pa{panel + 110.0, 90, panel - 120.0, 300, 0, n, plo - pad, phi + pad, false};
    draw_axes(cv, pa, "PSNR against the phantom", "CG iteration", "PSNR (dB)");
    // Labels right-aligned above their lines, top to bottom; levels closer than
    // a text line (the default run's gridding-kb and ceiling differ by 0.05 dB)
    // push the lower label down so no two labels overprint.
    std::vector<const RefLevel*> shown;
    for (const RefLevel& l : levels)
      if (std::isfinite(l.value)) shown.push_back(&l);
    std::stable_sort(shown.begin(), shown.end(), [](const RefLevel* a, const RefLevel* b) { return a->value > b->value; });
    double next_free = -INFINITY;  // lowest y a label may start at
    for (const RefLevel* l : shown) {
      cv.line(pa.x, pa.py(l->value), pa.x + pa.w, pa.py(l->value), l->color, 1.5, true);
      const double ty = std::max(pa.py(l->value) - 17, next_free);
      cv.text(l->label + " " + fmt_num(l->value, 4) + " dB", pa.x + pa.w - 4, ty, 12, 1, false, l->color);
      next_free = ty + 16;
    }
    polyline(cv, pa, psnr, {40, 90, 170});
    const auto best = std::max_element(psnr.begin(), psnr.end(), [](double a, double b) {
      return !std::isfinite(a) || (std::isfinite(b) && b > a);
    });
    if (best != psnr.end() && std::isfinite(*best)) {
      const double bx = pa.px(double(best - psnr.begin())), by = pa.py(*best);
      cairo_arc(cv.cr(), bx, by, 5, 0, 2 * M_PI);
      cv.color({40, 90, 170});
      cairo_fill(cv.cr());
      cv.text("best " + fmt_num(*best, 4) + " dB at iteration " + std::to_string(best - psnr.begin()), pa.x + 6,
              pa.y + pa.h + 48, 13, 0, true, {40, 90, 170});
    }
  }
  cv.text("iterative (CG) after " + std::to_string(residuals.empty() ? 0 : residuals.size() - 1) + " iterations; " +
              (residuals.empty()                     ? std::string("-")
               : std::isfinite(residuals.back()) ? "final residual " + fmt_num(residuals.back(), 3)
                                                 : std::string("final residual not a finite number")),
          ra.x, ra.y + ra.h + 48, 13, 0, true, {40, 90, 170});
  return finish(cv, "convergence plot");
}

// ------------------------------------------------------------ bars

Figure render_bars(const std::vector<LabelledBar>& bars, const std::vector<RefLevel>& ceilings,
                   const std::string& title, const std::string& unit) {
  const int row = 30, top = 90;
  Canvas probe(1, 1);
  double label_w = 60;
  for (const LabelledBar& b : bars) label_w = std::max(label_w, probe.text_width(b.label, 13));
  const double left = label_w + 24, plot_w = 720;
  const int width = int(left + plot_w + 40), height = top + row * std::max<int>(1, int(bars.size())) + 70;
  check_size(width, height, "bar chart");
  Canvas cv(width, height);
  cv.text(title, 12, 10, 18, 0, true);
  double vmax = 0;
  for (const LabelledBar& b : bars)
    if (std::isfinite(b.value)) vmax = std::max(vmax, b.value);
  for (const RefLevel& c : ceilings)
    if (std::isfinite(c.value)) vmax = std::max(vmax, c.value);
  vmax = vmax > 0 ? vmax * 1.05 : 1;
  auto px = [&](double v) { return left + plot_w * v / vmax; };
  const double bottom = top + row * std::max<int>(1, int(bars.size()));
  for (double v : ticks(0, vmax, 6)) {
    cv.line(px(v), top, px(v), bottom, kGrid);
    cv.text(fmt_num(v, 3), px(v), bottom + 6, 12, 0.5);
  }
  cv.text(unit, left + plot_w / 2, bottom + 26, 13, 0.5);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const LabelledBar& b = bars[i];
    const double y = top + i * row;
    cv.text(b.label, left - 10, y + 7, 13, 1);
    if (std::isfinite(b.value) && b.value > 0) {
      cv.rect(left, y + 4, px(b.value) - left, row - 8, b.color);
      const std::string v = fmt_num(b.value, 3);
      const bool inside = px(b.value) - left > cv.text_width(v, 12) + 12;
      cv.text(v, inside ? px(b.value) - 6 : px(b.value) + 6, y + 8, 12, inside ? 1 : 0, false,
              inside ? Rgb{255, 255, 255} : kBlack);
    } else {
      cv.text("failed / skipped", left + 6, y + 8, 12, 0, false, {180, 40, 40});
    }
  }
  cv.line(left, top, left, bottom, kBlack, 1.5);
  for (std::size_t i = 0; i < ceilings.size(); ++i) {
    const RefLevel& c = ceilings[i];
    if (!std::isfinite(c.value)) continue;
    cv.line(px(c.value), top - 8, px(c.value), bottom, c.color, 2, true);
    cv.text(c.label + " " + fmt_num(c.value, 3), std::min(px(c.value), left + plot_w - 4.0), top - 28 - 16.0 * i, 12,
            px(c.value) > left + plot_w * 0.6 ? 1 : 0, false, c.color);
  }
  return finish(cv, "bar chart");
}

// ------------------------------------------------------------ batch sheet

namespace {
// Shortened with "..." to fit `width`: a file name keeps its end, a caption its start.
std::string fit(Canvas& cv, std::string s, double width, double size, bool bold, bool keep_end) {
  if (cv.text_width(s, size, bold) <= width) return s;
  while (s.size() > 1 && cv.text_width((keep_end ? "..." + s : s + "..."), size, bold) > width)
    s = keep_end ? s.substr(1) : s.substr(0, s.size() - 1);
  return keep_end ? "..." + s : s + "...";
}

constexpr int kTile = 200, kGap = 16, kCaption = 40;  // pixels
static_assert(50 + int(kSheetMaxTiles / 5) * (kTile + kCaption + kGap) + 10 + 24 <= kMaxFigureSide,
              "the sheet's most tiles fit in a figure");

bool drawable(const SheetTile& t) {
  // A slice wider than a figure may be could not even be made a Cairo surface.
  return !t.slice.empty() && t.w > 0 && t.h > 0 && t.w <= kMaxFigureSide && t.h <= kMaxFigureSide &&
         t.slice.size() == std::size_t(t.w) * t.h;
}

void draw_slice(Canvas& cv, const SheetTile& t, double x, double y) {
  float hi = 0;
  for (float v : t.slice)
    if (std::isfinite(v)) hi = std::max(hi, v);
  if (!(hi > 0)) hi = 1;
  std::vector<Rgb> px(t.slice.size());
  for (int r = 0; r < t.h; ++r)
    for (int c = 0; c < t.w; ++c) px[std::size_t(t.h - 1 - r) * t.w + c] = gray_of(t.slice[std::size_t(r) * t.w + c], 0, hi);
  const int scale = std::max(1, kTile / std::max(t.w, t.h));
  cv.rect(x, y, kTile, kTile, kBlack);
  cv.image(px, t.w, t.h, x + (kTile - t.w * scale) / 2.0, y + (kTile - t.h * scale) / 2.0, scale);
}

// One scan's name, caption and slice (or a gray box) with its top-left at (x, y).
void draw_tile(Canvas& cv, const SheetTile& t, double x, double y) {
  cv.text(fit(cv, t.name, kTile, 13, true, true), x + kTile / 2.0, y, 13, 0.5, true);
  cv.text(fit(cv, t.caption, kTile, 12, false, false), x + kTile / 2.0, y + 18, 12, 0.5, false,
          t.failed ? Rgb{180, 40, 40} : kBlack);
  const double iy = y + kCaption;
  if (drawable(t)) {
    draw_slice(cv, t, x, iy);
    return;
  }
  cv.rect(x, iy, kTile, kTile, {235, 235, 235});
  cv.text(t.failed ? "no image (failed)" : "no image", x + kTile / 2.0, iy + kTile / 2.0 - 8, 12, 0.5, false, kGray);
}

}  // namespace

Figure render_sheet(const std::vector<SheetTile>& tiles, const std::string& title) {
  const std::size_t shown = std::min(tiles.size(), kSheetMaxTiles);
  const int per_row = std::max(1, std::min<int>(5, int(shown)));
  const int rows = std::max<int>(1, (int(shown) + per_row - 1) / per_row);
  const int note = shown < tiles.size() ? 24 : 0;
  const int width = per_row * (kTile + kGap) + kGap, height = 50 + rows * (kTile + kCaption + kGap) + 10 + note;
  check_size(width, height, "batch sheet");
  Canvas cv(width, height);
  cv.text(title, 12, 10, 18, 0, true);
  for (std::size_t i = 0; i < shown; ++i)
    draw_tile(cv, tiles[i], kGap + (i % per_row) * (kTile + kGap), 50 + (i / per_row) * (kTile + kCaption + kGap));
  if (note)
    cv.text("the first " + std::to_string(shown) + " of " + std::to_string(tiles.size()) +
                " scans are shown; the summary lists every scan",
            12, height - 30, 13, 0, false, kGray);
  return finish(cv, "batch sheet");
}

#endif

}  // namespace fhd
