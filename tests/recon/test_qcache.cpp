// The Q cache: round trip, key sensitivity, corrupt and mismatched files.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "catch.hpp"
#include "recon/device/device.hpp"
#include "recon/plan/lane_hash.hpp"
#include "recon/plan/plan.hpp"
#include "recon/plan/qcache.hpp"
#include "test_util.hpp"

using namespace fhd;
namespace fs = std::filesystem;

namespace {

// A Q memory that keeps the last Q it was given; and the guard that takes
// any installed memory away at scope end.
struct OneQ : QMemory {
  std::string key;
  SharedQ q;
  SharedQ find(const std::string& k) override { return k == key ? q : nullptr; }
  void keep(const std::string& k, SharedQ v) override { key = k, q = std::move(v); }
};
struct UninstallQMemory {
  ~UninstallQMemory() { set_q_memory(nullptr); }
};

// A fresh directory under the system's temp dir, removed at scope end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("fhd-qcache-test-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Plan options whose Q cache is `dir`.
PlanOptions cached_in(const TempDir& dir) {
  PlanOptions po;
  po.q_cache_dir = dir.path.string();
  return po;
}

Trajectory small_traj() {
  Trajectory t;
  t.resize(50);
  for (std::size_t i = 0; i < t.size(); ++i) {
    t.kx[i] = 0.1f * float(i) - 2.f;
    t.ky[i] = 0.05f * float(i);
    t.kz[i] = -0.03f * float(i);
  }
  return t;
}

SharedQ some_q(const ImageGrid& g) {
  auto q = std::make_shared<QValues>(g.doubled().voxels());
  for (std::size_t i = 0; i < q->size(); ++i) (*q)[i] = cfloat(float(i) * 0.5f, -float(i % 7));
  return q;
}

// Whether load_q gives Q with exactly q's values.
bool loads(const std::string& dir, const std::string& key, const SharedQ& q) {
  const SharedQ back = load_q(dir, key);
  return back && *back == *q;
}

}  // namespace

TEST_CASE("Q cache stores and loads Q bit for bit", "[qcache]") {
  TempDir dir;
  const ImageGrid g{6, 5, 4};
  const std::string key = q_key(small_traj(), {}, g, TrigMode::Single);
  CHECK(!load_q(dir.path.string(), key));  // a miss before the store
  const SharedQ q = some_q(g);
  REQUIRE(store_q((dir.path / "sub").string(), key, q));  // creates the directory
  const SharedQ back = load_q((dir.path / "sub").string(), key);
  REQUIRE(back);
  CHECK(*back == *q);
  // No temporary files are left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path / "sub")) {
    ++files;
    CHECK(e.path().extension() == ".q");
  }
  CHECK(files == 1);
}

TEST_CASE("LaneHash hashes a stream: any split into pieces gives the hash of the whole", "[qcache]") {
  std::mt19937 rng(7);
  std::vector<unsigned char> bytes(1000);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  for (const std::size_t n : {std::size_t(0), std::size_t(5), std::size_t(8), std::size_t(63), std::size_t(64),
                              std::size_t(200), bytes.size()}) {
    LaneHash whole;
    whole.bytes(bytes.data(), n);
    for (int trial = 0; trial < 50; ++trial) {
      LaneHash pieces;
      for (std::size_t at = 0; at < n;) {
        const std::size_t k = std::min<std::size_t>(n - at, rng() % (trial < 25 ? 12 : 150));  // 0 too
        pieces.bytes(bytes.data() + at, k);
        at += k;
      }
      CHECK(pieces.u64() == whole.u64());
    }
    if (n == 0) continue;
    LaneHash shorter, flipped;
    shorter.bytes(bytes.data(), n - 1);
    CHECK(shorter.u64() != whole.u64());
    std::vector<unsigned char> other(bytes.begin(), bytes.begin() + std::ptrdiff_t(n));
    other[n / 2] ^= 0x80;
    flipped.bytes(other.data(), n);
    CHECK(flipped.u64() != whole.u64());
  }
  LaneHash zero, zeros;  // padding is not data: one zero byte is not no byte
  const unsigned char z[8] = {};
  zeros.bytes(z, 1);
  CHECK(zero.u64() != zeros.u64());
}

TEST_CASE("Q cache: a Q of several read chunks loads bit for bit, and a flipped byte in any chunk is refused",
          "[qcache]") {
  TempDir dir;
  const std::string d = dir.path.string();
  const ImageGrid g{50, 50, 30};  // 600,000 values: 4.8 MB, several 1 MB chunks and a partial last one
  const std::string key = q_key(small_traj(), {}, g, TrigMode::Single);
  const SharedQ q = some_q(g);
  REQUIRE(store_q(d, key, q));
  CHECK(loads(d, key, q));  // the checksum hashed whole at the store, chunk by chunk at the load
  const fs::path file = dir.path / (key + ".q");
  const auto size = fs::file_size(file);
  const std::uintmax_t head = 8 + 4 + 4 + key.size() + 8, mb = std::uintmax_t(1) << 20;
  for (const std::uintmax_t at : {head, head + mb, head + 3 * mb + 5, size - 9}) {  // Q's first and last bytes, two inside
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    char c = 0;
    f.seekg(std::streamoff(at));
    f.read(&c, 1);
    f.seekp(std::streamoff(at));
    c = char(c ^ 0x01);
    f.write(&c, 1);
    f.flush();
    CHECK(!load_q(d, key));  // refused at this byte
    f.seekp(std::streamoff(at));
    c = char(c ^ 0x01);
    f.write(&c, 1);
    f.close();
    CHECK(loads(d, key, q));  // and loads again once it is put back
  }
}

TEST_CASE("Q cache key changes when any input changes", "[qcache]") {
  const Trajectory t = small_traj();
  const std::vector<float> w(t.size(), 1.0f);
  const ImageGrid g{6, 5, 4};
  const std::string base = q_key(t, {}, g, TrigMode::Single);
  CHECK(base == q_key(t, {}, g, TrigMode::Single));  // deterministic
  CHECK(base.rfind("q1-6x5x4-single-50-", 0) == 0);
  for (int axis = 0; axis < 3; ++axis) {
    Trajectory t2 = t;
    std::vector<float>& k = axis == 0 ? t2.kx : axis == 1 ? t2.ky : t2.kz;
    k[17] = std::nextafter(k[17], 100.f);  // one ulp of one value
    CHECK(q_key(t2, {}, g, TrigMode::Single) != base);
  }
  Trajectory shorter = t;
  shorter.resize(49);
  CHECK(q_key(shorter, {}, g, TrigMode::Single) != base);
  CHECK(q_key(t, w, g, TrigMode::Single) != base);  // explicit unit weights differ from "none"
  std::vector<float> w2 = w;
  w2[3] = 0.5f;
  CHECK(q_key(t, w2, g, TrigMode::Single) != q_key(t, w, g, TrigMode::Single));
  CHECK(q_key(t, {}, ImageGrid{6, 5, 5}, TrigMode::Single) != base);
  CHECK(q_key(t, {}, ImageGrid{5, 6, 4}, TrigMode::Single) != base);
  CHECK(q_key(t, {}, g, TrigMode::Sfu) != base);
  CHECK(q_key(t, {}, g, TrigMode::Double) != base);
  CHECK(q_key(t, {}, g, TrigMode::Single, "separable-tf32") != base);  // a TF32 Q is not an FP32 Q
  CHECK(q_key(t, {}, g, TrigMode::Single, "separable-tf32") != q_key(t, {}, g, TrigMode::Single, "coarsened"));
}

TEST_CASE("Q cache ignores corrupt, truncated and foreign files", "[qcache]") {
  TempDir dir;
  const std::string d = dir.path.string();
  const ImageGrid g{4, 4, 1};
  const std::string key = q_key(small_traj(), {}, g, TrigMode::Single);
  const SharedQ q = some_q(g);
  REQUIRE(store_q(d, key, q));
  const fs::path file = dir.path / (key + ".q");
  const auto size = fs::file_size(file);

  SECTION("one flipped byte in Q") {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(size - 20));
    char c = 0;
    f.read(&c, 1);
    f.seekp(std::streamoff(size - 20));
    c = char(c ^ 0x10);
    f.write(&c, 1);
    f.close();
    CHECK(!load_q(d, key));
  }
  SECTION("an older version (2: the checksum before LaneHash)") {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    const std::uint32_t old_version = 2;
    f.seekp(8);  // after the magic
    f.write(reinterpret_cast<const char*>(&old_version), sizeof old_version);
    f.close();
    CHECK(!load_q(d, key));
  }
  SECTION("truncated") {
    fs::resize_file(file, size - 9);
    CHECK(!load_q(d, key));
  }
  SECTION("trailing bytes") {
    std::ofstream(file, std::ios::app | std::ios::binary) << "x";
    CHECK(!load_q(d, key));
  }
  SECTION("not a cache file") {
    std::ofstream(file, std::ios::trunc) << "hello";
    CHECK(!load_q(d, key));
  }
  SECTION("a file renamed to another key") {
    const std::string other = q_key(small_traj(), {}, g, TrigMode::Sfu);
    fs::rename(file, dir.path / (other + ".q"));
    CHECK(!load_q(d, other));
  }
  SECTION("a file copied to another key's name with its embedded key rewritten") {
    // Same grid and trig, another trajectory: the key differs only in its hash,
    // so length and count match. The checksum covers the key and refuses it.
    Trajectory t = small_traj();
    t.kx[3] += 0.5f;
    const std::string other = q_key(t, {}, g, TrigMode::Single);
    REQUIRE(other.size() == key.size());
    std::string bytes;
    {
      std::ifstream in(file, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::size_t at = bytes.find(key);
    REQUIRE(at != std::string::npos);
    bytes.replace(at, key.size(), other);
    std::ofstream(dir.path / (other + ".q"), std::ios::binary) << bytes;
    CHECK(!load_q(d, other));
    CHECK(loads(d, key, q));  // the honest file still loads
  }
  SECTION("a FIFO at the entry's name: ignored at once, not waited on") {
    fs::remove(file);
    REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
    // Without the check the open blocks: a writer comes after 3 s to end the wait.
    std::atomic<bool> done{false};
    std::thread writer([&] {
      for (int i = 0; i < 30 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (!done) ::close(::open(file.c_str(), O_RDWR));
    });
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(!load_q(d, key));
    done = true;
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 1.0);
    writer.join();
  }
  SECTION("a Q of the wrong size is not stored") {
    CHECK(!store_q(d, key, std::make_shared<const QValues>(q->size() + 1, cfloat(1.0f, 0.0f))));
    CHECK(!store_q(d, key, nullptr));
    CHECK(loads(d, key, q));  // the good file is untouched
  }
}

TEST_CASE("Q cache: a failed rename says why, not \"Success\", and leaves no temporary", "[qcache]") {
  TempDir dir;
  const ImageGrid g{4, 4, 1};
  const std::string key = q_key(small_traj(), {}, g, TrigMode::Single);
  // A non-empty directory where the file should go: the rename fails (EISDIR).
  const fs::path blocker = dir.path / (key + ".q");
  fs::create_directories(blocker);
  std::ofstream(blocker / "keep") << "x";
  std::ostringstream log;
  auto old = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  const bool stored = store_q(dir.path.string(), key, some_q(g));
  spdlog::set_default_logger(old);
  INFO(log.str());
  CHECK_FALSE(stored);
  CHECK(log.str().find("renaming " + blocker.string() + ".tmp.") != std::string::npos);
  CHECK(log.str().find(std::error_code(EISDIR, std::generic_category()).message()) != std::string::npos);
  CHECK(log.str().find("Success") == std::string::npos);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) files += e.path() != blocker;
  CHECK(files == 0);  // the temporary was removed
}

TEST_CASE("a plan stores the Q it computed, a later one loads it; with a Q memory all share one copy", "[qcache]") {
  TempDir dir;
  const ImageGrid g{6, 6, 1};
  const Trajectory t = test::random_trajectory(80, g, 5);
  const PlanOptions po = cached_in(dir);
  OneQ memory;
  UninstallQMemory uninstall;
  auto dev = make_cpu_device();
  set_q_memory(&memory);
  auto first = Plan::make(*dev, t, g, po);
  const QValues& computed = first->q_host();
  CHECK(first->counts().q_computed == 1);
  CHECK(memory.q.get() == &computed);  // stored and kept without a copy
  set_q_memory(nullptr);
  auto second = Plan::make(*dev, t, g, po);
  const QValues& loaded = second->q_host();
  CHECK(second->counts().q_loaded == 1);
  CHECK(&loaded != &computed);
  CHECK(loaded == computed);  // from disk, bit for bit
  CHECK(test::rel_l2(dev->download(second->q()), loaded) == 0.0);  // what was uploaded
  set_q_memory(&memory);
  auto third = Plan::make(*dev, t, g, po);
  CHECK(&third->q_host() == &computed);  // from memory: the first plan's very values
  CHECK(third->counts().q_loaded == 1);
}

TEST_CASE("cached_q reads a plan's Q ahead only into a Q memory; the plan then takes that copy", "[qcache]") {
  TempDir dir;
  const ImageGrid g{6, 6, 1};
  const Trajectory t = test::random_trajectory(80, g, 6);
  const PlanOptions po = cached_in(dir);
  auto dev = make_cpu_device();
  CHECK_FALSE(cached_q(t, g, po));  // nothing on disk yet
  const QValues computed = Plan::make(*dev, t, g, po)->q_host();  // stores it
  CHECK_FALSE(cached_q(t, g, po));  // no memory layer: the plan would read the file again
  OneQ memory;
  UninstallQMemory uninstall;
  set_q_memory(&memory);
  const SharedQ ahead = cached_q(t, g, po);
  REQUIRE(ahead);
  CHECK(*ahead == computed);
  CHECK_FALSE(cached_q(test::random_trajectory(80, g, 7), g, po));  // another trajectory's key: a miss
  fs::remove_all(dir.path);  // the plan must take the copy read ahead, not the disk
  auto plan = Plan::make(*dev, t, g, po);
  CHECK(&plan->q_host() == ahead.get());
  CHECK(plan->counts().q_loaded == 1);
}

TEST_CASE("Q cache default directory follows XDG_CACHE_HOME, then HOME", "[qcache]") {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  setenv("XDG_CACHE_HOME", "/tmp/xdg-test", 1);
  CHECK(default_q_cache_dir() == "/tmp/xdg-test/fhdrecon/q");
  unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (home && *home) CHECK(default_q_cache_dir() == std::string(home) + "/.cache/fhdrecon/q");
  if (old_xdg) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}
