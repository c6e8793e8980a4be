// The resident batch server (issue 26's warm workers that outlive a batch):
// batches through `fhdrecon serve` write the rows a batch's own workers write,
// its workers start once for batch after batch, a crash or an interrupt costs
// its rows and the server goes on, and the bad cases get one line.

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "batch_test_util.hpp"
#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using fhd::test::file_args;
using fhd::test::read_json;
using fhd::test::rows_by_name;
using fhd::test::run_cli;

namespace {

fs::path fresh(const std::string& name) { return fhd::test::fresh_dir("server", name); }
void synth(const fs::path& file, const std::string& args) { fhd::test::synth_scan(file, args); }

bool alive(int pid) { return ::kill(pid, 0) == 0; }

std::string text_of(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// `fhdrecon serve` on DIR/s.sock, one CPU worker, its log in DIR/serve.log;
// ended with SIGTERM (and checked to end) when the test is done with it.
class Served {
 public:
  Served(const fs::path& dir, const std::string& env = "") : dir_(dir) {
    const std::string cmd = env + " " + std::string(FHDRECON_EXE) + " --verbose serve --socket " + socket() +
                            " --device cpu --jobs 1 > " + (dir / "serve.log").string() + " 2>&1 & echo $!";
    pid_ = std::stoi(fhd::test::shell(cmd));
    for (int i = 0; i < 200 && !fs::exists(socket()); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(fs::exists(socket()));
  }
  ~Served() { stop(); }
  std::string socket() const { return (dir_ / "s.sock").string(); }
  std::string log() const { return text_of(dir_ / "serve.log"); }
  // SIGTERM; true once it has ended, its socket gone.
  bool stop() {
    if (pid_ <= 0) return true;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 300 && alive(pid_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool ended = !alive(pid_);
    pid_ = 0;
    return ended && !fs::exists(socket());
  }

 private:
  fs::path dir_;
  int pid_ = 0;
};

}  // namespace

TEST_CASE("a server's workers run batch after batch: the rows a batch's own workers write, one start",
          "[batch][server]") {
  const fs::path in = fresh("same-in"), d = fresh("same");
  synth(in / "a.h5", "--spokes 12 --noise 0.02");
  synth(in / "b.h5", "--spokes 16 --noise 0.05");
  synth(in / "c.h5", "--spokes 16 --noise 0.1 --coils 2");
  const std::string files = file_args(in, {"a.h5", "b.h5", "c.h5"});
  const std::string opts = " --iters 4 --no-cache --device cpu";
  auto own = run_cli("--quiet batch" + files + " --out " + (d / "own").string() + opts + " --jobs 1");
  INFO(own.out);
  REQUIRE(own.code == 0);
  Served server(d);
  for (const char* out : {"first", "second"}) {
    auto r = run_cli("--quiet batch" + files + " --out " + (d / out).string() + opts + " --server " + server.socket());
    INFO(out << "\n" << r.out << "\n" << server.log());
    REQUIRE(r.code == 0);
    const json x = read_json(d / out / "summary.json"), y = read_json(d / "own" / "summary.json");
    REQUIRE(x["scans"].size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      const json &a = x["scans"][i], &b = y["scans"][i];
      INFO(a["file"]);
      for (const char* key : {"file", "status", "reason", "coils"}) CHECK(a[key] == b[key]);
      CHECK(a["iterative"]["psnr_db"].get<double>() == Approx(b["iterative"]["psnr_db"].get<double>()).epsilon(1e-6));
      // Each batch's own run id and private Q cache reach the worker.
      CHECK(read_json(d / out / fs::path(a["file"].get<std::string>()).stem() / "report.json")["batch"]["run_id"] ==
            read_json(d / out / fs::path(x["scans"][0]["file"].get<std::string>()).stem() / "report.json")["batch"]["run_id"]);
    }
    // The second batch's private cache is empty: its Q came from the worker's memory.
    if (std::string(out) == "second")
      for (std::size_t i = 0; i < 3; ++i) CHECK(x["scans"][i]["q_source"] == "cache");
  }
  CHECK(read_json(d / "first" / "a" / "report.json")["batch"]["run_id"] !=
        read_json(d / "second" / "a" / "report.json")["batch"]["run_id"]);
  // One worker process made its devices once, for both batches.
  CHECK(count_of(server.log(), "worker: devices made") == 1);
  CHECK(server.stop());
}

TEST_CASE("through a server a crash costs its row, an interrupt the rows not done; the server goes on",
          "[batch][server][isolation]") {
  const fs::path in = fresh("iso-in"), d = fresh("iso");
  synth(in / "good.h5", "--spokes 12");
  for (const char* f : {"crashes.h5", "hangs.h5"}) fs::copy_file(in / "good.h5", in / f);
  Served server(d, "FHDRECON_TEST_SCAN_FAULT=abort:crashes,hang:hangs");
  const std::string common = " --iters 3 --no-cache --device cpu --server " + server.socket();

  auto crash = run_cli("--quiet batch" + file_args(in, {"crashes.h5", "good.h5"}) + " --out " + (d / "c").string() + common);
  INFO(crash.out << "\n" << server.log());
  CHECK(crash.code == 2);
  auto rows = rows_by_name(read_json(d / "c" / "summary.json"));
  CHECK(rows["crashes.h5"]["reason"].get<std::string>().rfind("crashed: signal 6", 0) == 0);
  CHECK(rows["good.h5"]["status"] == "ok");

  // SIGTERM to the batch while its scan hangs on the server.
  const std::string hang = fhd::test::shell(std::string(FHDRECON_EXE) + " --quiet batch " + (in / "hangs.h5").string() +
                                            " " + (in / "good.h5").string() + " --out " + (d / "h").string() + common +
                                            " > /dev/null 2>&1 & pid=$!; sleep 1.5; kill -TERM $pid; wait $pid; echo rc=$?");
  INFO(hang);
  CHECK(fhd::test::exit_status(hang) == 1);
  rows = rows_by_name(read_json(d / "h" / "summary.json"));
  CHECK(rows["hangs.h5"]["reason"] == "not finished: batch interrupted");
  CHECK(rows["good.h5"]["reason"] == "not run: batch interrupted");  // sent to the worker, never begun

  auto after = run_cli("--quiet batch " + (in / "good.h5").string() + " --out " + (d / "a").string() + common);
  INFO(after.out);
  CHECK(after.code == 0);
  CHECK(rows_by_name(read_json(d / "a" / "summary.json"))["good.h5"]["status"] == "ok");
  CHECK(server.stop());
}

TEST_CASE("batch --server and serve refuse what cannot work with one line, writing nothing", "[batch][server]") {
  const fs::path in = fresh("bad-in"), d = fresh("bad");
  synth(in / "a.h5", "--spokes 12");
  const std::string scan = (in / "a.h5").string();
  auto none = run_cli("--quiet batch " + scan + " --out " + (d / "o").string() + " --server " + (d / "none.sock").string());
  INFO(none.out);
  CHECK(none.code == 2);
  CHECK(none.out.rfind("fhdrecon: error: batch --server " + (d / "none.sock").string() + ": no fhdrecon server answers there", 0) == 0);
  CHECK(std::count(none.out.begin(), none.out.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(d / "o"));

  Served server(d);
  // Connections that are not a batch are dropped and the server goes on: a
  // length of 2 GiB, and half a message left hanging (dropped after 10 s).
  const auto connect_and_send = [&](const std::string& bytes) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, server.socket().c_str(), sizeof a.sun_path - 1);
    REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
    CHECK(::write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    return fd;
  };
  ::close(connect_and_send(std::string("\0\0\0\x80xy", 6)));
  const int stalled = connect_and_send(std::string("\x40\0\0\0{\"type\"", 11));
  auto ok = run_cli("--quiet batch " + scan + " --out " + (d / "ok").string() + " --iters 3 --server " + server.socket());
  ::close(stalled);
  INFO(ok.out << "\n" << server.log());
  CHECK(ok.code == 0);
  CHECK(server.log().find("serve: a batch's connection: batch: a message claims 2147483648 bytes") !=
        std::string::npos);
  CHECK(server.log().find("serve: a batch's connection: did not send a batch") != std::string::npos);
  auto gpus = run_cli("--quiet batch " + scan + " --out " + (d / "o").string() + " --jobs 2 --server " + server.socket());
  CHECK(gpus.code == 2);
  CHECK(gpus.out.find("give --gpus or --jobs to fhdrecon serve instead") != std::string::npos);
  CHECK_FALSE(fs::exists(d / "o"));
  auto twice = run_cli("--quiet serve --socket " + server.socket() + " --device cpu");
  CHECK(twice.code == 2);
  CHECK(twice.out == "fhdrecon: error: serve --socket " + server.socket() + ": a server is already listening there\n");
  std::ofstream(d / "plain") << "x";
  auto file = run_cli("--quiet serve --socket " + (d / "plain").string() + " --device cpu");
  CHECK(file.code == 2);
  CHECK(file.out.find("exists and is not a socket") != std::string::npos);
  CHECK(text_of(d / "plain") == "x");
  CHECK(server.stop());
}
