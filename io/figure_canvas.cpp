// The drawing layer of the figures (io/figure_canvas.hpp).
#include "io/figure_canvas.hpp"

#if defined(FHD_HAVE_CAIRO)
#include <cstdio>

namespace fhd {
namespace draw {

namespace {

// "Nice" tick step (1, 2 or 5 times a power of ten) for about n ticks over span.
double nice_step(double span, int n) {
  const double raw = span / std::max(1, n);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

constexpr int kMaxTicks = 24;  // see ticks() in io/figure_canvas.hpp

// Decades on a log axis: every one up to 12 of them, else every k-th
// (y0, y1 are exponents; a residual of 1e-300 is a possible value).
std::vector<double> decades(double y0, double y1) {
  std::vector<double> t;
  if (!(std::isfinite(y0) && std::isfinite(y1) && y1 > y0)) return t;
  const double every = std::ceil((y1 - y0) / 12);
  for (double e = std::ceil(y0 / every) * every; e <= y1 && t.size() < std::size_t(kMaxTicks); e += every)
    t.push_back(e);
  return t;
}

}  // namespace

std::string fmt_num(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

// ------------------------------------------------------------ colour

Rgb gray_of(float v, float lo, float hi) {
  if (!std::isfinite(v)) return {0, 0, 0};
  const float t = std::clamp((v - lo) / (hi - lo), 0.0f, 1.0f);
  const auto g = static_cast<unsigned char>(std::lround(255 * t));
  return {g, g, g};
}

Rgb heat_of(float v, float hi) {
  static const Rgb stops[] = {{0, 0, 4}, {87, 16, 110}, {188, 55, 84}, {249, 142, 9}, {252, 255, 164}};
  if (!std::isfinite(v)) return stops[4];
  const double t = std::clamp(double(v) / hi, 0.0, 1.0) * 4;
  const int i = std::min(3, int(t));
  const double f = t - i;
  auto mix = [&](unsigned char a, unsigned char b) { return static_cast<unsigned char>(std::lround(a + f * (b - a))); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

std::vector<double> ticks(double lo, double hi, int n) {
  std::vector<double> t;
  if (!(std::isfinite(lo) && std::isfinite(hi) && hi > lo && std::isfinite(hi - lo))) return t;
  const double step = nice_step(hi - lo, n), first = std::ceil(lo / step);
  if (!(std::isfinite(step) && step > 0 && std::isfinite(first))) return t;
  for (int i = 0; i < kMaxTicks; ++i) {
    const double v = (first + i) * step;
    if (v > hi + 1e-9) break;
    t.push_back(v);
  }
  return t;
}

void draw_axes(Canvas& cv, const Axes& a, const std::string& title, const std::string& xlabel,
               const std::string& ylabel) {
  for (double v : ticks(a.x0, a.x1, 6)) {
    cv.line(a.px(v), a.y, a.px(v), a.y + a.h, kGrid);
    cv.text(fmt_num(v, 4), a.px(v), a.y + a.h + 6, 12, 0.5);
  }
  if (a.log_y) {
    for (double e : decades(a.y0, a.y1)) {
      const double yy = a.y + a.h - a.h * (e - a.y0) / (a.y1 - a.y0);
      cv.line(a.x, yy, a.x + a.w, yy, kGrid);
      cv.text("1e" + fmt_num(e, 4), a.x - 6, yy - 8, 12, 1);
    }
  } else {
    for (double v : ticks(a.y0, a.y1, 6)) {
      cv.line(a.x, a.py(v), a.x + a.w, a.py(v), kGrid);
      cv.text(fmt_num(v, 4), a.x - 6, a.py(v) - 8, 12, 1);
    }
  }
  cairo_rectangle(cv.cr(), a.x, a.y, a.w, a.h);
  cv.color(kBlack);
  cairo_set_line_width(cv.cr(), 1);
  cairo_stroke(cv.cr());
  cv.text(title, a.x + a.w / 2, a.y - 24, 14, 0.5, true);
  cv.text(xlabel, a.x + a.w / 2, a.y + a.h + 26, 13, 0.5);
  cv.text(ylabel, a.x - 58, a.y + a.h / 2, 13, 0, false, kBlack, true);
}

void polyline(Canvas& cv, const Axes& a, const std::vector<double>& y, Rgb c) {
  cv.color(c);
  cairo_set_line_width(cv.cr(), 2);
  bool started = false;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i]) || (a.log_y && !(y[i] > 0))) continue;
    started ? cairo_line_to(cv.cr(), a.px(double(i)), a.py(y[i])) : cairo_move_to(cv.cr(), a.px(double(i)), a.py(y[i]));
    started = true;
  }
  cairo_stroke(cv.cr());
}

}  // namespace draw
}  // namespace fhd

#endif
