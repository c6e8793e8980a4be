#include "app/batch.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "app/log.hpp"
#include "app/outputs.hpp"
#include "app/report.hpp"
#include "app/source.hpp"
#include "io/atomic_file.hpp"
#include "io/report.hpp"
#include "recon/error.hpp"
#include "recon/metrics.hpp"
#include "recon/reference.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace fhd::app {
namespace {

// A private Q cache for one run, removed afterwards: it makes "Q once per
// trajectory" hold even when the user turned the persistent cache off.
class TempDir {
 public:
  TempDir() {
    std::mt19937_64 rng(std::random_device{}());
    path_ = (fs::temp_directory_path() / ("fhdrecon-q-" + std::to_string(rng()))).string();
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void check_same_trajectory(const Scan& a, const Scan& b) {
  if (!(a.grid == b.grid) || a.traj.kx != b.traj.kx || a.traj.ky != b.traj.ky || a.traj.kz != b.traj.kz ||
      a.phi != b.phi)
    throw InputError("coils: the coils of one scan must share grid, trajectory and Phi");
}

// acc += |r|^2 per method (acc's images hold the running sum in their real part)
// and the stage times of the same stage.
void add_coil(ReconResult& acc, const ReconResult& r) {
  for (std::size_t i = 0; i < acc.methods.size() && i < r.methods.size(); ++i) {
    std::vector<cfloat>& a = acc.methods[i].image;
    const std::vector<cfloat>& b = r.methods[i].image;
    for (std::size_t v = 0; v < a.size(); ++v) a[v] += std::norm(b[v]);
    acc.methods[i].seconds += r.methods[i].seconds;
  }
  for (std::size_t i = 0; i < acc.stages.size() && i < r.stages.size(); ++i)
    if (acc.stages[i].name == r.stages[i].name) acc.stages[i].seconds += r.stages[i].seconds;
}

void squares_of(ReconResult& r) {
  for (MethodResult& m : r.methods)
    for (cfloat& v : m.image) v = std::norm(v);
}

void root_of(ReconResult& r) {
  for (MethodResult& m : r.methods)
    for (cfloat& v : m.image) v = std::sqrt(v.real());
}

// The phantom's band-limited ceiling, reference and scores, once for the
// combined image (the pipeline would do them per coil).
void add_phantom_scores(ReconResult& r, const ReconOptions& opt) {
  const ImageGrid& g = r.grid;
  if (opt.observer.begin) opt.observer.begin("band-limited ceiling");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<cfloat> ceil = band_limited_reference(*opt.phantom, g);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.observer.end) opt.observer.end("band-limited ceiling", s);
  r.stages.push_back({"band-limited ceiling", s, ""});
  r.methods.push_back({"band-limited ceiling", std::move(ceil), s, {}, {}});
  r.reference = voxel_image(*opt.phantom, g.nx, g.ny, g.nz);
  for (MethodResult& m : r.methods) {
    m.psnr = psnr(m.image, r.reference);
    m.nrmse = nrmse(m.image, r.reference);
  }
}

}  // namespace

ReconResult reconstruct_coils(Backend& be, const std::vector<const Scan*>& coils, const ReconOptions& opt) {
  if (coils.empty()) throw InputError("coils: no coil data");
  if (coils.size() == 1) return run_reconstruction(be, *coils[0], opt);
  for (const Scan* c : coils) check_same_trajectory(*coils[0], *c);
  ReconOptions per = opt;
  per.phantom = nullptr;  // scored once, on the combined image
  std::optional<TempDir> tmp;
  if (per.q_cache_dir.empty()) per.q_cache_dir = tmp.emplace().path();
  ReconResult acc = run_reconstruction(be, *coils[0], per);
  squares_of(acc);
  for (std::size_t c = 1; c < coils.size(); ++c) add_coil(acc, run_reconstruction(be, *coils[c], per));
  root_of(acc);
  std::string n = std::to_string(coils.size()) + " coils";
  for (StageTime& s : acc.stages) s.note = s.note.empty() ? n : s.note + ", " + n;
  if (opt.phantom) add_phantom_scores(acc, opt);
  return acc;
}

std::vector<const Scan*> coil_list(const Source& src) {
  std::vector<const Scan*> coils = {&src.scan};
  for (const Scan& c : src.more_coils) coils.push_back(&c);
  return coils;
}

// ---------------------------------------------------------------- batch

std::string options_fingerprint(const SolverOptions& o, const std::string& device) {
  json j = {{"trig", o.trig},     {"kernel", o.kernel}, {"iters", o.iters},          {"tol", o.tol},
            {"lambda", o.lambda}, {"dcf", o.dcf},       {"gridding", !o.no_gridding}, {"device", device},
            {"version", FHD_VERSION}};
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64: stable across runs and builds
  for (unsigned char ch : j.dump()) h = (h ^ ch) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::string> output_names(const std::vector<std::string>& files) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const std::string& f : files) {
    fs::path p(f);
    std::string name = p.stem().string();
    if (seen.count(name)) {
      name = p.filename().string();
      for (char& ch : name)
        if (ch == '.') ch = '_';
    }
    std::string base = name;
    for (int i = 2; seen.count(name); ++i) name = base + "_" + std::to_string(i);
    seen.insert(name);
    names.push_back(name);
  }
  return names;
}

namespace {

bool is_bart(const std::string& file) {
  std::string e = fs::path(file).extension().string();
  return e == ".cfl" || e == ".hdr" || e.empty();
}

std::string bart_base(const std::string& file) {
  fs::path p(file);
  return p.extension().empty() ? file : (p.parent_path() / p.stem()).string();
}

// The files a scan is read from (a BART scan is four).
std::vector<std::string> input_files(const std::string& file) {
  if (!is_bart(file)) return {file};
  std::string b = bart_base(file);
  return {b + ".cfl", b + ".hdr", b + "_traj.cfl", b + "_traj.hdr"};
}

}  // namespace

std::string bart_traj_for(const std::string& file) { return is_bart(file) ? bart_base(file) + "_traj" : ""; }

// Why a report.json is not of the shape this version writes ("" when it is):
// anything else would raise a raw json exception when read for a skip.
std::string report_shape_problem(const json& j) {
  auto is_list_of_named = [&](const char* key) {
    if (!j.contains(key)) return true;
    if (!j[key].is_array()) return false;
    for (const json& e : j[key])
      if (!e.is_object() || (e.contains("name") && !e["name"].is_string())) return false;
    return true;
  };
  if (!j.is_object()) return "is not a JSON object";
  const auto b = j.find("batch");
  if (b != j.end() && (!b->is_object() || (b->contains("options_fingerprint") && !(*b)["options_fingerprint"].is_string()) ||
                       (b->contains("coils") && !(*b)["coils"].is_number_integer())))
    return "has a malformed batch section";
  const auto o = j.find("outputs");
  if (o != j.end()) {
    if (!o->is_object()) return "has outputs that are not an object";
    for (const json& v : *o)
      if (!v.is_string()) return "has outputs that are not file names";
  }
  if (!is_list_of_named("methods") || !is_list_of_named("stages")) return "has methods or stages of the wrong shape";
  for (const json& s : j.value("stages", json::array()))
    if (s.contains("seconds") && !s["seconds"].is_number()) return "has a stage whose seconds is not a number";
  return "";
}

std::string why_not_up_to_date(const std::string& input, const std::string& dir, const std::string& fingerprint) {
  std::string report = dir + "/report.json";
  std::error_code ec;
  if (!fs::exists(report, ec)) return "no report.json";
  json j;
  try {
    std::ifstream f(report);
    j = json::parse(f);
  } catch (const std::exception&) {
    return "report.json unreadable";
  }
  if (std::string why = report_shape_problem(j); !why.empty()) return "report.json " + why;
  if (j.value("/batch/options_fingerprint"_json_pointer, std::string()) != fingerprint) return "options changed";
  std::vector<std::string> outs = {report};
  if (!j.contains("outputs")) return "no images";
  for (const auto& kv : j["outputs"].items()) outs.push_back(kv.value().get<std::string>());
  for (const std::string& in : input_files(input)) {
    auto t_in = fs::last_write_time(in, ec);
    if (ec) return "input " + in + " unreadable";
    for (const std::string& o : outs) {
      auto t_out = fs::last_write_time(o, ec);
      if (ec) return o + " missing";
      if (t_out < t_in) return in + " is newer than " + o;
    }
  }
  return "";
}

namespace {

std::optional<double> num(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

}  // namespace

void fill_from_report(BatchRow& row, const json& report) {
  for (const json& m : report.value("methods", json::array())) {
    std::string name = m.value("name", "");
    if (name == "iterative") row.iter_psnr = num(m, "psnr_db"), row.iter_nrmse = num(m, "nrmse");
    if (name == "gridding-kb") row.grid_psnr = num(m, "psnr_db"), row.grid_nrmse = num(m, "nrmse");
  }
  row.t_mu = row.t_fhd = row.t_q = row.t_cg = row.t_gridding = row.t_total = 0;
  for (const json& s : report.value("stages", json::array())) {
    std::string name = s.value("name", "");
    double t = s.value("seconds", 0.0);
    row.t_total += t;
    if (name == "cmpMu") row.t_mu += t;
    else if (name == "cmpFhD") row.t_fhd += t;
    else if (name == "Q") row.t_q += t;
    else if (name == "CG") row.t_cg += t;
    else if (name.rfind("gridding", 0) == 0 || name == "density compensation") row.t_gridding += t;
  }
  row.coils = report.value("/batch/coils"_json_pointer, 1);
}

namespace {

// Reads, reconstructs and writes one scan; fills `row` (status ok).
void reconstruct_one(const BatchOptions& o, Backend& be, const std::string& fingerprint,
                     const std::string& private_cache, BatchRow& row) {
  SourceOptions so;
  so.input = row.file;
  so.traj_file = bart_traj_for(row.file);
  Source src = make_source(so);
  OutputOptions oo;
  oo.dir = row.output;
  OutputPlan plan = plan_outputs(oo);
  Progress progress(o.progress);
  ReconOptions ro = make_recon_options(o.solver, src.phantom.get(), progress);
  if (ro.q_cache_dir.empty()) ro.q_cache_dir = private_cache;
  std::vector<const Scan*> coils = coil_list(src);
  ReconResult res = reconstruct_coils(be, coils, ro);
  RunInfo info{command_line(), be.name(), src.description, to_string(ro.fhd.trig), ro.fhd.kernel, ro.iters,
               ro.lambda};
  json j = results_json(res, info);
  j["batch"] = {{"input", row.file}, {"options_fingerprint", fingerprint}, {"coils", coils.size()}};
  write_outputs(plan, res, j);
  row.status = "ok";
  fill_from_report(row, j);
  row.q_source = res.q_cached ? "cache" : "computed";
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

BatchRow batch_one(const BatchOptions& o, Backend& be, const std::string& file, const std::string& dir,
                   const std::string& fingerprint, const std::string& private_cache) {
  BatchRow row;
  row.file = file;
  row.output = dir;
  try {
    std::string why = o.force ? "--force" : why_not_up_to_date(file, dir, fingerprint);
    if (why.empty()) {
      std::ifstream f(dir + "/report.json");
      fill_from_report(row, json::parse(f));
      row.status = "skipped";
      row.reason = "outputs up to date";
      return row;
    }
    spdlog::info("{}: reconstructing ({})", file, why);
    reconstruct_one(o, be, fingerprint, private_cache, row);
  } catch (const std::exception& e) {
    row = BatchRow{};
    row.file = file;
    row.output = dir;
    row.status = "failed";
    row.reason = one_line(e.what());
    spdlog::error("{}: {}", file, row.reason);
  }
  return row;
}

}  // namespace

std::vector<BatchRow> run_batch(const BatchOptions& o, Backend& be) {
  make_output_dir(o.out);
  const std::string fp = options_fingerprint(o.solver, o.device);
  const std::vector<std::string> names = output_names(o.files);
  std::optional<TempDir> private_cache;
  if (o.solver.no_cache) private_cache.emplace();
  std::vector<BatchRow> rows;
  for (std::size_t i = 0; i < o.files.size(); ++i)
    rows.push_back(batch_one(o, be, o.files[i], o.out + "/" + names[i], fp,
                             private_cache ? private_cache->path() : std::string()));
  write_text(o.out + "/summary.csv", summary_csv(rows));
  write_json(o.out + "/summary.json", summary_json(rows));
  return rows;
}

// ---------------------------------------------------------------- summary

namespace {

// RFC 4180: quote a field holding a comma, quote or line break; double quotes.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_num(const std::optional<double>& v) {
  if (!v) return "";
  if (!std::isfinite(*v)) return *v > 0 ? "inf" : "nan";
  return fmt::format("{:.6g}", *v);
}

json opt_json(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

}  // namespace

std::string summary_csv(const std::vector<BatchRow>& rows) {
  std::string out =
      "file,status,reason,output,coils,q_source,iterative_psnr_db,iterative_nrmse,gridding_psnr_db,"
      "gridding_nrmse,mu_s,fhd_s,q_s,cg_s,gridding_s,total_s\n";
  for (const BatchRow& r : rows) {
    bool ran = r.status != "failed";
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}", csv_field(r.file), r.status, csv_field(r.reason),
                       csv_field(r.output), ran ? std::to_string(r.coils) : "", r.q_source, csv_num(r.iter_psnr),
                       csv_num(r.iter_nrmse), csv_num(r.grid_psnr), csv_num(r.grid_nrmse));
    for (double t : {r.t_mu, r.t_fhd, r.t_q, r.t_cg, r.t_gridding, r.t_total})
      out += "," + (ran ? fmt::format("{:.4f}", t) : std::string());
    out += "\n";
  }
  return out;
}

json summary_json(const std::vector<BatchRow>& rows) {
  json j;
  j["tool"] = {{"name", "fhdrecon"}, {"version", FHD_VERSION}};
  j["command"] = command_line();
  std::map<std::string, int> counts = {{"ok", 0}, {"failed", 0}, {"skipped", 0}};
  j["scans"] = json::array();
  for (const BatchRow& r : rows) {
    ++counts[r.status];
    json s = {{"file", r.file},         {"status", r.status},  {"reason", r.reason},
              {"output", r.output},     {"coils", r.coils},    {"q_source", r.q_source},
              {"q_cached", r.q_source == "cache"}};
    s["iterative"] = {{"psnr_db", opt_json(r.iter_psnr)}, {"nrmse", opt_json(r.iter_nrmse)}};
    s["gridding_kb"] = {{"psnr_db", opt_json(r.grid_psnr)}, {"nrmse", opt_json(r.grid_nrmse)}};
    s["seconds"] = {{"cmpMu", r.t_mu}, {"cmpFhD", r.t_fhd}, {"Q", r.t_q},
                    {"CG", r.t_cg}, {"gridding", r.t_gridding}, {"total", r.t_total}};
    j["scans"].push_back(s);
  }
  j["counts"] = counts;
  return j;
}

}  // namespace fhd::app
