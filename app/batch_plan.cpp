#include "app/batch_plan.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "app/outputs.hpp"
#include "app/scan_input.hpp"
#include "io/atomic_file.hpp"
#include "core/error.hpp"
#include "fhd_git_revision.h"  // generated in the build directory (cmake/git_revision.cmake)

namespace fs = std::filesystem;
using nlohmann::json;

namespace fhd::app {

std::string fnv1a_hex(const std::string& s) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string build_revision() { return FHD_GIT_REVISION; }

std::string options_fingerprint(const SolverOptions& o, const std::string& device, const std::string& revision) {
  // Every option that changes a scan's result (batch's up-to-date check).
  json j = {{"trig", o.trig},
            {"kernel", o.kernel},
            {"iters", o.iters},
            {"tol", o.tol},
            {"lambda", o.lambda_auto ? json("auto") : o.lambda_given ? json(o.lambda) : json("default")},
            {"dcf", o.dcf},
            {"gridding", !o.no_gridding},
            {"fhd", o.fhd},
            {"nufft_tol", o.nufft_tol},
            {"reg", o.reg},
            {"precond", !o.no_precond},
            {"admm_rho", o.admm_rho},
            {"admm_inner", o.admm_inner},
            {"coil_combine", o.coil_combine},
            {"maps", o.maps},
            {"calibration", o.calibration},
            {"maps_crop", o.maps_crop},
            {"field_comp", o.field_comp},
            {"segments", o.segments},
            {"device", device},
            {"version", FHD_VERSION},
            // FHD_VERSION stayed 0.1.0 through fixes that change images: the
            // build's git revision makes another build redo the scans.
            {"revision", revision}};
  return fnv1a_hex(j.dump(-1, ' ', false, json::error_handler_t::replace));  // a path that is not UTF-8 still hashes
}

std::vector<std::string> output_names(const std::vector<std::string>& files) {
  std::vector<std::string> names;
  // Taken from the start: the batch's own files in DIR, and names that are
  // not a directory of their own (a scan "..h5" had DIR/. as its output).
  // "logs": scripts/slurm/submit.sh puts the tasks' logs in OUT/logs.
  std::set<std::string> seen = {"", ".", "..", "summary.csv", "summary.json", "overview.png", "shards", "logs"};
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

bool is_bart(const std::string& file);
std::vector<std::string> input_files(const std::string& file);

// Where writing could reach `file`: its directory entry (a link itself, its
// directory resolved), and what it resolves to when it is a link. `dirs`
// caches resolved directories: a list of a million scans shares a few.
std::vector<fs::path> places(const std::string& file, std::map<fs::path, fs::path>& dirs) {
  std::error_code ec;
  fs::path abs = fs::absolute(file, ec).lexically_normal();
  if (!abs.has_filename()) abs = abs.parent_path();
  auto [at, fresh] = dirs.try_emplace(abs.parent_path());
  if (fresh) at->second = fs::weakly_canonical(abs.parent_path(), ec);
  if (fresh && ec) at->second = abs.parent_path();
  std::vector<fs::path> out = {at->second / abs.filename()};
  if (fs::is_symlink(fs::symlink_status(abs, ec))) {
    fs::path target = fs::weakly_canonical(abs, ec);
    if (!ec) out.push_back(target);
  }
  return out;
}

}  // namespace

void check_inputs_outside_outputs(const std::vector<std::string>& files, const std::vector<std::string>& names,
                                  const std::string& out) {
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(out, ec), ec);
  std::map<std::string, std::string> owner = {{"summary.csv", "its summary.csv"},
                                              {"summary.json", "its summary.json"},
                                              {"overview.png", "its overview.png"},
                                              {"shards", "its shard files"},
                                              {".fhdrecon-batch.lock", "its lock file"}};
  for (std::size_t k = 0; k < names.size(); ++k)
    owner.emplace(names[k], "the outputs of " + files[k] + " (" + out + "/" + names[k] + ", replaced whole)");
  std::map<fs::path, fs::path> dirs;
  for (const std::string& f : files)
    for (const std::string& in : input_files(f))
      for (const fs::path& place : places(in, dirs)) {
        const std::string entry = entry_in(place, dir);
        if (entry.empty()) continue;
        const auto it = owner.find(entry);
        const bool temporary = entry.find(".fhdtmp-") != std::string::npos;  // outputs being written
        if (it == owner.end() && !temporary) continue;
        throw InputError(in + ": is where batch --out " + out + " writes " +
                         (temporary ? std::string("its temporary files") : it->second) +
                         "; it would be overwritten (move the scan out of " + out + " or choose another --out)");
      }
}

namespace {

// As recon decides (app/scan_input.hpp): a .cfl/.hdr name, or a name without
// extension that is no file (a base name). An HDF5 file without extension was
// read as BART before, its row blaming a --traj-file batch does not take.
bool is_bart(const std::string& file) {
  try {
    return is_bart_input(file, "");
  } catch (const InputError&) {
    return false;  // a name the file system refuses: read_batch_scan says why
  }
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

// Anything of another shape would raise a raw json exception when read for a skip.
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

namespace {

// Why the report was not written for `input` ("" when it was). Output names
// follow the list's order, so DIR/<name> can hold another scan's outputs: the
// list given in another order, a plain batch then a sharded one, or a second
// study with the same file stems into the same --out; they were skipped as up
// to date, their row showing the other scan's PSNR (hunt19 finding 1). The
// same file is std::filesystem::equivalent (a relative and an absolute path,
// a link); for BART the .cfl of the pair.
std::string other_scan(const json& j, const std::string& input) {
  const json::json_pointer at("/batch/input");
  if (!j.contains(at) || !j[at].is_string() || j[at].get<std::string>().empty()) return "report.json names no input";
  const std::string was = j[at].get<std::string>();
  std::error_code ec;
  const bool same = fs::equivalent(input_files(was).front(), input_files(input).front(), ec);
  if (ec) return "cannot tell whether the outputs are of this scan (" + was + ": " + ec.message() + ")";
  return same ? "" : "outputs are of another scan: " + was;
}

}  // namespace

std::string why_not_up_to_date(const std::string& input, const std::string& dir, const std::string& fingerprint) {
  std::string report = dir + "/report.json";
  std::error_code ec;
  const fs::file_status st = fs::status(report, ec);
  if (!fs::exists(st)) return "no report.json";
  // A FIFO there held the batch (and DIR's lock) for ever at its open.
  if (!fs::is_regular_file(st)) return "report.json is not a plain file";
  json j;
  try {
    std::ifstream f(report);
    j = json::parse(f);
  } catch (const std::exception&) {
    return "report.json unreadable";
  }
  if (std::string why = report_shape_problem(j); !why.empty()) return "report.json " + why;
  if (std::string why = other_scan(j, input); !why.empty()) return why;
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

// Appends the path on one line (trailing blanks and a CR dropped; blank and
// '#' lines skipped).
void add_list_line(std::string line, std::vector<std::string>& files) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  if (!line.empty() && line[0] != '#') files.push_back(std::move(line));
}

}  // namespace

std::vector<std::string> read_file_list(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))  // fopen opens one, and reading it said only "read error"
    throw InputError("--files-from " + path + ": is a directory (expected a text list of scan paths, one per line)");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError("--files-from " + path + ": cannot be read: " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  auto refuse = [&](const std::string& why) {
    return InputError("--files-from " + path + ": " + why + " (expected a text list of scan paths, one per line)");
  };
  std::vector<std::string> files;
  std::string line;
  std::size_t lines = 1, total = 0;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
    total += n;
    if (total > kMaxFileListBytes)
      throw refuse("more than " + std::to_string(kMaxFileListBytes >> 20) + " MiB; split the list");
    for (std::size_t i = 0; i < n; ++i) {
      const char c = buf[i];
      if (c == '\n') {
        add_list_line(std::move(line), files);
        line.clear();
        ++lines;
        continue;
      }
      auto at = [&] { return "line " + std::to_string(lines); };
      if (line.empty() && lines > kMaxFileListEntries)
        throw refuse("more than " + std::to_string(kMaxFileListEntries) + " lines; split the list");
      if (c == '\0') throw refuse(at() + " holds a NUL byte");
      if (line.size() == kMaxPathChars) throw refuse(at() + " is longer than " + std::to_string(kMaxPathChars) + " characters");
      line += c;
    }
  }
  if (std::ferror(f)) throw InputError("--files-from " + path + ": cannot be read: " + std::strerror(errno));
  add_list_line(std::move(line), files);
  return files;
}

Shard parse_shard(const std::string& s) {
  Shard sh;
  std::size_t slash = s.find('/');
  auto number = [&](const std::string& part, std::size_t& v) {
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoul(part);
    return true;
  };
  if (slash == std::string::npos || !number(s.substr(0, slash), sh.index) || !number(s.substr(slash + 1), sh.count) ||
      sh.count == 0 || sh.index >= sh.count)
    throw InputError("--shard " + s + ": expected I/N with 0 <= I < N (e.g. 3/10)");
  return sh;
}

std::vector<std::size_t> shard_positions(std::size_t files, Shard s) {
  std::vector<std::size_t> pos;
  for (std::size_t i = s.index; i < files; i += s.count) pos.push_back(i);
  return pos;
}

std::string list_hash(const std::vector<std::string>& sorted_files) {
  std::string all;
  for (const std::string& f : sorted_files) all += f + '\n';
  return fnv1a_hex(all);
}

namespace {

// Opens and flocks `path` (created when missing); -1 when another holds it.
int lock_file(const std::string& path, int how) {
  // Not through a link: one planted there created a file where it pointed,
  // and two DIRs whose links named one file excluded each other.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP)
    throw InputError("batch --out: the lock file " + path + " is a symbolic link; remove it");
  if (fd < 0) throw InputError("batch --out: cannot create the lock file " + path + ": " + std::strerror(errno));
  if (::flock(fd, how | LOCK_NB) == 0) return fd;
  const int err = errno;
  ::close(fd);
  if (err == EWOULDBLOCK) return -1;
  throw InputError("batch --out: cannot lock " + path + ": " + std::strerror(err));
}

}  // namespace

BatchLock::BatchLock(const std::string& dir, const Shard* shard, bool made_dir)
    : dir_(dir), made_dir_(made_dir && !shard) {
  auto taken = [&](const std::string& by) {
    return InputError("batch --out " + dir + ": " + by +
                      " is writing into this directory; wait for it to end or choose another --out");
  };
  fd_ = lock_file(dir + "/.fhdrecon-batch.lock", shard ? LOCK_SH : LOCK_EX);
  if (fd_ < 0) throw taken("another batch");
  if (!shard) return;
  fs::create_directories(dir + "/shards");
  char name[64];
  std::snprintf(name, sizeof name, "/shards/.shard-%04zu-of-%04zu.lock", shard->index, shard->count);
  shard_fd_ = lock_file(dir + name, LOCK_EX);
  if (shard_fd_ < 0) {
    ::close(fd_);
    throw taken("another task of shard " + std::to_string(shard->index) + "/" + std::to_string(shard->count));
  }
}

// DIR holds nothing but the lock: unlinked while still held (no other batch
// can be inside), then the empty directory removed.
void BatchLock::remove_if_untouched() const {
  std::error_code ec;
  const std::string lock = dir_ + "/.fhdrecon-batch.lock";
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec))
    if (e.path().filename() != ".fhdrecon-batch.lock") return;
  if (ec) return;
  fs::remove(lock, ec);
  if (!ec) fs::remove(dir_, ec);
}

BatchLock::~BatchLock() {
  if (made_dir_ && fd_ >= 0 && std::uncaught_exceptions() > 0) remove_if_untouched();
  if (shard_fd_ >= 0) ::close(shard_fd_);
  if (fd_ >= 0) ::close(fd_);
}

TempDir::TempDir(const std::string& prefix) {
  std::mt19937_64 rng(std::random_device{}());
  path_ = (fs::temp_directory_path() / ("fhdrecon-" + prefix + "-" + std::to_string(rng()))).string();
  fs::create_directories(path_);
  register_temporary(path_);  // removed on SIGINT/SIGTERM too
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
  forget_temporary(path_);
}

}  // namespace fhd::app
