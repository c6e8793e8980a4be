#include "app/batch_summary.hpp"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "app/batch_plan.hpp"
#include "app/outputs.hpp"
#include "app/recon_options.hpp"
#include "io/figures.hpp"
#include "io/text_outputs.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace fhd::app {
namespace {

// Adds one stage's seconds to the row's columns (gridding includes density
// compensation; total includes every stage).
void add_stage(BatchRow& row, const std::string& name, double t) {
  row.t_total += t;
  if (name == "cmpMu") row.t_mu += t;
  else if (name == "cmpFhD") row.t_fhd += t;
  else if (name == "Q") row.t_q += t;
  else if (name == "CG") row.t_cg += t;
  else if (name.rfind("gridding", 0) == 0 || name == "density compensation") row.t_gridding += t;
}

void add_method(BatchRow& row, const std::string& name, std::optional<double> psnr, std::optional<double> nrmse) {
  if (name == "iterative") row.iter_psnr = psnr, row.iter_nrmse = nrmse;
  if (name == "gridding-kb") row.grid_psnr = psnr, row.grid_nrmse = nrmse;
}

std::optional<double> num(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

json opt_json(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

}  // namespace

void fill_from_result(BatchRow& row, const ReconResult& res, int coils) {
  for (const MethodResult& m : res.methods) add_method(row, m.name, m.psnr, m.nrmse);
  row.t_mu = row.t_fhd = row.t_q = row.t_cg = row.t_gridding = row.t_total = 0;
  for (const StageTime& s : res.stages) add_stage(row, s.name, s.seconds);
  row.coils = coils;
  row.q_source = res.q_cached ? "cache" : "computed";
  row.status = "ok";
}

void fill_from_report(BatchRow& row, const json& report) {
  try {
    for (const json& m : report.value("methods", json::array()))
      add_method(row, m.value("name", ""), num(m, "psnr_db"), num(m, "nrmse"));
    row.t_mu = row.t_fhd = row.t_q = row.t_cg = row.t_gridding = row.t_total = 0;
    for (const json& s : report.value("stages", json::array()))
      add_stage(row, s.value("name", ""), s.value("seconds", 0.0));
    row.coils = report.value("/batch/coils"_json_pointer, 1);
  } catch (const json::exception& e) {
    throw InputError("report.json of " + row.output + ": wrong shape (" + e.what() + ")");
  }
}

json row_json(const BatchRow& r) {
  json s = {{"file", r.file},     {"status", r.status}, {"reason", r.reason},
            {"output", r.output}, {"coils", r.coils},   {"q_source", r.q_source},
            {"q_cached", r.q_source == "cache"}};
  s["iterative"] = {{"psnr_db", opt_json(r.iter_psnr)}, {"nrmse", opt_json(r.iter_nrmse)}};
  s["gridding_kb"] = {{"psnr_db", opt_json(r.grid_psnr)}, {"nrmse", opt_json(r.grid_nrmse)}};
  // A row that did not run has no times (null, empty in the CSV): 0.0 made a
  // sum of summary.json's times under-count.
  const bool ran = r.status == "ok" || r.status == "skipped";
  const auto t = [ran](double v) { return ran ? json(v) : json(nullptr); };
  s["seconds"] = {{"cmpMu", t(r.t_mu)}, {"cmpFhD", t(r.t_fhd)},           {"Q", t(r.t_q)},
                  {"CG", t(r.t_cg)},    {"gridding", t(r.t_gridding)}, {"total", t(r.t_total)}};
  return s;
}

BatchRow row_from_json(const json& j) {
  BatchRow r;
  try {
    r.file = j.at("file").get<std::string>();
    r.status = j.at("status").get<std::string>();
    r.reason = j.value("reason", "");
    r.output = j.value("output", "");
    r.coils = j.value("coils", 0);
    r.q_source = j.value("q_source", "");
    const json none = json::object();
    const json& it = j.contains("iterative") ? j["iterative"] : none;
    const json& gr = j.contains("gridding_kb") ? j["gridding_kb"] : none;
    r.iter_psnr = num(it, "psnr_db"), r.iter_nrmse = num(it, "nrmse");
    r.grid_psnr = num(gr, "psnr_db"), r.grid_nrmse = num(gr, "nrmse");
    const json& t = j.contains("seconds") ? j["seconds"] : none;
    const auto sec = [&t](const char* key) { return num(t, key).value_or(0.0); };  // null: did not run
    r.t_mu = sec("cmpMu"), r.t_fhd = sec("cmpFhD"), r.t_q = sec("Q");
    r.t_cg = sec("CG"), r.t_gridding = sec("gridding"), r.t_total = sec("total");
  } catch (const json::exception& e) {
    throw InputError(std::string("batch row: wrong shape (") + e.what() + ")");
  }
  return r;
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

}  // namespace

std::string summary_csv(const std::vector<BatchRow>& rows) {
  std::string out =
      "file,status,reason,output,coils,q_source,iterative_psnr_db,iterative_nrmse,gridding_psnr_db,"
      "gridding_nrmse,mu_s,fhd_s,q_s,cg_s,gridding_s,total_s\n";
  for (const BatchRow& r : rows) {
    bool ran = r.status == "ok" || r.status == "skipped";
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
  j["tool"] = {{"name", "fhdrecon"}, {"version", FHD_VERSION}, {"revision", build_revision()}};
  j["command"] = command_line();
  std::map<std::string, int> counts = {{"ok", 0}, {"failed", 0}, {"skipped", 0}};
  j["scans"] = json::array();
  for (const BatchRow& r : rows) {
    ++counts[r.status];
    j["scans"].push_back(row_json(r));
  }
  j["counts"] = counts;
  return j;
}

namespace {
// DIR/overview.png (app/outputs.hpp): a picture, so failing to draw it is a
// warning, never a failed batch.
void write_overview(const std::string& dir, const std::vector<BatchRow>& rows,
                    const std::vector<SheetTile>& thumbnails) {
  if (!figures_available()) return;
  // The sheet draws the first kSheetMaxTiles scans: the others' images are not
  // read (an empty tile stands for them) but still count in its title.
  static const SheetTile not_drawn;
  std::vector<SheetEntry> scans;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const BatchRow& r = rows[k];
    const bool read = k < thumbnails.size() && !thumbnails[k].slice.empty();
    const SheetTile* tile = k >= kSheetMaxTiles ? &not_drawn : read ? &thumbnails[k] : nullptr;
    scans.push_back({r.file, r.status, r.reason, r.output, r.iter_psnr, tile});
  }
  try {
    write_batch_sheet(dir + "/overview.png", scans);
  } catch (const std::exception& e) {
    spdlog::warn("batch overview not drawn: {}", e.what());
  }
}
}  // namespace

void write_summary(const std::string& dir, const std::vector<BatchRow>& rows, const json& extra,
                   const std::vector<SheetTile>& thumbnails) {
  json j = summary_json(rows);
  for (const auto& kv : extra.items()) j[kv.key()] = kv.value();
  write_text(dir + "/summary.csv", summary_csv(rows));
  write_json(dir + "/summary.json", j);
  write_overview(dir, rows, thumbnails);
}

// ---------------------------------------------------------------- shards

std::string shard_path(const std::string& dir, std::size_t index, std::size_t count) {
  return fmt::format("{}/shards/shard-{:04d}-of-{:04d}.json", dir, index, count);
}

void write_shard(const std::string& dir, const ShardFile& s) {
  json j;
  j["shard"] = {{"index", s.index},
                {"count", s.count},
                {"files_total", s.files_total},
                {"list_hash", s.list_hash},
                {"options_fingerprint", s.options_fingerprint},
                {"state", s.state},
                {"command", command_line()}};
  j["scans"] = json::array();
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    json r = row_json(s.rows[i]);
    r["position"] = s.positions[i];
    j["scans"].push_back(r);
  }
  fs::create_directories(dir + "/shards");
  write_json(shard_path(dir, s.index, s.count), j);
}

ShardFile read_shard(const std::string& path) {
  ShardFile s;
  try {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::exists(st) && !fs::is_regular_file(st)) throw InputError("is not a plain file");  // a FIFO blocks the open
    std::ifstream f(path);
    if (!f) throw InputError("cannot be read");
    json j = json::parse(f);
    const json& h = j.at("shard");
    s.index = h.at("index").get<std::size_t>();
    s.count = h.at("count").get<std::size_t>();
    s.files_total = h.at("files_total").get<std::size_t>();
    s.list_hash = h.at("list_hash").get<std::string>();
    s.options_fingerprint = h.at("options_fingerprint").get<std::string>();
    s.state = h.at("state").get<std::string>();
    for (const json& r : j.at("scans")) {
      s.positions.push_back(r.at("position").get<std::size_t>());
      s.rows.push_back(row_from_json(r));
    }
  } catch (const std::exception& e) {
    throw InputError("shard file " + path + ": " + e.what());
  }
  if (s.count == 0 || s.index >= s.count)
    throw InputError("shard file " + path + ": shard " + std::to_string(s.index) + " of " + std::to_string(s.count));
  // A file's claims are not trusted: the merge makes a row per scan and per
  // missing shard (a tampered count of 1e12 took 16.8 GB before failing).
  if (s.files_total > kMaxBatchFiles)
    throw InputError("shard file " + path, "files_total", std::to_string(s.files_total),
                     "more scans than a batch lists (" + std::to_string(kMaxBatchFiles) + ")");
  for (std::size_t p : s.positions)
    if (p >= s.files_total)
      throw InputError("shard file " + path, "position", std::to_string(p),
                       "must be below files_total " + std::to_string(s.files_total));
  return s;
}

namespace {

std::vector<std::string> shard_files(const std::vector<std::string>& dirs_or_files) {
  std::vector<std::string> files;
  for (const std::string& d : dirs_or_files) {
    std::error_code ec;
    if (fs::is_regular_file(d, ec)) {
      files.push_back(d);
      continue;
    }
    if (!fs::is_directory(d, ec)) throw InputError("--merge " + d + ": no such directory or shard file");
    std::vector<std::string> here;
    if (fs::is_directory(d + "/shards", ec))
      for (const auto& e : fs::directory_iterator(d + "/shards")) {
        std::string name = e.path().filename().string();
        if (name.rfind("shard-", 0) == 0 && e.path().extension() == ".json") here.push_back(e.path().string());
      }
    if (here.empty()) throw InputError("--merge " + d + ": no shards/shard-*.json in it");
    files.insert(files.end(), here.begin(), here.end());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every shard must come from the same batch: one N, one file list, one set of options.
void check_same_batch(const ShardFile& a, const std::string& a_path, const ShardFile& b, const std::string& b_path) {
  if (a.count != b.count || a.list_hash != b.list_hash || a.files_total != b.files_total ||
      a.options_fingerprint != b.options_fingerprint)
    throw InputError("--merge: " + b_path + " is not from the same batch as " + a_path +
                     " (shard count, file list or options differ)");
}

// Of two copies of one shard (directories copied, or given twice), whether `a`
// got further than `b`: finished ("done") first, then more rows that ran (not
// "pending"), then the newer file. The path sorting last won before, so an
// interrupted copy in zz_stale/ overrode the finished shard (hunt19 finding 6).
bool further(const ShardFile& a, const std::string& a_path, const ShardFile& b, const std::string& b_path) {
  auto ran = [](const ShardFile& s) {
    return std::count_if(s.rows.begin(), s.rows.end(), [](const BatchRow& r) { return r.status != "pending"; });
  };
  if ((a.state == "done") != (b.state == "done")) return a.state == "done";
  if (ran(a) != ran(b)) return ran(a) > ran(b);
  std::error_code ea, eb;
  const fs::file_time_type ta = fs::last_write_time(a_path, ea), tb = fs::last_write_time(b_path, eb);
  return !ea && (eb || ta > tb);
}

}  // namespace

MergeResult merge_shards(const std::vector<std::string>& dirs_or_files) {
  std::vector<std::string> paths = shard_files(dirs_or_files);
  std::map<std::size_t, std::pair<ShardFile, std::string>> by_index;  // the copy kept, its path
  ShardFile first = read_shard(paths[0]);
  for (const std::string& p : paths) {
    ShardFile s = read_shard(p);
    check_same_batch(first, paths[0], s, p);
    auto [at, fresh] = by_index.try_emplace(s.index);  // the same shard twice: the copy that got further
    if (fresh || further(s, p, at->second.first, at->second.second)) at->second = {std::move(s), p};
  }
  MergeResult m;
  std::map<std::size_t, BatchRow> by_position;
  // Shards from files_total on hold no scan: missing, they cost no row.
  for (std::size_t i = 0; i < std::min(first.count, first.files_total); ++i) {
    auto it = by_index.find(i);
    if (it == by_index.end()) {
      m.missing.push_back(i);
      continue;
    }
    const ShardFile& s = it->second.first;
    if (s.state != "done") m.unfinished.push_back(i);
    for (std::size_t k = 0; k < s.rows.size(); ++k) {
      BatchRow r = s.rows[k];
      if (r.status == "pending") {
        r.status = "failed";
        // Pending: the task stopped before it or while reconstructing it.
        r.reason = fmt::format("not finished: shard {}/{} stopped during or before this scan ({})", i, s.count,
                               s.state == "interrupted" ? "task interrupted" : "task killed or crashed");
      }
      by_position[s.positions[k]] = r;
    }
  }
  for (auto& kv : by_position) m.rows.push_back(kv.second);
  for (std::size_t i : m.missing) {
    BatchRow r;
    r.status = "missing";
    r.reason = fmt::format("shard {}/{} wrote no rows ({} scans unaccounted for)", i, first.count,
                           (first.files_total + first.count - 1 - i) / first.count);
    m.rows.push_back(r);
  }
  m.shards = {{"count", first.count},         {"files_total", first.files_total},
              {"list_hash", first.list_hash}, {"missing", m.missing},
              {"unfinished", m.unfinished},   {"merged_from", paths.size()}};
  return m;
}

}  // namespace fhd::app
