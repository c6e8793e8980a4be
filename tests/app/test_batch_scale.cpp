// batch at scale: each scan in a child process (a crash or hang costs one
// row), shards that partition the sorted list, merging them back into the
// summary an unsharded batch writes, and the worker lists of --gpus/--jobs.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "app/batch.hpp"
#include "app/batch_workers.hpp"
#include "app/device.hpp"
#include "catch.hpp"
#include "core/error.hpp"
#include "batch_test_util.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using fhd::test::run_cli;

namespace {

fs::path fresh(const std::string& name) { return fhd::test::fresh_dir("scale", name); }
using fhd::test::read_json;
using fhd::test::rows_by_name;
void synth(const fs::path& file, const std::string& args) { fhd::test::synth_scan(file, args); }

// Five small scans, two trajectories; the file list sorted.
std::string five_scans(const fs::path& in) {
  synth(in / "e.h5", "--spokes 16");
  synth(in / "b.h5", "--spokes 16 --noise 0.05");
  synth(in / "d.mrd", "--spokes 12");
  synth(in / "a.h5", "--spokes 12 --noise 0.02");
  synth(in / "c.h5", "--spokes 16 --noise 0.1");
  return fhd::test::file_args(in, {"a.h5", "b.h5", "c.h5", "d.mrd", "e.h5"});
}

}  // namespace

TEST_CASE("shards partition the sorted list: every file once, balanced, for every N", "[batch][shard]") {
  using namespace fhd::app;
  for (std::size_t files = 0; files <= 23; ++files)
    for (std::size_t n = 1; n <= 9; ++n) {
      std::vector<int> seen(files, 0);
      std::size_t smallest = files, largest = 0;
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::size_t> pos = shard_positions(files, Shard{i, n});
        smallest = std::min(smallest, pos.size()), largest = std::max(largest, pos.size());
        for (std::size_t p : pos) {
          REQUIRE(p < files);
          ++seen[p];
        }
      }
      INFO(files << " files, " << n << " shards");
      CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
      CHECK(largest - std::min(smallest, largest) <= 1);
    }
  CHECK(parse_shard("3/10").index == 3);
  CHECK(parse_shard("3/10").count == 10);
  for (const char* bad : {"10/10", "1", "-1/3", "a/3", "1/0", "1/", "/3", "1/3/4", ""})
    CHECK_THROWS_AS(parse_shard(bad), fhd::InputError);
}

TEST_CASE("a shard's files do not depend on the order the list is given in", "[batch][shard]") {
  const fs::path in = fresh("order-in"), out1 = fresh("order-out1"), out2 = fresh("order-out2");
  std::vector<std::string> names = {"s3.h5", "s1.h5", "s4.h5", "s0.h5", "s2.h5"};
  for (const std::string& n : names) std::ofstream(in / n) << "not a scan";  // rows fail fast: order is the point
  std::string given, shuffled;
  for (const std::string& n : names) given += " " + (in / n).string();
  std::mt19937 rng(7);
  std::shuffle(names.begin(), names.end(), rng);
  std::ofstream list(in / "list.txt");
  for (const std::string& n : names) list << (in / n).string() << "\n";
  list.close();
  run_cli("--quiet batch" + given + " --shard 1/2 --out " + out1.string());
  run_cli("--quiet batch --files-from " + (in / "list.txt").string() + " --shard 1/2 --out " + out2.string());
  json a = read_json(out1 / "shards/shard-0001-of-0002.json"), b = read_json(out2 / "shards/shard-0001-of-0002.json");
  REQUIRE(a["scans"].size() == 2);  // positions 1 and 3 of five
  CHECK(fs::path(a["scans"][0]["file"].get<std::string>()).filename() == "s1.h5");
  CHECK(fs::path(a["scans"][1]["file"].get<std::string>()).filename() == "s3.h5");
  CHECK(a["scans"].size() == b["scans"].size());
  for (std::size_t i = 0; i < a["scans"].size(); ++i) CHECK(a["scans"][i]["file"] == b["scans"][i]["file"]);
  CHECK(a["shard"]["list_hash"] == b["shard"]["list_hash"]);
  CHECK(a["shard"]["state"] == "done");
}

TEST_CASE("a crash or a hang in one scan costs one row; the summary is written", "[batch][isolation]") {
  const fs::path in = fresh("iso-in"), out = fresh("iso-out");
  synth(in / "good.h5", "--spokes 12");
  fs::copy_file(in / "good.h5", in / "crashes.h5");
  fs::copy_file(in / "good.h5", in / "hangs.h5");
  const std::string files = fhd::test::file_args(in, {"crashes.h5", "good.h5", "hangs.h5"});
  // The faults come through the test-only environment variable (docs/batch.md).
  // 5 s: the good scan needs well under 1 s, also on a loaded 2-core machine.
  auto r = run_cli("--quiet batch" + files + " --out " + out.string() + " --iters 3 --scan-timeout 5 --no-cache",
                   "FHDRECON_TEST_SCAN_FAULT=abort:crashes,hang:hangs");
  INFO(r.out);
  CHECK(r.code == 2);
  auto rows = rows_by_name(read_json(out / "summary.json"));
  REQUIRE(rows.size() == 3);
  CHECK(rows["good.h5"]["status"] == "ok");
  CHECK(rows["good.h5"]["iterative"]["psnr_db"].is_number());
  CHECK(rows["crashes.h5"]["status"] == "failed");
  CHECK(rows["crashes.h5"]["reason"].get<std::string>().rfind("crashed: signal 6", 0) == 0);
  CHECK(rows["hangs.h5"]["status"] == "failed");
  CHECK(rows["hangs.h5"]["reason"].get<std::string>().rfind("timed out after 5 s", 0) == 0);
  CHECK(fs::exists(out / "summary.csv"));
  CHECK_FALSE(fs::exists(out / "crashes" / "report.json"));
}

TEST_CASE("shards merged equal an unsharded batch, row for row; merge names missing shards", "[batch][shard]") {
  const fs::path in = fresh("merge-in"), whole = fresh("merge-whole"), parts = fresh("merge-parts");
  const std::string files = five_scans(in);
  const std::string opts = " --iters 4 --no-cache";
  auto w = run_cli("--quiet batch" + files + " --out " + whole.string() + opts + " --jobs 2");
  INFO(w.out);
  REQUIRE(w.code == 0);
  for (int i = 0; i < 3; ++i) {
    auto s = run_cli("--quiet batch" + files + " --out " + parts.string() + opts + " --shard " + std::to_string(i) + "/3");
    INFO(s.out);
    REQUIRE(s.code == 0);
    CHECK_FALSE(fs::exists(parts / "summary.csv"));  // a shard writes only its shard file
  }
  auto m = run_cli("--quiet batch --merge " + parts.string());
  INFO(m.out);
  REQUIRE(m.code == 0);
  json a = read_json(whole / "summary.json"), b = read_json(parts / "summary.json");
  REQUIRE(a["scans"].size() == 5);
  REQUIRE(b["scans"].size() == 5);
  CHECK(b["shards"]["missing"].empty());
  for (std::size_t i = 0; i < 5; ++i) {
    const json &x = a["scans"][i], &y = b["scans"][i];
    INFO(x["file"]);
    CHECK(x["file"] == y["file"]);
    CHECK(x["status"] == y["status"]);
    CHECK(fs::path(x["output"].get<std::string>()).filename() == fs::path(y["output"].get<std::string>()).filename());
    CHECK(x["coils"] == y["coils"]);
    for (const char* method : {"iterative", "gridding_kb"})
      for (const char* metric : {"psnr_db", "nrmse"}) {
        REQUIRE(x[method][metric].is_number());
        CHECK(x[method][metric].get<double>() == Approx(y[method][metric].get<double>()).epsilon(1e-6));
      }
  }
  fs::remove(parts / "shards/shard-0001-of-0003.json");
  auto missing = run_cli("--quiet batch --merge " + parts.string());
  INFO(missing.out);
  CHECK(missing.code == 2);
  json c = read_json(parts / "summary.json");
  CHECK(c["shards"]["missing"] == json::array({1}));
  CHECK(c["scans"].size() == 4);  // 3 rows of shards 0 and 2, one "missing" row for shard 1's 2 scans
  CHECK(c["scans"][3]["status"] == "missing");
  CHECK(c["scans"][3]["reason"].get<std::string>().find("shard 1/3") != std::string::npos);
  CHECK(c["scans"][3]["reason"].get<std::string>().find("2 scans") != std::string::npos);
}

TEST_CASE("merge trusts no count a shard file claims", "[batch][shard][hostile]") {
  const fs::path in = fresh("claim-in"), out = fresh("claim-out");
  for (const char* n : {"x.h5", "y.h5"}) std::ofstream(in / n) << "not a scan";
  run_cli("--quiet batch " + (in / "x.h5").string() + " " + (in / "y.h5").string() + " --shard 0/2 --out " +
          out.string());
  const fs::path shard = out / "shards/shard-0000-of-0002.json";
  REQUIRE(fs::exists(shard));
  const json good = read_json(shard);
  auto tampered = [&](const char* field, const json& value) {
    json j = good;
    j["shard"][field] = value;
    std::ofstream(shard, std::ios::trunc) << j.dump();
    return run_cli("--quiet batch --merge " + out.string());
  };
  // A count of 1e12 made a row per missing shard: 16.8 GB, then bad_alloc.
  auto many = tampered("count", 1000000000000ULL);
  INFO(many.out);
  CHECK(many.code == 2);
  CHECK(read_json(out / "summary.json")["scans"].size() == 2);  // x's row, one missing row for y
  auto total = tampered("files_total", 1000000000000ULL);
  INFO(total.out);
  CHECK(total.code == 2);
  CHECK(total.out.find("files_total = 1000000000000: more scans than a batch lists") != std::string::npos);
  auto small = tampered("files_total", 0);
  CHECK(small.out.find("position = 0: must be below files_total 0") != std::string::npos);
}

// hunt19 finding 6: of two copies of a shard, the path sorting last won, so a
// stale interrupted copy (zz_stale/) overrode the finished one.
TEST_CASE("merge keeps the copy of a shard that got further, whatever the paths' order", "[batch][shard]") {
  const fs::path in = fresh("copies-in"), out = fresh("copies-out");
  synth(in / "a.h5", "--spokes 12");
  synth(in / "b.h5", "--spokes 12 --noise 0.05");
  const std::string files = fhd::test::file_args(in, {"a.h5", "b.h5"});
  for (const char* shard : {"0/2", "1/2"}) {
    auto r = run_cli("--quiet batch" + files + " --out " + out.string() + " --device cpu --iters 2 --no-cache --shard " +
                     shard);
    INFO(r.out);
    REQUIRE(r.code == 0);
  }
  const std::string zero = "shards/shard-0000-of-0002.json", one = "shards/shard-0001-of-0002.json";
  const json done = read_json(out / one);  // b.h5's row
  REQUIRE(done["shard"]["state"] == "done");
  REQUIRE(done["scans"].size() == 1);
  REQUIRE(done["scans"][0]["status"] == "ok");
  // A copy of OUT whose shard 1 is `state`, b.h5's row `status`.
  auto copy = [&](const std::string& name, const std::string& state, const std::string& status) {
    const fs::path d = fresh(name);
    fs::create_directories(d / "shards");
    fs::copy_file(out / zero, d / zero);
    json j = done;
    j["shard"]["state"] = state;
    j["scans"][0]["status"] = status;
    std::ofstream(d / one) << j.dump();
    return d;
  };
  auto merge = [&](const fs::path& x, const fs::path& y) {
    const fs::path m = fresh("copies-merged");
    auto r = run_cli("--quiet batch --merge " + x.string() + " " + y.string() + " --out " + m.string());
    INFO(r.out);
    json summary = read_json(m / "summary.json");
    summary["exit"] = r.code;
    return summary;
  };
  // A task killed during b.h5, its directory copied: sorting before and after OUT.
  for (const char* name : {"copies-aa-stale", "copies-zz-stale"}) {
    const fs::path stale = copy(name, "running", "pending");
    for (bool stale_first : {false, true}) {
      INFO(name << (stale_first ? ", given first" : ", given last"));
      const json m = stale_first ? merge(stale, out) : merge(out, stale);
      CHECK(m["exit"] == 0);
      CHECK(m["shards"]["unfinished"].empty());
      CHECK(rows_by_name(m)["b.h5"]["status"] == "ok");
    }
  }
  // Neither finished: the one that ran more scans.
  const fs::path ran = copy("copies-ran", "interrupted", "ok"), cut = copy("copies-zz-cut", "interrupted", "pending");
  for (bool cut_first : {false, true}) {
    const json m = cut_first ? merge(cut, ran) : merge(ran, cut);
    CHECK(m["shards"]["unfinished"] == json::array({1}));
    CHECK(rows_by_name(m)["b.h5"]["status"] == "ok");
  }
  // Alike so far: the newer file (the older one, sorting last, says 1 dB).
  const fs::path newer = copy("copies-newer", "done", "ok"), older = copy("copies-zz-older", "done", "ok");
  json j = read_json(older / one);
  j["scans"][0]["iterative"]["psnr_db"] = 1.0;
  std::ofstream(older / one, std::ios::trunc) << j.dump();
  fs::last_write_time(older / one, fs::last_write_time(newer / one) - std::chrono::hours(1));
  CHECK(rows_by_name(merge(older, newer))["b.h5"]["iterative"]["psnr_db"] == done["scans"][0]["iterative"]["psnr_db"]);
  // Only the stale copy: b.h5 was pending when its task stopped, perhaps during it.
  const fs::path alone = copy("copies-alone", "running", "pending");
  const fs::path m = fresh("copies-merged-alone");
  auto r = run_cli("--quiet batch --merge " + alone.string() + " --out " + m.string());
  CHECK(r.code == 2);
  CHECK(rows_by_name(read_json(m / "summary.json"))["b.h5"]["reason"] ==
        "not finished: shard 1/2 stopped during or before this scan (task killed or crashed)");
}

TEST_CASE("merge refuses shards of different batches", "[batch][shard]") {
  const fs::path in = fresh("mix-in"), out = fresh("mix-out");
  for (const char* n : {"x.h5", "y.h5", "z.h5"}) std::ofstream(in / n) << "not a scan";
  run_cli("--quiet batch " + (in / "x.h5").string() + " " + (in / "y.h5").string() + " --shard 0/2 --out " +
          out.string());
  run_cli("--quiet batch " + (in / "x.h5").string() + " " + (in / "z.h5").string() + " --shard 1/2 --out " +
          out.string());
  auto m = run_cli("--quiet batch --merge " + out.string());
  CHECK(m.code == 2);
  CHECK(m.out.find("not from the same batch") != std::string::npos);
  auto none = run_cli("--quiet batch --merge " + (in).string());
  CHECK(none.code == 2);
  CHECK(none.out.find("no shards/shard-*.json") != std::string::npos);
}

TEST_CASE("--gpus: one worker per visible GPU, each seeing only its own", "[batch][workers]") {
  using namespace fhd::app;
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string saved = old ? old : "";
  setenv("CUDA_VISIBLE_DEVICES", "4,5,7", 1);
  auto env_of = [](const Worker& w, const std::string& k) {
    for (const auto& [key, v] : w.env)
      if (key == k) return v;
    return std::string();
  };
  std::vector<Worker> all = gpu_workers("all");
  REQUIRE(all.size() == 3);
  CHECK(env_of(all[0], "CUDA_VISIBLE_DEVICES") == "4");
  CHECK(env_of(all[2], "CUDA_VISIBLE_DEVICES") == "7");
  std::vector<Worker> two = gpu_workers("2");
  REQUIRE(two.size() == 2);
  CHECK(env_of(two[1], "CUDA_VISIBLE_DEVICES") == "5");
  std::vector<Worker> list = gpu_workers("2,0");
  REQUIRE(list.size() == 2);
  CHECK(env_of(list[0], "CUDA_VISIBLE_DEVICES") == "7");
  CHECK(env_of(list[1], "CUDA_VISIBLE_DEVICES") == "4");
  for (const char* bad : {"4", "0", "3,1", "x", "1,,2", ""}) CHECK_THROWS_AS(gpu_workers(bad), fhd::InputError);
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  CHECK_THROWS_AS(gpu_workers("all"), fhd::InputError);
  if (old) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
  CHECK(cpu_workers(3).size() == 3);
  CHECK_THROWS_AS(cpu_workers(0), fhd::InputError);
}

TEST_CASE("the recon command's default GPUs: the others join only an exact gather big enough to gain", "[batch][workers]") {
  using namespace fhd::app;
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string saved = old ? old : "";
  setenv("CUDA_VISIBLE_DEVICES", "3,1,2", 1);
  const double big = 256.0 * 256 * 256 * 4194304, small = 128.0 * 128 * 128 * 1048576;
  if (cuda_built()) {
    CHECK(default_more_gpus("auto", true, big) == std::vector<int>{1, 2});  // numbered as this process sees them
    CHECK(default_more_gpus("gpu", true, big) == std::vector<int>{1, 2});
  } else {
    CHECK(default_more_gpus("auto", true, big).empty());  // no CUDA: no GPU at all
  }
  CHECK(default_more_gpus("auto", true, small).empty());  // 2.2e12 pairs: the contexts cost more than the split saves
  CHECK(default_more_gpus("cpu", true, big).empty());
  CHECK(default_more_gpus("auto", false, big).empty());  // the NUFFT: one GPU
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  CHECK(default_more_gpus("auto", true, big).empty());  // one visible GPU
  if (old) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST_CASE("SIGTERM to a batch ends its children and still writes the summary", "[batch][isolation]") {
  const fs::path in = fresh("term-in"), out = fresh("term-out");
  synth(in / "good.h5", "--spokes 12");
  fs::copy_file(in / "good.h5", in / "hangs.h5");
  // Its own TMPDIR: the rows directory and --no-cache's private Q cache
  // ($TMPDIR/fhdrecon-rows-*, fhdrecon-q-*) must be gone after the signal.
  const fs::path tmp = fresh("term-tmp");
  fs::create_directories(tmp);
  // hangs.h5 first: it is running (hung) when the signal comes, good.h5 waits.
  const std::string cmd = "TMPDIR=" + tmp.string() + " FHDRECON_TEST_SCAN_FAULT=hang:hangs " +
                          std::string(FHDRECON_EXE) + " --quiet batch " + (in / "hangs.h5").string() + " " +
                          (in / "good.h5").string() + " --out " + out.string() +
                          " --iters 3 --no-cache > /dev/null 2>&1 & pid=$!; sleep 1.5; kill -TERM $pid; wait $pid; echo $?";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[64] = {0};
  std::string code = std::fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  CHECK(code == "1\n");  // interrupted: exit 1, after the summary
  auto rows = rows_by_name(read_json(out / "summary.json"));
  REQUIRE(rows.size() == 2);
  CHECK(rows["hangs.h5"]["status"] == "failed");
  CHECK(rows["hangs.h5"]["reason"] == "not finished: batch interrupted");
  CHECK(rows["good.h5"]["status"] == "failed");
  CHECK(rows["good.h5"]["reason"] == "not run: batch interrupted");
  for (const auto& e : fs::directory_iterator(tmp)) CHECK(e.path().filename().string() == "(nothing left)");
}
