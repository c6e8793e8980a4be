#include "app/outputs.hpp"
#include "app/option_checks.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <future>
#include <stdexcept>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "core/clock.hpp"
#include "io/cfl.hpp"
#include "io/figures.hpp"
#include "io/h5util.hpp"
#include "io/image_out.hpp"
#include "io/text_outputs.hpp"
#include "core/error.hpp"
#include "recon/eval/metrics.hpp"

namespace fhd::app {
namespace {

// Every name a recon run may write into DIR: an earlier run's file that this
// run does not rewrite is dropped, so one directory never mixes two runs.
const std::vector<std::string> kOwnedNames = {"report.json",  "images.h5",    "iterative.nii",   "iterative.nii.gz",
                                              "iterative.cfl", "iterative.hdr", "montage.png", "convergence.png"};
const std::set<std::string> kFormats = {"h5", "nii", "cfl", "png"};

// "" and "none,h5" were taken (as none, as h5) without a word: each is refused.
std::set<std::string> parse_save(const std::string& list) {
  std::set<std::string> out;
  std::stringstream ss(list);
  bool none = false;
  for (std::string f; std::getline(ss, f, ',');) {
    none = none || f == "none";
    if (f == "none") continue;
    if (!kFormats.count(f))
      throw InputError("--save", "format", "'" + f + "'", "expected h5, nii, cfl, png or none (not empty)");
    out.insert(f);
  }
  if (list.empty() || list.back() == ',')
    throw InputError("--save", "list", "'" + list + "'", "has an empty format: expected h5, nii, cfl, png or none");
  if (none && !out.empty())
    throw InputError("--save", "list", "'" + list + "'", "none cannot go with other formats");
  return out;
}

// Each method's magnitude image, made once (over threads) for every output
// that draws or stores it: at 128^3 the h5 file and the montage each made
// their own, 40 ms apiece.
using Magnitudes = std::map<std::string, std::vector<float>>;

Magnitudes magnitudes(const ReconResult& res) {
  Magnitudes out;
  for (const MethodResult& m : res.methods) out[m.name] = magnitude(m.image);
  return out;
}

const MethodResult* find_method(const ReconResult& res, const std::string& name) {
  for (const MethodResult& m : res.methods)
    if (m.name == name) return &m;
  return nullptr;
}

// File-safe dataset names: "band-limited ceiling" -> "band-limited_ceiling".
std::string dataset_name(std::string s) {
  for (char& c : s)
    if (c == ' ') c = '_';
  return s;
}

// Without Cairo: the gray montage (phantom, iterative, gridding, error rows).
void write_plain_preview(const std::string& path, const ReconResult& res, const Magnitudes& mag) {
  std::vector<std::vector<float>> rows;
  if (!res.reference.empty()) rows.push_back(res.reference);
  for (const char* name : {"iterative", "gridding-kb"})
    if (mag.count(name)) rows.push_back(mag.at(name));
  write_montage_png(path, rows, res.grid);
}

void write_h5(const std::string& path, const ReconResult& res, const Magnitudes& magnitude,
              const std::optional<ScanGeometry>& geometry) {
  RealVolumes mag;
  ComplexVolumes cplx;
  for (const MethodResult& m : res.methods) {
    mag[dataset_name(m.name)] = &magnitude.at(m.name);
    cplx[dataset_name(m.name) + "_complex"] = &m.image;
  }
  if (!res.reference.empty()) mag["phantom"] = &res.reference;
  write_image_h5(path, mag, cplx, res.grid, geometry);
}

}  // namespace

void add_output_options(CLI::App& cmd, OutputOptions& o) {
  cmd.add_option("--out", o.dir, "output directory (images, figures, report); replaced as a whole by each run")
      ->capture_default_str();
  cmd.add_option("--json", o.json, "JSON report path (default: OUT/report.json)")->check(non_empty_path());
  cmd.add_option("--save", o.save,
                 "outputs beside the report, comma-separated: h5 (images.h5), nii (iterative.nii), "
                 "cfl (iterative.cfl/.hdr, BART), png (montage.png, convergence.png), or none")
      ->capture_default_str();
  cmd.add_flag("--no-images", o.no_images, "write only the JSON report (same as --save none)");
}

namespace {

// --json inside --out: the run replaces that directory as a whole, so a report
// there replaced one of its outputs (--json OUT/images.h5 left JSON where the
// images were, exit 0) or made a subdirectory that broke OUT for every later
// run. OUT/report.json is the default's own place: taken as the default.
std::string json_outside(const std::string& json, const std::string& dir) {
  if (json.empty()) return json;
  if (entry_within(json, dir + "/report.json") == ".") return "";
  if (!entry_within(json, dir).empty())
    throw InputError(json, "--json", json,
                     "lies inside --out " + dir + ", which each run replaces as a whole; put it elsewhere "
                     "(or leave --json out: the report is " + dir + "/report.json)");
  return json;
}

}  // namespace

std::string entry_within(const std::string& path, const std::string& dir) {
  namespace fs = std::filesystem;
  const auto resolved = [](const std::string& p) {
    std::error_code ec;
    fs::path r = fs::weakly_canonical(fs::absolute(p), ec).lexically_normal();
    return r.filename().empty() ? r.parent_path() : r;  // "a/" is "a"
  };
  const fs::path p = resolved(path), d = resolved(dir);
  return p == d ? "." : entry_in(p, d);
}

std::string entry_in(const std::filesystem::path& place, const std::filesystem::path& dir) {
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), place.begin(), place.end());
  return d == dir.end() && p != place.end() ? p->string() : "";
}

void check_cache_outside(const std::string& cache_dir, const std::string& dir, const std::string& dir_what) {
  if (cache_dir.empty() || entry_within(cache_dir, dir).empty()) return;
  throw InputError(cache_dir, "--cache-dir", cache_dir,
                   "lies inside " + dir_what + ", which each run replaces as a whole; put the cache elsewhere");
}

OutputPlan plan_outputs(const OutputOptions& o) {
  OutputPlan p;
  p.formats = parse_save(o.save);
  if (o.no_images) p.formats.clear();
  if (o.dir.empty()) throw InputError("--out", "directory", "\"\"", "must name a directory");
  p.json = json_outside(o.json, o.dir);
  if (!p.json.empty()) check_writable_file(p.json, "--json");
  p.set = std::make_shared<OutputSet>(o.dir, kOwnedNames);
  return p;
}

namespace {

// The montage's columns: phantom (when known), every method, |iterative| - phantom.
void write_montage(const std::string& path, const ReconResult& res, const Magnitudes& mag) {
  std::vector<MontageColumn> cols;
  if (!res.reference.empty()) cols.push_back({"phantom", &res.reference, {}, {}, false});
  for (const MethodResult& m : res.methods) cols.push_back({m.name, &mag.at(m.name), m.psnr, m.nrmse, false});
  std::vector<float> err;
  if (mag.count("iterative") && !res.reference.empty()) {
    err = mag.at("iterative");
#pragma omp parallel for
    for (std::ptrdiff_t i = 0; i < std::ptrdiff_t(err.size()); ++i) err[i] = std::abs(err[i] - res.reference[i]);
    cols.push_back({"|iterative - phantom|", &err, {}, {}, true});
  }
  const ImageGrid& g = res.grid;
  const std::string size = std::to_string(g.nx) + "x" + std::to_string(g.ny) + (g.is3d() ? "x" + std::to_string(g.nz) : "");
  write_figure(path, render_montage(cols, g, "fhdrecon: central slices, " + size));
}

}  // namespace

void write_convergence(const std::string& path, const ReconResult& res) {
  std::vector<RefLevel> levels;
  for (const auto& [name, color] : {std::pair<const char*, Rgb>{"gridding-kb", {200, 110, 20}},
                                    std::pair<const char*, Rgb>{"band-limited ceiling", {40, 140, 60}}})
    if (const MethodResult* m = find_method(res, name); m && m->psnr) levels.push_back({name, *m->psnr, color});
  write_figure(path, render_convergence(res.cg.residuals, res.cg_psnr, levels, "fhdrecon: CG convergence"));
}

// A failed write (a full disk, say) names the file the user asked for, not
// its staging copy, and says that the previous output set is kept.
template <class F>
void write_named(const OutputSet& set, const std::string& name, F&& write) {
  try {
    write();
  } catch (const std::exception& e) {
    throw std::runtime_error(set.dir() + "/" + name + ": not written (" + e.what() +
                             "); the previous outputs are kept");
  }
}

// One output file and the code that writes it to its staging path.
struct OutputTask {
  std::string name;
  std::function<void()> write;
};

// Writes the outputs side by side, one thread each: they are separate files
// through separate libraries (HDF5 only in the h5 task), and at 128^3 their
// encoding (HDF5, PNG, NIfTI) took 0.5 s of a 1.3 s run one after another.
// Every task finishes before the first failure is rethrown, so no thread
// outlives the staging directory.
void run_output_tasks(const OutputSet& set, const std::vector<OutputTask>& tasks) {
  std::vector<std::future<void>> running;
  for (const OutputTask& t : tasks)
    running.push_back(std::async(std::launch::async, [&set, &t] {
      const auto t0 = std::chrono::steady_clock::now();
      write_named(set, t.name, t.write);
      spdlog::debug("{} written in {:.3f} s", t.name,
                    seconds_since(t0));
    }));
  std::exception_ptr first;
  for (std::future<void>& f : running) {
    try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

// The convergence figure is drawn from finite values only: CG on all-zero
// k-space (0/0) or on samples that overflow float (1e36) has none to draw, so
// the figure is left out with a warning; the other outputs are written.
bool convergence_drawable(const ReconResult& res) {
  auto finite = [](double v) { return std::isfinite(v); };
  const auto& r = res.cg.residuals;
  if (std::any_of(r.begin(), r.end(), [](double v) { return std::isfinite(v) && v > 0; }) ||
      std::any_of(res.cg_psnr.begin(), res.cg_psnr.end(), finite))
    return true;
  spdlog::warn("convergence.png not drawn: CG reported no finite residual ({} value(s), none finite and positive: "
               "all-zero or overflowing k-space?)",
               r.size());
  return false;
}

// The tasks --save asks for; staging paths are taken here, on one thread.
std::vector<OutputTask> output_tasks(const OutputPlan& plan, const ReconResult& res, const Magnitudes& mag,
                                     const std::optional<ScanGeometry>& geometry, nlohmann::json& files) {
  OutputSet& set = *plan.set;
  std::vector<OutputTask> tasks;
  const MethodResult* it = find_method(res, "iterative");
  if (plan.formats.count("h5")) {
    tasks.push_back({"images.h5", [path = set.file("images.h5"), &res, &mag, &geometry] { write_h5(path, res, mag, geometry); }});
    files["images"] = set.dir() + "/images.h5";
  }
  if (plan.formats.count("nii") && it) {
    tasks.push_back({"iterative.nii", [path = set.file("iterative.nii"), &res, &mag, &geometry] {
                       write_nifti(path, mag.at("iterative"), res.grid, geometry);
                     }});
    files["nifti"] = set.dir() + "/iterative.nii";
  }
  if (plan.formats.count("cfl") && it) {
    set.file("iterative.hdr");
    tasks.push_back({"iterative.cfl", [path = set.file("iterative.cfl"), &res, it] {
                       write_bart_image(path, it->image, res.grid);
                     }});
    files["bart"] = set.dir() + "/iterative.cfl";
  }
  if (plan.formats.count("png")) {
    if (figures_available()) {
      tasks.push_back({"montage.png", [path = set.file("montage.png"), &res, &mag] { write_montage(path, res, mag); }});
      if (convergence_drawable(res)) {
        tasks.push_back({"convergence.png", [path = set.file("convergence.png"), &res] { write_convergence(path, res); }});
        files["convergence"] = set.dir() + "/convergence.png";
      }
    } else {
      tasks.push_back({"montage.png", [path = set.file("montage.png"), &res, &mag] { write_plain_preview(path, res, mag); }});
    }
    files["preview"] = set.dir() + "/montage.png";
  }
  return tasks;
}

namespace {

// A method whose image holds NaN or Inf (arithmetic that overflowed despite the
// readers' bounds) fails the run: writing it showed an empty image with exit 0.
void check_images_finite(const ReconResult& res) {
  for (const MethodResult& m : res.methods) {
    std::size_t bad = 0;
    for (const cfloat& v : m.image) bad += !(std::isfinite(v.real()) && std::isfinite(v.imag()));
    if (bad)
      throw std::runtime_error("the " + m.name + " image has " + std::to_string(bad) + " of " +
                               std::to_string(m.image.size()) +
                               " voxels not finite (NaN or Inf): the reconstruction overflowed; nothing written");
  }
}

}  // namespace

void write_outputs(const OutputPlan& plan, const ReconResult& res, const nlohmann::json& report,
                   const std::optional<ScanGeometry>& geometry) {
  check_images_finite(res);
  OutputSet& set = *plan.set;
  nlohmann::json j = report;
  nlohmann::json files = nlohmann::json::object();
  // cfl stores the complex image only: it alone needs no magnitudes.
  const bool magnitudes_used = plan.formats.count("h5") || plan.formats.count("nii") || plan.formats.count("png");
  const Magnitudes mag = magnitudes_used ? magnitudes(res) : Magnitudes{};
  run_output_tasks(set, output_tasks(plan, res, mag, geometry, files));
  if (!files.empty()) j["outputs"] = files;
  if (plan.json.empty()) write_json(set.file("report.json"), j);
  const auto t0 = std::chrono::steady_clock::now();
  set.commit();
  spdlog::debug("outputs synced and swapped in in {:.3f} s",
                seconds_since(t0));
  if (!plan.json.empty()) write_json(plan.json, j);
  spdlog::info("wrote {}{}", set.dir(), plan.json.empty() ? "" : " and " + plan.json);
}

SheetTile scan_thumbnail(const std::string& dir) {
  SheetTile t;
  try {
    h5::QuietErrors quiet;
    h5::Handle f = h5::open_read(dir + "/images.h5");
    h5::Handle ds(H5Dopen2(f.get(), "iterative", H5P_DEFAULT), H5Dclose);
    if (!ds.ok()) return t;
    const std::vector<hsize_t> dims = h5::shape(ds.get());  // [nz, ny, nx]
    if (dims.size() != 3 || dims[1] * dims[2] > (1u << 24)) return t;
    h5::Handle space(H5Dget_space(ds.get()), H5Sclose);
    const hsize_t start[3] = {dims[0] / 2, 0, 0}, count[3] = {1, dims[1], dims[2]};
    h5::check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), "select slice");
    h5::Handle mem(H5Screate_simple(3, count, nullptr), H5Sclose);
    std::vector<float> slice(dims[1] * dims[2]);
    h5::check(H5Dread(ds.get(), H5T_NATIVE_FLOAT, mem.get(), space.get(), H5P_DEFAULT, slice.data()), "read slice");
    t.w = int(dims[2]);
    t.h = int(dims[1]);
    t.slice = std::move(slice);
  } catch (const std::exception&) {
    t.slice.clear();
  }
  return t;
}

void write_batch_sheet(const std::string& path, const std::vector<SheetEntry>& scans) {
  std::vector<SheetTile> tiles;
  int failed = 0;
  for (const SheetEntry& e : scans) {
    SheetTile t = e.status == "failed" ? SheetTile{} : e.thumbnail ? *e.thumbnail : scan_thumbnail(e.output_dir);
    t.name = std::filesystem::path(e.file).filename().string();
    t.failed = e.status == "failed";
    failed += t.failed;
    char psnr[32] = "";
    if (e.psnr) std::snprintf(psnr, sizeof psnr, "PSNR %.2f dB", *e.psnr);
    // The reason's last part (the problem); its file part repeats the tile's name.
    const std::size_t cut = e.reason.rfind(": ");
    t.caption = t.failed ? "failed: " + (cut == std::string::npos ? e.reason : e.reason.substr(cut + 2)) : e.psnr ? std::string(psnr) + (e.status == "skipped" ? " (up to date)" : "")
                                                          : e.status;
    tiles.push_back(std::move(t));
  }
  const std::string title = "fhdrecon batch: " + std::to_string(scans.size()) + " scans, " +
                            std::to_string(int(scans.size()) - failed) + " ok, " + std::to_string(failed) + " failed";
  write_figure(path, render_sheet(tiles, title));
}

void discard_outputs(OutputPlan& plan) noexcept { plan.set.reset(); }

}  // namespace fhd::app
