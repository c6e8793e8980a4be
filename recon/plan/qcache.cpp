// Q cache on disk (recon/plan/qcache.hpp).
//
// File layout (little-endian, as written by this machine):
//   magic "FHDQCACH" | u32 version | u32 key length | key bytes |
//   u64 count | count x complex64 | u64 checksum of the key and the Q bytes
// The reader checks every field; the checksum catches flipped or lost bytes,
// in the key too: a file copied to another key's name with its embedded key
// rewritten to match is refused (version 1 summed only Q and accepted it).
// Version 3 changed the checksum to LaneHash (Hash128 before, one serial
// multiply chain: a third of a cached Q's read); older files are refused as
// "unknown version", and Q is computed and stored again under the same name.
#include "recon/plan/qcache.hpp"

#include <spdlog/spdlog.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "recon/plan/lane_hash.hpp"

namespace fhd {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'F', 'H', 'D', 'Q', 'C', 'A', 'C', 'H'};
constexpr std::uint32_t kVersion = 3;

// The key's 128-bit non-cryptographic hash: two 64-bit lanes, each a
// multiply-xorshift mix of 8-byte words, finalized with splitmix64. Each word
// waits for the one before (~2.9 GB/s: 6 ms for 1M samples with weights), which
// is why the file's checksum is LaneHash. The key keeps this hash: another
// would rename every cache entry, and nothing removes the old ones (a checksum
// change only rewrites them in place). The cache guards against accidents, not
// adversaries.
class Hash128 {
 public:
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, c + i, 8);
      word(w);
    }
    std::uint64_t tail = 0;
    if (n > i) std::memcpy(&tail, c + i, n - i);
    word(tail ^ (std::uint64_t(n - i) << 56));
    length_ += n;
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof v);
  }
  std::string hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)splitmix64_fin(a_ ^ length_),
                  (unsigned long long)splitmix64_fin(b_ + length_));
    return buf;
  }

 private:
  void word(std::uint64_t w) {
    a_ = (a_ ^ w) * 0x9e3779b97f4a7c15ULL;
    a_ ^= a_ >> 29;
    b_ = (b_ + w) * 0xc2b2ae3d27d4eb4fULL;
    b_ ^= b_ >> 31;
    b_ = b_ * 0x165667b19e3779f9ULL + a_;
  }
  std::uint64_t a_ = 0x243f6a8885a308d3ULL, b_ = 0x13198a2e03707344ULL, length_ = 0;
};

// The checksum's stream is the key, then Q's bytes: this primes it with the
// key, for the writer (checksum) and the reader (hashing chunk by chunk) alike.
LaneHash keyed_hash(const std::string& key) {
  LaneHash h;
  h.bytes(key.data(), key.size());
  return h;
}

std::uint64_t checksum(const std::string& key, const QValues& q) {
  LaneHash h = keyed_hash(key);
  h.bytes(q.data(), q.size() * sizeof(cfloat));
  return h.u64();
}

std::string path_of(const std::string& dir, const std::string& key) { return (fs::path(dir) / (key + ".q")).string(); }

// The doubled grid's point count encoded in a key, or 0 when the key is not ours.
std::size_t points_of_key(const std::string& key) {
  int nx = 0, ny = 0, nz = 0;
  if (std::sscanf(key.c_str(), "q1-%dx%dx%d-", &nx, &ny, &nz) != 3 || nx < 1 || ny < 1 || nz < 1) return 0;
  return ImageGrid{nx, ny, nz}.doubled().voxels();
}

template <class T>
bool read_value(std::ifstream& f, T& v) {
  return bool(f.read(reinterpret_cast<char*>(&v), sizeof v));
}

void no_hook(const std::string&) {}
std::atomic<QMemory*> g_memory{nullptr};
QTemporaryHook g_on_create = no_hook, g_on_done = no_hook;

// Removes <anything>.q.tmp.<pid>.<n> files whose writer is gone (a killed run).
void remove_stale_temporaries(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::size_t at = name.find(".q.tmp.");
    if (at == std::string::npos) continue;
    const long pid = std::strtol(name.c_str() + at + 7, nullptr, 10);
    if (pid <= 0 || pid == long(::getpid())) continue;
    if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // still running (or not ours to judge)
    std::error_code rm;
    fs::remove(e.path(), rm);
  }
}

}  // namespace

void set_q_temporary_hooks(QTemporaryHook on_create, QTemporaryHook on_done) {
  g_on_create = on_create ? on_create : no_hook;
  g_on_done = on_done ? on_done : no_hook;
}

std::string q_key(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid, TrigMode trig,
                  const std::string& kernel) {
  Hash128 h;
  const std::uint64_t m = traj.size();
  h.value(m);
  h.bytes(traj.kx.data(), traj.kx.size() * sizeof(float));
  h.bytes(traj.ky.data(), traj.ky.size() * sizeof(float));
  h.bytes(traj.kz.data(), traj.kz.size() * sizeof(float));
  const std::uint64_t nw = w.size();  // 0: Phi = 1, distinct from any explicit weights
  h.value(nw);
  h.bytes(w.data(), w.size() * sizeof(float));
  const std::int32_t g[4] = {grid.nx, grid.ny, grid.nz, int(trig)};
  h.bytes(g, sizeof g);
  h.bytes(kernel.data(), kernel.size());  // "" (the default) hashes as nothing: older keys stay valid
  return "q1-" + std::to_string(grid.nx) + "x" + std::to_string(grid.ny) + "x" + std::to_string(grid.nz) + "-" +
         to_string(trig) + (kernel.empty() ? "" : "-" + kernel) + "-" + std::to_string(m) + "-" + h.hex();
}

std::string default_cache_root() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return (fs::path(xdg) / "fhdrecon").string();
  const char* home = std::getenv("HOME");
  if (home && *home) return (fs::path(home) / ".cache" / "fhdrecon").string();
  return "";
}

std::string default_q_cache_dir() {
  const std::string root = default_cache_root();
  return root.empty() ? "" : (fs::path(root) / "q").string();
}

void set_q_memory(QMemory* memory) { g_memory = memory; }
bool has_q_memory() { return g_memory != nullptr; }

namespace {

// Reads and checks the header up to the count; returns why the file is
// refused, or nullptr when it is Q for `key` with the key's number of values.
const char* check_header(std::ifstream& f, const std::string& key) {
  char magic[8];
  std::uint32_t version = 0, key_len = 0;
  if (!f.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return "not a Q cache file";
  if (!read_value(f, version) || version != kVersion) return "unknown version";
  if (!read_value(f, key_len) || key_len != key.size()) return "made for another key";
  std::string stored(key_len, '\0');
  if (!f.read(stored.data(), key_len) || stored != key) return "made for another key";
  std::uint64_t count = 0;
  const std::size_t expected = points_of_key(key);
  if (!read_value(f, count) || expected == 0 || count != expected) return "wrong number of Q values";
  return nullptr;
}

// Fills `q` from the file in chunks and hashes each chunk right after its
// read, while it is still in the CPU's caches: the values cross main memory
// once, where reading all then hashing all took two passes over 134 MB. A
// chunk is about one core's L2 (1-2 MB chunks measured best, 256 KB to 16 MB
// within ~10%).
constexpr std::size_t kChunkBytes = std::size_t(1) << 20;

bool read_hashing(std::ifstream& f, QValues& q, LaneHash& h) {
  auto* p = reinterpret_cast<char*>(q.data());
  const std::size_t total = q.size() * sizeof(cfloat);
  for (std::size_t at = 0; at < total; at += kChunkBytes) {
    const std::size_t n = std::min(kChunkBytes, total - at);
    if (!f.read(p + at, std::streamsize(n))) return false;
    h.bytes(p + at, n);
  }
  return true;
}

SharedQ load_q_file(const std::string& dir, const std::string& key) {
  const std::string path = path_of(dir, key);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return nullptr;  // a plain miss: no warning
  auto reject = [&](const char* why) -> SharedQ {
    spdlog::warn("Q cache: ignoring {}: {}", path, why);
    return nullptr;
  };
  // Opening a FIFO there blocked until a writer came: for ever.
  if (!fs::is_regular_file(st)) return reject("not a regular file");
  std::ifstream f(path, std::ios::binary);
  if (!f) return reject("cannot open it");
  if (const char* why = check_header(f, key)) return reject(why);
  auto q = std::make_shared<QValues>(points_of_key(key));  // uninitialised: the read fills it
  LaneHash h = keyed_hash(key);
  std::uint64_t sum = 0;
  if (!read_hashing(f, *q, h) || !read_value(f, sum)) return reject("truncated");
  if (f.peek() != std::ifstream::traits_type::eof()) return reject("trailing bytes");
  if (sum != h.u64()) return reject("checksum mismatch (corrupt)");
  return q;
}

}  // namespace

SharedQ load_q(const std::string& dir, const std::string& key) {
  if (dir.empty()) return nullptr;
  QMemory* memory = g_memory;
  if (memory)
    if (SharedQ q = memory->find(key)) return q;
  SharedQ q = load_q_file(dir, key);
  if (q && memory) memory->keep(key, q);
  return q;
}

bool store_q(const std::string& dir, const std::string& key, const SharedQ& shared) {
  if (dir.empty()) return false;
  const std::string path = path_of(dir, key);
  auto fail = [&](const std::string& why) {
    spdlog::warn("Q cache: not stored {}: {}", path, why);
    return false;
  };
  if (!shared) return fail("no Q");
  const QValues& q = *shared;
  if (points_of_key(key) != q.size()) return fail("Q size does not match the key's grid");
  if (QMemory* memory = g_memory) memory->keep(key, shared);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create the directory: " + ec.message());
  // A unique temporary name in the same directory, so the rename is atomic.
  std::random_device rd;
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  remove_stale_temporaries(dir);
  g_on_create(tmp);  // an interrupt from here on removes it
  struct Done {
    const std::string& tmp;
    ~Done() { g_on_done(tmp); }
  } done{tmp};
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    const std::uint32_t key_len = std::uint32_t(key.size());
    const std::uint64_t count = q.size(), sum = checksum(key, q);
    f.write(kMagic, 8);
    f.write(reinterpret_cast<const char*>(&kVersion), sizeof kVersion);
    f.write(reinterpret_cast<const char*>(&key_len), sizeof key_len);
    f.write(key.data(), std::streamsize(key.size()));
    f.write(reinterpret_cast<const char*>(&count), sizeof count);
    f.write(reinterpret_cast<const char*>(q.data()), std::streamsize(q.size() * sizeof(cfloat)));
    f.write(reinterpret_cast<const char*>(&sum), sizeof sum);
    f.flush();
    if (!f) {
      f.close();
      fs::remove(tmp, ec);
      return fail("write failed (disk full?)");
    }
  }
  // The rename's own error, kept apart: removing the temporary reuses no
  // error_code of it (that reset it, and the warning said "rename failed: Success").
  std::error_code renamed;
  fs::rename(tmp, path, renamed);
  if (renamed) {
    fs::remove(tmp, ec);
    return fail("renaming " + tmp + " to it failed: " + renamed.message());
  }
  return true;
}

}  // namespace fhd
