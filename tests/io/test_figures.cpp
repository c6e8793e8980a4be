// Figures (io/figures.hpp): each is rendered, its size checked, its titles and
// numbers found in the text record, and ink found inside every text box.
#include <cmath>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "core/utf8.hpp"
#include "io/figure_canvas.hpp"
#include "io/figures.hpp"
#include "io_test_util.hpp"

using namespace fhd;

namespace {

bool has_text(const Figure& f, const std::string& s) {
  for (const TextBox& t : f.texts)
    if (t.text.find(s) != std::string::npos) return true;
  return false;
}

// Pixels inside the box that are not the background (white): glyphs were drawn.
int ink(const Figure& f, const TextBox& t) {
  int n = 0;
  for (int y = std::max(0, int(t.y)); y < std::min(f.height, int(t.y + t.h)); ++y)
    for (int x = std::max(0, int(t.x)); x < std::min(f.width, int(t.x + t.w)); ++x)
      n += (f.argb[std::size_t(y) * f.width + x] & 0xffffff) != 0xffffff;
  return n;
}

void require_readable(const Figure& f) {
  REQUIRE(f.argb.size() == std::size_t(f.width) * f.height);
  REQUIRE(!f.texts.empty());
  for (const TextBox& t : f.texts) {
    INFO(t.text);
    if (!t.text.empty()) CHECK(ink(f, t) > 0);
  }
}

std::vector<float> ball(const ImageGrid& g, float r) {
  std::vector<float> v(g.voxels());
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const double d = std::hypot(x - g.nx / 2.0, y - g.ny / 2.0, g.is3d() ? z - g.nz / 2.0 : 0.0);
        v[x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z)] = d < r ? 1.0f : 0.0f;
      }
  return v;
}

}  // namespace

TEST_CASE("the montage shows every method's slices, titles, PSNR/NRMSE and an error scale", "[figures]") {
  if (!figures_available()) FHD_SKIP("built without Cairo");
  const ImageGrid g{16, 16, 16};
  std::vector<float> err(g.voxels(), 0.0f);
  err[0] = 0.25f;
  const std::vector<float> phantom = ball(g, 5), image = ball(g, 4.5f);
  const Figure f = render_montage({{"phantom", &phantom, {}, {}, false},
                                   {"iterative", &image, 31.25, 0.0842, false},
                                   {"|iterative - phantom|", &err, {}, {}, true}},
                                  g, "test montage");
  require_readable(f);
  // 16 voxels -> 13x (208 px tiles): three slice rows, three columns plus the colour bar.
  CHECK(f.height >= 3 * 208);
  CHECK(f.width >= 3 * 208 + 80);
  CHECK(f.width <= 1920);
  for (const char* s : {"test montage", "phantom", "iterative", "PSNR 31.25 dB", "NRMSE 0.0842", "axial", "coronal",
                        "sagittal", "absolute error", "0.2"}) {
    INFO(s);
    CHECK(has_text(f, s));
  }
  // The enlarged tiles are nearest-neighbour: a 13x13 block of one value.
  CHECK(f.width < 2000);
}

TEST_CASE("a 2D montage has one row and is enlarged for the screen", "[figures]") {
  if (!figures_available()) FHD_SKIP("built without Cairo");
  const ImageGrid g{32, 32, 1};
  const std::vector<float> image = ball(g, 10);
  const Figure f = render_montage({{"iterative", &image, 28.0, 0.1, false}}, g, "2d");
  require_readable(f);
  CHECK(has_text(f, "axial"));
  CHECK(!has_text(f, "coronal"));
  CHECK(f.height >= 192);  // 32 -> 6x
}

TEST_CASE("the convergence plot names the residual, the PSNR peak and the reference levels", "[figures]") {
  if (!figures_available()) FHD_SKIP("built without Cairo");
  std::vector<double> res, psnr;
  for (int i = 0; i <= 20; ++i) {
    res.push_back(std::pow(0.7, i));
    psnr.push_back(30 - 0.05 * (i - 8) * (i - 8));  // peaks at iteration 8
  }
  const Figure f = render_convergence(res, psnr, {{"gridding-kb", 24.5, {200, 110, 20}}, {"ceiling", 33.0}}, "conv");
  require_readable(f);
  for (const char* s : {"relative residual", "PSNR (dB)", "best 30 dB at iteration 8", "gridding-kb 24.5 dB",
                        "ceiling 33 dB", "CG iteration"})
    CHECK(has_text(f, s));
  const Figure one = render_convergence(res, {}, {}, "no phantom");
  require_readable(one);
  CHECK(one.width < f.width);
  CHECK(!has_text(one, "PSNR"));
}

TEST_CASE("reference levels closer than a text line get labels that do not overprint", "[figures]") {
  // The default run (shepp2d 128^2): gridding-kb 25.04 dB, ceiling 25.09 dB.
  if (!figures_available()) FHD_SKIP("built without Cairo");
  std::vector<double> res, psnr;
  for (int i = 0; i <= 16; ++i) {
    res.push_back(std::pow(0.5, i));
    psnr.push_back(i < 3 ? 12.0 + 4 * i : 25.04);
  }
  const Figure f = render_convergence(
      res, psnr, {{"gridding-kb", 25.04, {200, 110, 20}}, {"band-limited ceiling", 25.09, {40, 140, 60}}}, "conv");
  require_readable(f);
  const TextBox* kb = nullptr;
  const TextBox* ceil = nullptr;
  for (const TextBox& t : f.texts) {
    if (t.text.rfind("gridding-kb ", 0) == 0) kb = &t;
    if (t.text.rfind("band-limited ceiling ", 0) == 0) ceil = &t;
  }
  REQUIRE(kb != nullptr);
  REQUIRE(ceil != nullptr);
  const bool apart = kb->y >= ceil->y + ceil->h || ceil->y >= kb->y + kb->h || kb->x >= ceil->x + ceil->w ||
                     ceil->x >= kb->x + kb->w;
  INFO("kb at y " << kb->y << ", ceiling at y " << ceil->y << ", height " << kb->h);
  CHECK(apart);
}

TEST_CASE("the bench ladder labels every bar with its value and names the ceilings", "[figures]") {
  if (!figures_available()) FHD_SKIP("built without Cairo");
  const Figure f = render_bars({{"naive", 1.5e11}, {"coarsened", 4.2e11}, {"broken", 0}},
                               {{"SFU ceiling", 6e11}, {"FP32 ceiling", 9e11}}, "ladder", "pairs per second");
  require_readable(f);
  for (const char* s : {"naive", "coarsened", "1.5e+11", "4.2e+11", "failed", "SFU ceiling 6e+11",
                        "FP32 ceiling 9e+11", "pairs per second"})
    CHECK(has_text(f, s));
}

TEST_CASE("the batch sheet shows one captioned tile per scan, failed ones marked", "[figures]") {
  if (!figures_available()) FHD_SKIP("built without Cairo");
  const ImageGrid g{24, 24, 1};
  const Figure f = render_sheet({{"a.h5", "PSNR 30.1 dB", ball(g, 8), 24, 24, false},
                                 {"b.mrd", "failed: bad header", {}, 0, 0, true}},
                                "batch");
  require_readable(f);
  for (const char* s : {"a.h5", "b.mrd", "PSNR 30.1 dB", "failed: bad header", "no image (failed)"}) CHECK(has_text(f, s));
}

TEST_CASE("the batch sheet stays within Cairo's size for any number of scans", "[figures][hostile]") {
  // 636 scans drew a sheet 32828 pixels high: Cairo made a null surface and
  // reading its pixels segfaulted at the end of every such batch.
  if (!figures_available()) FHD_SKIP("built without Cairo");
  std::vector<SheetTile> tiles(636);
  for (std::size_t i = 0; i < tiles.size(); ++i) tiles[i] = {"n" + std::to_string(i + 1) + ".h5", "ok", {}, 0, 0, false};
  const Figure f = render_sheet(tiles, "batch");
  CHECK(f.height <= kMaxFigureSide);
  REQUIRE(f.argb.size() == std::size_t(f.width) * f.height);
  CHECK(has_text(f, "the first 500 of 636 scans are shown"));
  CHECK(has_text(f, "n500.h5"));
  CHECK(!has_text(f, "n501.h5"));
  CHECK(!has_text(render_sheet({tiles[0]}, "batch"), "are shown"));  // a sheet with room says nothing
}

TEST_CASE("a figure beyond Cairo's size is an error, never a null surface read", "[figures][hostile]") {
  if (!figures_available()) FHD_SKIP("built without Cairo");
  const ImageGrid wide{40000, 2, 1};
  const std::vector<float> v(wide.voxels(), 1.0f);
  CHECK_THROWS_WITH(render_montage({{"iterative", &v, {}, {}, false}}, wide, "t"),
                    Catch::Contains("montage: size = ") && Catch::Contains("more than Cairo's 32767 pixels a side"));
  CHECK_THROWS_AS(render_bars(std::vector<LabelledBar>(1200, {"x", 1.0}), {}, "t", "u"), InputError);
  // A slice no Cairo surface can hold is a tile without an image.
  const Figure f = render_sheet({{"w.h5", "ok", std::vector<float>(40000, 1.0f), 40000, 1, false}}, "batch");
  CHECK(has_text(f, "no image"));
}

TEST_CASE("write_figure writes a PNG of the figure's size, atomically", "[figures]") {
  if (!figures_available()) FHD_SKIP("built without Cairo");
  fhd::test::TempDir dir;
  const Figure f = render_bars({{"x", 1.0}}, {}, "t", "u");
  write_figure(dir.file("b.png"), f);
  std::ifstream in(dir.file("b.png"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 24);
  CHECK(bytes.compare(1, 3, "PNG") == 0);
  auto be32 = [&](int at) {
    return (unsigned(uint8_t(bytes[at])) << 24) | (unsigned(uint8_t(bytes[at + 1])) << 16) |
           (unsigned(uint8_t(bytes[at + 2])) << 8) | unsigned(uint8_t(bytes[at + 3]));
  };
  CHECK(be32(16) == unsigned(f.width));
  CHECK(be32(20) == unsigned(f.height));
  CHECK(dir.entries() == 1);
}

TEST_CASE("figures are drawn from finite data only, with a bounded number of ticks", "[figures][hostile]") {
  // Each of these made an axis loop run for ever (issue 28): the residual of CG
  // on all-zero k-space is 0/0, one of zero iterations may be 0, a sample of
  // 1e36 overflows to Inf, and a range whose width rounds away next to its
  // values (1e36 +- 1) made a tick step of 0.
  if (!figures_available()) FHD_SKIP("built without Cairo");
  const double nan = std::nan(""), inf = INFINITY;
  auto no_bad_numbers = [](const Figure& f) {
    CHECK(f.texts.size() < 120);
    for (const TextBox& t : f.texts) {
      INFO(t.text);
      CHECK(t.text.find("nan") == std::string::npos);
      CHECK(t.text.find("inf") == std::string::npos);
    }
  };
  const std::vector<std::vector<double>> residuals = {{nan}, {0.0}, {}, {inf, nan}, {1e-300, 1e300}, {1.0}};
  const std::vector<std::vector<double>> psnrs = {{}, {1e36, 1e36}, {inf, -inf, nan}, {-1e308, 1e308}, {30.0}};
  for (const auto& r : residuals)
    for (const auto& p : psnrs) {
      const Figure f = render_convergence(r, p, {{"gridding-kb", nan}, {"ceiling", 1e300}}, "hostile");
      REQUIRE(f.argb.size() == std::size_t(f.width) * f.height);
      no_bad_numbers(f);
    }
  // Zero iterations (--iters 0, --tol 1): one residual, the figure says so.
  const Figure zero = render_convergence({1.0}, {}, {}, "zero");
  CHECK(has_text(zero, "after 0 iterations"));
  // Residuals over 600 decades: every 50th is labelled, at most 13 of them.
  const Figure wide = render_convergence({1e-300, 1e300}, {}, {}, "wide");
  int decades = 0;
  for (const TextBox& t : wide.texts) decades += t.text.rfind("1e", 0) == 0;
  CHECK(decades >= 2);
  CHECK(decades <= 13);
  no_bad_numbers(render_bars({{"a", inf}, {"b", nan}, {"c", 1e308}}, {{"ceiling", inf}}, "ladder", "u"));
}

TEST_CASE("figure text is made valid UTF-8 before Cairo sees it, by the rule JSON text has", "[figures]") {
  using fhd::valid_utf8;
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  CHECK(valid_utf8("scan_\xc3\xa9t\xc3\xa9.h5") == "scan_\xc3\xa9t\xc3\xa9.h5");  // UTF-8 kept
  CHECK(valid_utf8("\xf0\x9f\x98\x80 \xe2\x82\xac") == "\xf0\x9f\x98\x80 \xe2\x82\xac");
  CHECK(valid_utf8("u\xff.h5") == "u" + r + ".h5");                     // Latin-1
  CHECK(valid_utf8("\xc0\xaf") == r + r);                                // overlong '/'
  CHECK(valid_utf8("\xe0\x80\xaf") == r + r + r);                        // overlong, 3 bytes
  CHECK(valid_utf8("\xed\xa0\x80") == r + r + r);                        // a surrogate
  CHECK(valid_utf8("\xf4\x90\x80\x80") == r + r + r + r);                // past U+10FFFF
  CHECK(valid_utf8("ab\xe2\x82") == "ab" + r + r);                       // cut short
  // is_utf8 (batch's test of a scan's name) agrees with the JSON library's
  // own check, which refuses to write what is not UTF-8.
  for (const std::string s : {"scan_\xc3\xa9t\xc3\xa9.h5", "\xf0\x9f\x98\x80", "u\xff.h5", "\xc0\xaf", "\xe0\x80\xaf",
                              "\xed\xa0\x80", "\xf4\x90\x80\x80", "ab\xe2\x82", "\xef\xbf\xbd"}) {
    bool dumps = true;
    try {
      (void)nlohmann::json(s).dump();
    } catch (const nlohmann::json::type_error&) {
      dumps = false;
    }
    CHECK(fhd::is_utf8(s) == dumps);
    CHECK(fhd::is_utf8(valid_utf8(s)));
  }
}
