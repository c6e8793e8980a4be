#pragma once
// The drawing layer the figure builders of io/figures.cpp share (Cairo builds
// only): a Canvas that records where its texts go, the colour maps, the tick
// values and the axes of a line plot.
#if defined(FHD_HAVE_CAIRO)
#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/utf8.hpp"
#include "io/figures.hpp"

namespace fhd {
namespace draw {

constexpr double kFont = 14;  // body text, pixels

class Canvas {
 public:
  Canvas(int w, int h) {
    fig_.width = w;
    fig_.height = h;
    s_ = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    cr_ = cairo_create(s_);
    cairo_set_source_rgb(cr_, 1, 1, 1);
    cairo_paint(cr_);
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  }
  ~Canvas() {
    cairo_destroy(cr_);
    cairo_surface_destroy(s_);
  }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;
  cairo_t* cr() { return cr_; }

  void color(Rgb c) { cairo_set_source_rgb(cr_, c.r / 255.0, c.g / 255.0, c.b / 255.0); }
  void rect(double x, double y, double w, double h, Rgb c) {
    color(c);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_fill(cr_);
  }
  void line(double x0, double y0, double x1, double y1, Rgb c, double width = 1, bool dashed = false) {
    color(c);
    cairo_set_line_width(cr_, width);
    const double dash[] = {6, 4};
    cairo_set_dash(cr_, dash, dashed ? 2 : 0, 0);
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    cairo_stroke(cr_);
    cairo_set_dash(cr_, dash, 0, 0);
  }
  // Text with its top-left (align 0), centre (0.5) or right end (1) at x; y is the top.
  double text(const std::string& raw, double x, double y, double size = kFont, double align = 0, bool bold = false,
              Rgb c = {0, 0, 0}, bool vertical = false) {
    // Cairo's text must be UTF-8 (core/utf8.hpp): one Latin-1 file name in
    // overview.png's captions put the context in an error state (nothing drawn
    // after it) and leaked (LeakSanitizer, the sanitized CI run).
    const std::string s = valid_utf8(raw);
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, s.c_str(), &e);
    cairo_font_extents_t fe;
    cairo_font_extents(cr_, &fe);
    color(c);
    cairo_save(cr_);
    if (vertical) {  // reads bottom to top, centred on (x, y)
      cairo_translate(cr_, x, y);
      cairo_rotate(cr_, -M_PI / 2);
      cairo_move_to(cr_, -e.x_advance / 2, fe.ascent / 2);
      fig_.texts.push_back({s, x - fe.height / 2, y - e.x_advance / 2, fe.height, e.x_advance});
    } else {
      const double x0 = x - align * e.x_advance;
      cairo_move_to(cr_, x0, y + fe.ascent);
      fig_.texts.push_back({s, x0, y, e.x_advance, fe.height});
    }
    cairo_show_text(cr_, s.c_str());
    cairo_restore(cr_);
    return e.x_advance;
  }
  double text_width(const std::string& s, double size = kFont, bool bold = false) {
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, valid_utf8(s).c_str(), &e);
    return e.x_advance;
  }
  // An RGB image (w x h, row 0 at the top) enlarged `scale` times, nearest neighbour.
  void image(const std::vector<Rgb>& px, int w, int h, double x, double y, int scale) {
    cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    cairo_surface_flush(img);
    unsigned char* d = cairo_image_surface_get_data(img);
    const int stride = cairo_image_surface_get_stride(img);
    for (int r = 0; r < h; ++r)
      for (int c = 0; c < w; ++c) {
        const Rgb p = px[std::size_t(r) * w + c];
        reinterpret_cast<std::uint32_t*>(d + std::size_t(r) * stride)[c] =
            (std::uint32_t(p.r) << 16) | (std::uint32_t(p.g) << 8) | p.b;
      }
    cairo_surface_mark_dirty(img);
    cairo_save(cr_);
    cairo_translate(cr_, x, y);
    cairo_scale(cr_, scale, scale);
    cairo_set_source_surface(cr_, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr_), CAIRO_FILTER_NEAREST);
    cairo_paint(cr_);
    cairo_restore(cr_);
    cairo_surface_destroy(img);
  }
  Figure finish() {
    cairo_surface_flush(s_);
    const unsigned char* d = cairo_image_surface_get_data(s_);
    const int stride = cairo_image_surface_get_stride(s_);
    fig_.argb.resize(std::size_t(fig_.width) * fig_.height);
    for (int r = 0; r < fig_.height; ++r)
      std::copy_n(reinterpret_cast<const std::uint32_t*>(d + std::size_t(r) * stride), fig_.width,
                  fig_.argb.begin() + std::size_t(r) * fig_.width);
    return std::move(fig_);
  }

 private:
  cairo_surface_t* s_;
  cairo_t* cr_;
  Figure fig_;
};

const Rgb kBlack{0, 0, 0}, kGray{110, 110, 110}, kGrid{225, 225, 225};

// v printed with `digits` significant digits (%g).
std::string fmt_num(double v, int digits = 3);

// Gray from black at lo to white at hi (black where v is not finite).
Rgb gray_of(float v, float lo, float hi);
// A perceptually ordered dark-to-bright map (black, purple, red, orange, pale
// yellow, like matplotlib's "inferno"), so a larger error is always brighter.
Rgb heat_of(float v, float hi);

// Tick values (multiples of a nice step) in [lo, hi], about n of them and never
// more than kMaxTicks; none when the range is not finite and positive. Every
// axis loop runs over this list, so no data (NaN, Inf, a span of 1e300, or one
// that rounds to nothing next to its values) can make a loop run without bound.
std::vector<double> ticks(double lo, double hi, int n);

// ------------------------------------------------------------ line plots

struct Axes {
  double x, y, w, h;      // plot area in pixels
  double x0, x1, y0, y1;  // data range
  bool log_y = false;
  double px(double v) const { return x + w * (v - x0) / (x1 - x0); }
  double py(double v) const {
    const double t = log_y ? (std::log10(v) - y0) / (y1 - y0) : (v - y0) / (y1 - y0);
    return y + h - h * t;
  }
};

// Grid lines, tick labels (decades on a log axis), frame, title and labels.
void draw_axes(Canvas& cv, const Axes& a, const std::string& title, const std::string& xlabel,
               const std::string& ylabel);
// y[i] at x = i, joined; values that are not finite (or not positive on a log axis) are skipped.
void polyline(Canvas& cv, const Axes& a, const std::vector<double>& y, Rgb c);

}  // namespace draw
}  // namespace fhd

#endif
