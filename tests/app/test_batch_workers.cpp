// Warm batch workers (issue 26) and the batch items of issue 28: the message
// framing, Q in a worker's memory, warm rows equal to a process per scan, a
// crash or hang costing one row with scans in flight beside it, a second batch
// into one --out refused, an interrupt after a scan's outputs are swapped in,
// --device gpu without a GPU and a --files-from that is not a list.

#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/sanitizer.hpp"
#include "app/batch_plan.hpp"
#include "app/batch_protocol.hpp"
#include "app/batch_warm.hpp"
#include "app/batch_workers.hpp"
#include "app/device.hpp"
#include "catch.hpp"
#include "core/error.hpp"
#include "recon/plan/qcache.hpp"
#include "batch_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using fhd::test::run_cli;

namespace {

fs::path fresh(const std::string& name) { return fhd::test::fresh_dir("workers", name); }
using fhd::test::file_args;
using fhd::test::read_json;
using fhd::test::rows_by_name;
void synth(const fs::path& file, const std::string& args) { fhd::test::synth_scan(file, args); }

// Runs `command` in the shell and returns its stdout (the tests' background jobs).
std::string shell(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  return out;
}

const std::string kModes[] = {"", " --process-per-scan"};


// One batch of FILES in `mode` into a fresh DIR with a test-only fault: its exit
// status, output and summary rows.
struct ModeRun {
  fs::path dir;
  int code = -1;
  std::string out;
  std::map<std::string, json> rows;
};
ModeRun run_mode(const std::string& name, const std::string& mode, const std::string& files,
                 const std::string& options, const std::string& fault) {
  ModeRun m;
  m.dir = fresh(name + std::to_string(mode.size()));
  auto r = run_cli("--quiet batch" + files + " --out " + m.dir.string() + " --iters 3 --no-cache" + options + mode,
                   "FHDRECON_TEST_SCAN_FAULT=" + fault);
  m.code = r.code;
  m.out = r.out;
  if (fs::exists(m.dir / "summary.json")) m.rows = rows_by_name(read_json(m.dir / "summary.json"));
  return m;
}

}  // namespace

TEST_CASE("worker messages: whole, in order, however the bytes arrive; a bad frame is refused", "[batch][workers]") {
  using namespace fhd::app;
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  const json a = {{"type", "scan"}, {"id", 7}, {"file", "a b\n\"c\".h5"}, {"output", "out/a"}};
  const json b = {{"type", "row"}, {"id", 7}, {"row", {{"status", "ok"}, {"psnr", 31.25}}}};
  REQUIRE(send_message(sv[0], a));
  REQUIRE(send_message(sv[0], b));
  REQUIRE(send_message(sv[0], {{"type", "quit"}}));
  close(sv[0]);
  MessageReader in;
  CHECK(receive_message(sv[1], in) == a);
  CHECK(receive_message(sv[1], in) == b);
  CHECK(receive_message(sv[1], in)->at("type") == "quit");
  CHECK_FALSE(receive_message(sv[1], in).has_value());  // the other end closed
  close(sv[1]);

  // Byte by byte: nothing until the last byte of a frame.
  const std::string body = b.dump();
  std::string frame = {char(body.size()), 0, 0, 0};
  frame += body;
  MessageReader slow;
  for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
    slow.feed(&frame[i], 1);
    REQUIRE_FALSE(slow.next().has_value());
  }
  slow.feed(&frame.back(), 1);
  CHECK(slow.next() == b);

  MessageReader huge, garbage;
  const char big[4] = {0, 0, 0, 0x7f};  // claims 2 GiB
  huge.feed(big, 4);
  CHECK_THROWS(huge.next());
  const char not_json[7] = {3, 0, 0, 0, 'a', 'b', 'c'};
  garbage.feed(not_json, 7);
  CHECK_THROWS(garbage.next());
}

// A server's StopSignals, then its pool's for a batch: a SIGTERM between the
// two was cleared by the inner one and lost; and the process's own handler
// must come back once both are gone.
TEST_CASE("nested stop signals keep a signal that came first, and restore the handler", "[batch][workers]") {
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  {
    fhd::app::StopSignals outer;
    CHECK(!outer.stopped());
    ::raise(SIGTERM);
    fhd::app::StopSignals inner;
    CHECK(inner.stopped());
    CHECK(outer.stopped());
  }
  struct sigaction after {};
  sigaction(SIGTERM, nullptr, &after);
  CHECK(after.sa_handler == before.sa_handler);
  fhd::app::StopSignals after_both;
  CHECK(!after_both.stopped());
}

TEST_CASE("a worker's Q memory: load_q finds what store_q or the disk gave it, least recent out", "[batch][workers]") {
  using namespace fhd;
  const fs::path dir = fresh("qmem");
  const ImageGrid grid{4, 4, 1};  // Q on 8 x 8 points
  auto key_of = [&](float k0) {
    Trajectory t;
    t.resize(3);
    t.kx[0] = k0;
    return q_key(t, {}, grid, TrigMode::Single);
  };
  auto q_of = [](float v) { return std::make_shared<const QValues>(64, cfloat(v, -v)); };
  auto loads = [&](const std::string& key, float v) {  // load_q gives q_of(v)'s values
    const SharedQ q = load_q(dir.string(), key);
    return q && *q == *q_of(v);
  };
  app::QMemoryCache memory(2 * 64 * sizeof(cfloat));  // room for two entries
  const std::string k1 = key_of(1), k2 = key_of(2), k3 = key_of(3);
  REQUIRE(store_q(dir.string(), k1, q_of(1)));  // before the memory: on disk only
  set_q_memory(&memory);
  const SharedQ from_disk = load_q(dir.string(), k1);
  CHECK((from_disk && *from_disk == *q_of(1)));  // from disk, now kept
  CHECK(memory.entries() == 1);
  CHECK(memory.find(k1) == from_disk);  // the very values: kept and found without a copy
  fs::remove_all(dir);
  fs::create_directories(dir);
  CHECK(load_q(dir.string(), k1) == from_disk);  // the disk's file is gone: from memory, shared
  const SharedQ q2 = q_of(2);
  REQUIRE(store_q(dir.string(), k2, q2));
  CHECK(memory.find(k2) == q2);  // what store_q was given, not a copy
  CHECK(load_q(dir.string(), k1) != nullptr);  // k1 is now the most recent
  REQUIRE(store_q(dir.string(), k3, q_of(3)));  // over budget: k2, the least recent, goes
  CHECK(memory.entries() == 2);
  fs::remove_all(dir);
  fs::create_directories(dir);
  CHECK(loads(k3, 3));
  CHECK(loads(k1, 1));
  CHECK_FALSE(load_q(dir.string(), k2));
  CHECK(*q2 == *q_of(2));  // dropped from memory, alive where it is still used
  CHECK_FALSE(load_q("", k1));  // no cache asked for: none, memory or not
  app::QMemoryCache tiny(64);  // an entry over the budget is not kept
  tiny.keep(k1, q_of(1));
  CHECK(tiny.entries() == 0);
  set_q_memory(nullptr);
  CHECK_FALSE(load_q(dir.string(), k1));
}

TEST_CASE("warm workers write the rows a process per scan writes, row for row", "[batch][workers]") {
  const fs::path in = fresh("same-in"), warm = fresh("same-warm"), fresh_out = fresh("same-fresh");
  synth(in / "e.h5", "--spokes 16");
  synth(in / "b.h5", "--spokes 16 --noise 0.05");
  synth(in / "d.mrd", "--spokes 12");
  synth(in / "a.h5", "--spokes 12 --noise 0.02");
  synth(in / "c.h5", "--spokes 16 --noise 0.1 --coils 2");
  const std::string files = file_args(in, {"a.h5", "b.h5", "c.h5", "d.mrd", "e.h5"});
  // One worker on the CPU, whatever the host has: with several GPUs the
  // workers race for each trajectory's first Q and the q_source column varies.
  const std::string opts = " --iters 4 --no-cache --device cpu --jobs 1";
  auto w = run_cli("--quiet batch" + files + " --out " + warm.string() + opts);
  INFO(w.out);
  REQUIRE(w.code == 0);
  auto p = run_cli("--quiet batch" + files + " --out " + fresh_out.string() + opts + " --process-per-scan");
  INFO(p.out);
  REQUIRE(p.code == 0);
  const json x = read_json(warm / "summary.json"), y = read_json(fresh_out / "summary.json");
  REQUIRE(x["scans"].size() == 5);
  REQUIRE(y["scans"].size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    const json &a = x["scans"][i], &b = y["scans"][i];
    INFO(a["file"]);
    for (const char* key : {"file", "status", "reason", "coils", "q_source"}) CHECK(a[key] == b[key]);
    CHECK(fs::path(a["output"].get<std::string>()).filename() == fs::path(b["output"].get<std::string>()).filename());
    for (const char* method : {"iterative", "gridding_kb"})
      for (const char* metric : {"psnr_db", "nrmse"}) {
        REQUIRE(a[method][metric].is_number());
        CHECK(a[method][metric].get<double>() == Approx(b[method][metric].get<double>()).epsilon(1e-6));
      }
  }
  // One worker, in order: each trajectory's first scan computes Q, the rest read it.
  CHECK(x["scans"][0]["q_source"] == "computed");
  CHECK(x["scans"][1]["q_source"] == "computed");
  CHECK(x["scans"][3]["q_source"] == "cache");
  CHECK(x["scans"][2]["coils"] == 2);
  const json report = read_json(warm / "b" / "report.json");
  CHECK(report["batch"]["run_id"].get<std::string>().size() == 16);
}

TEST_CASE("with scans in flight beside it, a crash and a hang cost one row each", "[batch][workers][isolation]") {
  const fs::path in = fresh("iso-in");
  synth(in / "good.h5", "--spokes 12");
  for (const char* f : {"crashes.h5", "hangs.h5", "good2.h5"}) fs::copy_file(in / "good.h5", in / f);
  const std::string files = file_args(in, {"crashes.h5", "good.h5", "hangs.h5", "good2.h5"});
  for (const std::string& mode : kModes) {
    // crashes.h5 aborts while good.h5 and hangs.h5 are already with its worker;
    // hangs.h5 hangs while good2.h5 is.
    ModeRun r = run_mode("iso-out", mode, files, " --scan-timeout 5", "abort:crashes,hang:hangs");
    INFO("mode:" << mode << "\n" << r.out);
    const fs::path& out = r.dir;
    auto& rows = r.rows;
    CHECK(r.code == 2);
    REQUIRE(rows.size() == 4);
    CHECK(rows["crashes.h5"]["reason"].get<std::string>().rfind("crashed: signal 6", 0) == 0);
    CHECK(rows["hangs.h5"]["reason"].get<std::string>().rfind("timed out after 5 s", 0) == 0);
    for (const char* good : {"good.h5", "good2.h5"}) {
      CHECK(rows[good]["status"] == "ok");
      CHECK(rows[good]["iterative"]["psnr_db"].is_number());
    }
    CHECK_FALSE(fs::exists(out / "crashes" / "report.json"));
    CHECK_FALSE(fs::exists(out / "hangs" / "report.json"));
  }
}

TEST_CASE("a second batch into the same --out is refused with one line; shard tasks share it", "[batch][workers]") {
  const fs::path in = fresh("two-in"), out = fresh("two-out");
  synth(in / "good.h5", "--spokes 12");
  fs::copy_file(in / "good.h5", in / "hangs.h5");
  const std::string exe = FHDRECON_EXE;
  // The first batch hangs on its scan, holding --out, while the second tries.
  const std::string first = "FHDRECON_TEST_SCAN_FAULT=hang:hangs " + exe + " --quiet batch " + (in / "hangs.h5").string() +
                            " --out " + out.string() + " --iters 3 --no-cache > /dev/null 2>&1 & pid=$!; sleep 1; ";
  const std::string second = exe + " --quiet batch " + (in / "good.h5").string() + " --out " + out.string() +
                             " --iters 3 --no-cache 2>&1; echo \"exit $?\"; kill -TERM $pid; wait $pid";
  const std::string refused = shell(first + second);
  INFO(refused);
  CHECK(refused.find("another batch is writing into this directory") != std::string::npos);
  CHECK(refused.find("exit 2") != std::string::npos);
  CHECK(std::count(refused.begin(), refused.end(), '\n') == 2);  // one line, then the exit status
  CHECK_FALSE(fs::exists(out / "good"));

  // Shards of one array run side by side; the same shard twice does not.
  const fs::path sharded = fresh("two-shards");
  const std::string task = exe + " --quiet batch " + (in / "hangs.h5").string() + " " + (in / "good.h5").string() +
                           " --out " + sharded.string() + " --iters 3 --no-cache --shard ";
  const std::string both = shell("FHDRECON_TEST_SCAN_FAULT=hang:hangs " + task +
                                 "1/2 > /dev/null 2>&1 & pid=$!; sleep 1; " + task + "0/2 2>&1; echo \"exit $?\"; " +
                                 task + "1/2 2>&1; echo \"exit $?\"; kill -TERM $pid; wait $pid");
  INFO(both);
  CHECK(both.find("exit 0") != std::string::npos);  // shard 0 (good.h5) beside the running shard 1
  CHECK(both.find("another task of shard 1/2 is writing") != std::string::npos);
  CHECK(read_json(sharded / "shards/shard-0000-of-0002.json")["scans"][0]["status"] == "ok");
  // Once the first batch is gone its lock is too.
  auto after = run_cli("--quiet batch " + (in / "good.h5").string() + " --out " + out.string() + " --iters 3 --no-cache");
  INFO(after.out);
  CHECK(after.code == 0);
}

TEST_CASE("an interrupt after a scan's outputs are swapped in: its row says ok, as the outputs do", "[batch][workers]") {
  const fs::path in = fresh("int-in");
  synth(in / "a.h5", "--spokes 12");
  synth(in / "b.h5", "--spokes 12 --noise 0.05");
  synth(in / "c.h5", "--spokes 16");
  const std::string files = file_args(in, {"a.h5", "b.h5", "c.h5"});
  for (const std::string& mode : kModes) {
    // The process reconstructing b.h5 sends SIGINT to the batch right after
    // swapping b's outputs in, and waits: the batch ends it before its row comes.
    ModeRun r = run_mode("int-out", mode, files, "", "interrupt:b.h5");
    INFO("mode:" << mode << "\n" << r.out);
    const fs::path& out = r.dir;
    auto& rows = r.rows;
    CHECK(r.code == 1);
    REQUIRE(rows.size() == 3);
    REQUIRE(fs::exists(out / "b" / "report.json"));
    CHECK(rows["b.h5"]["status"] == "ok");
    CHECK(rows["b.h5"]["iterative"]["psnr_db"].get<double>() ==
          Approx(read_json(out / "b" / "report.json")["methods"][0]["psnr_db"].get<double>()));
    CHECK(rows["c.h5"]["status"] == "failed");
    CHECK_FALSE(fs::exists(out / "c" / "report.json"));
  }
}

TEST_CASE("batch --device gpu without a usable GPU is refused before any scan", "[batch][workers]") {
  std::string why;
  if (fhd::app::gpu_available(&why)) FHD_SKIP("this machine has a usable GPU");
  const fs::path in = fresh("gpu-in"), out = fresh("gpu-out");
  synth(in / "a.h5", "--spokes 12");
  fs::copy_file(in / "a.h5", in / "b.h5");
  auto r = run_cli("--quiet batch " + (in / "a.h5").string() + " " + (in / "b.h5").string() + " --out " +
                   (out / "o").string() + " --device gpu");
  INFO(r.out);
  CHECK(r.code == 3);  // a device problem, as recon's --device gpu
  CHECK(r.out.rfind("fhdrecon: error: batch --device gpu: no usable GPU", 0) == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(out / "o"));
}

TEST_CASE("--files-from that is not a list of paths is refused with one line, its memory bounded", "[batch][workers]") {
  const fs::path d = fresh("list");
  // 2 GB of address space: before, /dev/zero grew one endless line past it.
  // ASan reserves terabytes of address space up front: a time limit there.
  // OpenBLAS starts a thread (and its buffers) per core when it loads, before
  // main can set OPENBLAS_NUM_THREADS: on a 64-core host that alone failed
  // under the 2 GB (docs/robustness.md, "Memory limits and OpenBLAS").
  auto zero = run_cli("--quiet batch --files-from /dev/zero --out " + (d / "o").string(),
                      fhd::kAsan ? "timeout 20" : "ulimit -v 2000000; OPENBLAS_NUM_THREADS=1");
  INFO(zero.out);
  CHECK(zero.code == 2);
  CHECK(zero.out == "fhdrecon: error: --files-from /dev/zero: line 1 holds a NUL byte (expected a text list of "
                    "scan paths, one per line)\n");
  using fhd::app::read_file_list;
  std::ofstream(d / "long.txt") << "a.h5\n" << std::string(fhd::app::kMaxPathChars + 1, 'x') << "\n";
  CHECK_THROWS_WITH(read_file_list((d / "long.txt").string()), Catch::Contains("line 2 is longer than 4096"));
  {
    std::ofstream many(d / "many.txt");
    for (std::size_t i = 0; i < fhd::app::kMaxFileListEntries; ++i) many << "s\n";
  }
  CHECK(read_file_list((d / "many.txt").string()).size() == fhd::app::kMaxFileListEntries);
  std::ofstream(d / "many.txt", std::ios::app) << "one more\n";
  CHECK_THROWS_WITH(read_file_list((d / "many.txt").string()), Catch::Contains("more than 1000000 lines"));
  std::ofstream(d / "ok.txt") << "# scans\n a.h5 \n\nb.h5\r\nc.h5";
  CHECK(read_file_list((d / "ok.txt").string()) == std::vector<std::string>{" a.h5", "b.h5", "c.h5"});
}
