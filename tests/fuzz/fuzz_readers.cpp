// fhd_fuzz: a seeded mutation fuzzer for every reader of untrusted files
// (docs/robustness.md). It writes valid seed files with fhdrecon's own writers,
// mutates them (bit flips, byte and size-field overwrites, truncations,
// splices, number swaps in text) and runs each mutant through its reader in a
// forked child with a time limit. The child reports how the reader answered:
//   accepted   the reader returned a scan/Q/profile (validated)
//   rejected   one InputError line (the CLI's exit 2), or a cache/profile
//              fallback (nullopt, one warning)
//   other      any other exception, or an error message of several lines
//   crash      the child died (signal, sanitizer report, abort)
//   hang       the child outlived the time limit
// Exit status 0 only when other, crash and hang are all 0.
//
//   fhd_fuzz [--per-reader N] [--seconds S] [--min-per-reader K] [--seed X] [--readers a,b] [--keep DIR]
//            [--limit-s T] [--crashers DIR|none]
// The files in tests/fuzz/crashers (--crashers) are read first, unmutated, as
// the row "crashers" (a name for --readers too).
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "app/scan_input.hpp"
#include "cuda/gather/tune.hpp"
#include "io/cfl.hpp"
#include "io/reader_child.hpp"
#include "io/scan_file.hpp"
#include "core/error.hpp"
#include "recon/plan/qcache.hpp"
#if defined(FHD_HAVE_ISMRMRD)
#include "io/ismrmrd_io.hpp"
#endif

namespace fs = std::filesystem;
using namespace fhd;

namespace {

using Bytes = std::string;
using Rng = std::mt19937_64;

Bytes slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void spit(const fs::path& p, const Bytes& b) { std::ofstream(p, std::ios::binary | std::ios::trunc) << b; }

std::size_t pick(Rng& r, std::size_t n) { return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(r) : 0; }

// ---- mutations ----

// Values that break size arithmetic: zero, one, all ones, sign bits, 2^40, near-overflow.
std::uint64_t interesting(Rng& r) {
  static const std::uint64_t v[] = {0, 1, 2, 3, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
                                    1ull << 32, 1ull << 40, 0x7fffffffffffffffull, ~0ull, 65536, 8192, 400};
  return v[pick(r, sizeof v / sizeof v[0])];
}

void flip_bits(Bytes& b, Rng& r) {
  const int n = 1 + int(pick(r, 8));
  for (int i = 0; i < n && !b.empty(); ++i) b[pick(r, b.size())] ^= char(1 << pick(r, 8));
}

void overwrite_size(Bytes& b, Rng& r) {
  const std::size_t width = std::size_t(1) << pick(r, 4);  // 1, 2, 4 or 8 bytes
  if (b.size() < width) return;
  const std::uint64_t v = interesting(r);
  std::memcpy(&b[pick(r, b.size() - width + 1) & ~(width - 1)], &v, width);
}

void truncate(Bytes& b, Rng& r) { b.resize(pick(r, b.size() + 1)); }

void splice(Bytes& b, const Bytes& other, Rng& r) {
  if (b.empty() || other.empty()) return;
  const std::size_t len = 1 + pick(r, std::min<std::size_t>(4096, other.size()));
  const std::size_t from = pick(r, other.size() - std::min(len, other.size()) + 1);
  const std::size_t to = pick(r, b.size());
  b.replace(to, std::min(len, b.size() - to), other.substr(from, len));
}

// Replaces one number in a text file (BART header, JSON) by an extreme one.
void swap_number(Bytes& b, Rng& r) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (std::isdigit(static_cast<unsigned char>(b[i])) && (i == 0 || !std::isdigit(static_cast<unsigned char>(b[i - 1]))))
      starts.push_back(i);
  if (starts.empty()) return;
  const std::size_t s = starts[pick(r, starts.size())];
  std::size_t e = s;
  while (e < b.size() && (std::isdigit(static_cast<unsigned char>(b[e])) || b[e] == '.' || b[e] == 'e')) ++e;
  static const char* repl[] = {"0", "-1", "1e30", "nan", "4294967296", "99999999999999999999", "2.5",
                               "\"x\"", "[]", "{}", "null", "65537", "9223372036854775807", "-0"};
  b.replace(s, e - s, repl[pick(r, sizeof repl / sizeof repl[0])]);
}

void mutate(Bytes& b, const Bytes& other, Rng& r, bool text) {
  const int rounds = 1 + int(pick(r, 3));
  for (int i = 0; i < rounds; ++i) switch (pick(r, text ? 5 : 4)) {
      case 0: flip_bits(b, r); break;
      case 1: overwrite_size(b, r); break;
      case 2: pick(r, 4) == 0 ? truncate(b, r) : flip_bits(b, r); break;
      case 3: splice(b, other, r); break;
      default: swap_number(b, r); break;
    }
}

// ---- readers ----

enum Outcome { kAccepted = 10, kRejected = 11, kOther = 12 };

struct Reader {
  std::string name;
  std::vector<std::string> files;       // the seed's files, relative to the seed dir
  std::vector<bool> text;               // per file: mutate as text
  std::vector<std::size_t> targets;     // the files mutated (one per mutant, at random)
  std::function<void(const fs::path& seed_dir)> seed;  // writes valid files
  std::function<bool(const fs::path& dir)> read;       // true: accepted, false: fallback (rejected)
};

Scan seed_scan(ImageGrid g, std::size_t m, unsigned s) {
  Rng r(s);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  Scan sc;
  sc.grid = g;
  sc.traj.resize(m);
  sc.data.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    sc.traj.kx[i] = u(r) * g.nx, sc.traj.ky[i] = u(r) * g.ny, sc.traj.kz[i] = g.nz > 1 ? u(r) * g.nz : 0.f;
    sc.data[i] = {u(r), u(r)};
  }
  sc.provenance = {{"trajectory", "random"}};
  return sc;
}

const ImageGrid kSeedGrid{16, 16, 1};

std::string q_seed_key() {
  static const std::string k = q_key(seed_scan(kSeedGrid, 64, 1).traj, {}, kSeedGrid, TrigMode::Single);
  return k;
}

std::vector<Reader> readers() {
  std::vector<Reader> v;
  v.push_back({"hdf5-scan", {"scan.h5"}, {false}, {0},
               [](const fs::path& d) {
                 Scan s = seed_scan(kSeedGrid, 64, 1);
                 s.dcf.assign(64, 1.0f);
                 write_scan((d / "scan.h5").string(), s);
               },
               [](const fs::path& d) { return !app::read_scans_any((d / "scan.h5").string(), "", 0).empty(); }});
#if defined(FHD_HAVE_ISMRMRD)
  // One coil, and two coils with noise acquisitions (the multi-coil reader's paths).
  v.push_back({"ismrmrd-1coil", {"raw.mrd"}, {false}, {0},
               [](const fs::path& d) { write_ismrmrd((d / "raw.mrd").string(), {seed_scan(kSeedGrid, 64, 2)}, 16); },
               [](const fs::path& d) { return !app::read_scans_any((d / "raw.mrd").string(), "", 0).empty(); }});
  v.push_back({"ismrmrd-coils", {"raw.mrd"}, {false}, {0},
               [](const fs::path& d) {
                 Scan a = seed_scan(kSeedGrid, 64, 2), b = a;
                 for (auto& x : b.data) x *= 2.0f;
                 a.noise.assign(32, cfloat(0.1f, -0.1f));
                 b.noise.assign(32, cfloat(-0.2f, 0.1f));
                 write_ismrmrd((d / "raw.mrd").string(), {a, b}, 16);
               },
               [](const fs::path& d) { return !app::read_scans_any((d / "raw.mrd").string(), "", 0).empty(); }});
#endif
  // A 2-coil BART pair; the k-space's and the trajectory's files are mutated apart.
  auto bart_seed = [](const fs::path& d) {
    Scan a = seed_scan(kSeedGrid, 64, 3), b = a;
    for (auto& x : b.data) x *= -1.0f;
    write_bart_scan((d / "k_traj").string(), (d / "k").string(), {a, b}, 16);
  };
  auto bart_read = [](const fs::path& d) {
    return !app::read_scans_any((d / "k.cfl").string(), (d / "k_traj").string(), 0).empty();
  };
  v.push_back({"bart-kspace", {"k_traj.hdr", "k_traj.cfl", "k.hdr", "k.cfl"}, {true, false, true, false}, {2, 3},
               bart_seed, bart_read});
  v.push_back({"bart-traj", {"k_traj.hdr", "k_traj.cfl", "k.hdr", "k.cfl"}, {true, false, true, false}, {0, 1},
               bart_seed, bart_read});
  v.push_back({"qcache", {q_seed_key() + ".q"}, {false}, {0},
               [](const fs::path& d) {
                 auto q = std::make_shared<QValues>(kSeedGrid.doubled().voxels());
                 for (std::size_t i = 0; i < q->size(); ++i) (*q)[i] = cfloat(float(i), 1.0f);
                 store_q(d.string(), q_seed_key(), q);
               },
               [](const fs::path& d) { return load_q(d.string(), q_seed_key()) != nullptr; }});
  v.push_back({"profile", {"tune-gpu.json"}, {true}, {0},
               [](const fs::path& d) {
                 const std::string p = (d / "tune-gpu.json").string();
                 tune::write_profile(p, "gpu", tune::kKernelVersion, "coarsened", "sfu", {256, 2, 8, 1024},
                                     {{"pairs_per_s", 3.1e12}, {"matrix", 128}});
                 tune::write_profile(p, "gpu", tune::kKernelVersion, "gather", "single", {128, 0, 0, 0});
               },
               [](const fs::path& d) {
                 const std::string p = (d / "tune-gpu.json").string();
                 bool a = tune::read_profile(p, "gpu", tune::kKernelVersion, "coarsened", "sfu").has_value();
                 bool b = tune::read_profile(p, "gpu", tune::kKernelVersion, "gather", "single").has_value();
                 return a && b;
               }});
  return v;
}

// The child: run the reader, classify, _exit with the outcome code.
[[noreturn]] void child(const Reader& rd, const fs::path& dir, int limit_s) {
  alarm(unsigned(limit_s));
  spdlog::set_level(spdlog::level::off);
  int code = kOther;
  try {
    code = rd.read(dir) ? kAccepted : kRejected;
  } catch (const InputError& e) {
    code = std::strchr(e.what(), '\n') ? kOther : kRejected;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "other exception: %s\n", e.what());
  }
  std::fflush(nullptr);
  _exit(code);
}

struct Counts {
  long files = 0, accepted = 0, rejected = 0, other = 0, crashes = 0, hangs = 0;
};

// tests/fuzz/crashers. __FILE__ is relative to the build directory where
// ccache's base_dir rewrote it, and the build directory holds this executable.
std::string crashers_beside_source() {
  fs::path dir = fs::path(__FILE__).parent_path() / "crashers";
  std::error_code ec;
  if (dir.is_relative()) dir = fs::read_symlink("/proc/self/exe", ec).parent_path() / dir;
  return dir.lexically_normal().string();
}

struct Options {
  long per_reader = 1000;
  double seconds = 0;  // 0: no time bound
  long min_per_reader = 25;  // files each reader gets even past its time share
  std::uint64_t seed = 1;
  int limit_s = 20;
  std::string only, keep;
  // Known bad files, read first (this source's crashers/ folder; "none": skip).
  std::string crashers = crashers_beside_source();
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--per-reader") o.per_reader = std::stol(v);
    else if (a == "--seconds") o.seconds = std::stod(v);
    else if (a == "--min-per-reader") o.min_per_reader = std::stol(v);
    else if (a == "--seed") o.seed = std::stoull(v);
    else if (a == "--limit-s") o.limit_s = std::stoi(v);
    else if (a == "--readers") o.only = "," + v + ",";
    else if (a == "--keep") o.keep = v;
    else if (a == "--crashers") o.crashers = v;
    else throw std::invalid_argument("unknown option " + a);
  }
  return o;
}

// Runs `rd` on `dir` in a forked child and counts how it ended; returns
// "crash", "hang" or "other" when it ended badly, else "".
std::string run_child(const Reader& rd, const fs::path& dir, const Options& o, Counts& c, int& status) {
  ++c.files;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) child(rd, dir, o.limit_s);
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return ++c.hangs, "hang";
  if (!WIFEXITED(status)) return ++c.crashes, "crash";
  if (WEXITSTATUS(status) == kAccepted) return ++c.accepted, "";
  if (WEXITSTATUS(status) == kRejected) return ++c.rejected, "";
  if (WEXITSTATUS(status) == kOther) return ++c.other, "other";
  return ++c.crashes, "crash";  // a sanitizer's exit code, or abort()
}

// The files that once crashed or hung a reader (tests/fuzz/crashers), each read
// as the CLI reads --input, in a forked child of this process: one of them
// crashed only in the fuzzer's own process (its memory layout), never alone.
Counts run_crashers(const fs::path& dir, const Options& o) {
  Counts c;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string file = e.path().string();
    const Reader rd{"crasher", {}, {}, {}, {},
                    [file](const fs::path&) { return !app::read_scans_any(file, "", 0).empty(); }};
    int status = 0;
    if (!run_child(rd, dir, o, c, status).empty()) std::fprintf(stderr, "fhd_fuzz: %s: ended badly\n", file.c_str());
  }
  return c;
}

// Prints one reader's counts and adds them to `total`.
void add_row(const std::string& name, const Counts& c, Counts& total) {
  std::printf("%-14s %7ld %9ld %9ld %6ld %8ld %6ld\n", name.c_str(), c.files, c.rejected, c.accepted, c.other,
              c.crashes, c.hangs);
  std::fflush(stdout);
  total.files += c.files, total.rejected += c.rejected, total.accepted += c.accepted;
  total.other += c.other, total.crashes += c.crashes, total.hangs += c.hangs;
}

// Runs one mutant; returns the outcome ("crash" and "hang" included) and keeps it when bad.
void run_one(const Reader& rd, const fs::path& seed_dir, const fs::path& work, Rng& rng, const Options& o,
             long index, Counts& c) {
  fs::remove_all(work);
  fs::create_directories(work);
  for (const auto& f : rd.files) fs::copy_file(seed_dir / f, work / f);
  const std::size_t target = rd.targets[pick(rng, rd.targets.size())];
  Bytes b = slurp(seed_dir / rd.files[target]);
  const Bytes other = slurp(seed_dir / rd.files[pick(rng, rd.files.size())]);
  mutate(b, other, rng, rd.text[target]);
  spit(work / rd.files[target], b);
  int status = 0;
  const std::string bad = run_child(rd, work, o, c, status);
  if (!bad.empty() && !o.keep.empty()) {
    const fs::path k = fs::path(o.keep) / (rd.name + "-" + std::to_string(index) + "-" + bad);
    fs::create_directories(k);
    for (const auto& f : rd.files) fs::copy_file(work / f, k / f, fs::copy_options::overwrite_existing);
    // How it ended, for the report: a signal's number or the exit status.
    std::ofstream(k / "status.txt") << (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                            : "exit " + std::to_string(WEXITSTATUS(status)))
                                    << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  fhd::serve_reader_child(argc, argv);  // the readers' libhdf5 guard starts this executable again
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fhd_fuzz: %s\n", e.what());
    return 2;
  }
  // Bounds what a mutant may make a reader allocate, whatever this machine has.
  ::setenv("FHDRECON_MEMORY_LIMIT", "1G", 1);
  ::setenv("FHDRECON_NO_TUNE", "0", 1);
  // The readers' libhdf5 guard (io/reader_child.hpp) must give up before our own limit.
  ::setenv("FHDRECON_READ_TIMEOUT", std::to_string(std::max(1, o.limit_s / 4)).c_str(), 1);
  const fs::path root = fs::temp_directory_path() / ("fhd-fuzz-" + std::to_string(::getpid()));
  const auto t0 = std::chrono::steady_clock::now();
  const auto all = readers();
  long active = 0;
  for (const auto& rd : all) active += o.only.empty() || o.only.find("," + rd.name + ",") != std::string::npos;
  std::printf("%-14s %7s %9s %9s %6s %8s %6s\n", "reader", "files", "rejected", "accepted", "other", "crashes",
              "hangs");
  Counts total;
  if (o.crashers != "none" && fs::is_directory(o.crashers) && (o.only.empty() || o.only.find(",crashers,") != std::string::npos))
    add_row("crashers", run_crashers(o.crashers, o), total);
  int done = 0;
  for (const auto& rd : all) {
    if (!o.only.empty() && o.only.find("," + rd.name + ",") == std::string::npos) continue;
    const fs::path seed_dir = root / rd.name / "seed", work = root / rd.name / "work";
    fs::create_directories(seed_dir);
    rd.seed(seed_dir);
    Rng rng(o.seed * 1000003 + std::hash<std::string>{}(rd.name));
    Counts c;
    // Each reader gets an equal share of the time left.
    const double share = o.seconds > 0 ? (o.seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) / double(active - done) : 0;
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < o.per_reader; ++i) {
      // A time share never starves a slow reader (ISMRMRD: a child process per file) below its minimum.
      if (o.seconds > 0 && i >= o.min_per_reader &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > share)
        break;
      run_one(rd, seed_dir, work, rng, o, i, c);
    }
    ++done;
    add_row(rd.name, c, total);
  }
  std::printf("%-14s %7ld %9ld %9ld %6ld %8ld %6ld\n", "total", total.files, total.rejected, total.accepted,
              total.other, total.crashes, total.hangs);
  std::error_code ec;
  fs::remove_all(root, ec);
  return total.other + total.crashes + total.hangs == 0 ? 0 : 1;
}
