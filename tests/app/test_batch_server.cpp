// The resident batch server (issue 26's warm workers that outlive a batch):
// batches through `fhdrecon serve` write the rows a batch's own workers write,
// its workers start once for batch after batch, a crash or an interrupt costs
// its rows and the server goes on, and the bad cases get one line.

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "app/batch_plan.hpp"
#include "app/batch_protocol.hpp"
#include "batch_test_util.hpp"
#include "catch.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using fhd::test::file_args;
using fhd::test::read_json;
using fhd::test::rows_by_name;
using fhd::test::run_cli;
using nlohmann::json;

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
  // `cwd`: the server's working directory ("" = the tests').
  Served(const fs::path& dir, const std::string& env = "", const fs::path& cwd = "") : dir_(dir) {
    const std::string cmd = (cwd.empty() ? "" : "cd " + cwd.string() + "; ") + env + " " + std::string(FHDRECON_EXE) +
                            " --verbose serve --socket " + socket() + " --device cpu --jobs 1 > " +
                            (dir / "serve.log").string() + " 2>&1 & echo $!";
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
    if (!alive(pid_)) return (pid_ = 0), false;  // it died on its own
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

// A raw connection to a server, speaking its messages (app/batch_server.hpp).
class RawClient {
 public:
  explicit RawClient(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  }
  ~RawClient() { ::close(fd_); }
  void send(const json& m) { REQUIRE(fhd::app::send_message(fd_, m)); }
  // The next message within `seconds`; null when none came.
  json receive(double seconds) {
    for (const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
         std::chrono::steady_clock::now() < end;) {
      if (std::optional<json> m = in_.next()) return *m;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0 && !in_.read_from(fd_)) break;
    }
    return nullptr;
  }
  int fd() const { return fd_; }

 private:
  int fd_;
  fhd::app::MessageReader in_;
};

json batch_header(std::size_t scans, const std::string& revision = fhd::app::build_revision()) {
  return {{"type", "batch"},
          {"revision", revision},
          {"job_args", {"--iters", "3", "--device", "cpu"}},
          {"timeout", 0},
          {"scans", scans}};
}

// A peer at `path` that speaks the server's messages but is not fhdrecon: it
// answers every scan "ok" with a PSNR of 42 dB and writes nothing. Serves one
// batch, in a thread.
class FakeServer {
 public:
  explicit FakeServer(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }

 private:
  void serve() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 30000) <= 0) return;
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    fhd::app::MessageReader in;
    const auto next = [&]() -> json {
      for (;;) {
        if (std::optional<json> m = in.next()) return *m;
        if (!in.read_from(c)) return nullptr;
      }
    };
    const json b = next();
    fhd::app::send_message(c, {{"type", "workers"}, {"labels", {"gpu 0"}}});
    json tasks = json::array();
    while (tasks.size() < b.value("scans", std::size_t(0))) {
      const json m = next();
      if (!m.is_object()) break;
      for (const json& t : m["tasks"]) tasks.push_back(t);
    }
    for (const json& t : tasks) {
      const json row = {{"file", t["file"]},
                        {"status", "ok"},
                        {"reason", ""},
                        {"output", t["output"]},
                        {"coils", 1},
                        {"q_source", "cache"},
                        {"iterative", {{"psnr_db", 42.0}, {"nrmse", 0.01}}},
                        {"gridding_kb", {{"psnr_db", 30.0}, {"nrmse", 0.05}}},
                        {"seconds", {{"total", 0.5}}}};
      const json end = {
          {"exit_code", 0}, {"signal", 0}, {"timed_out", false}, {"interrupted", false}, {"seconds", 0.5}};
      fhd::app::send_message(c, {{"type", "done"},
                                 {"id", t["id"]},
                                 {"worker", 0},
                                 {"outcome", {{"row", row}, {"end", end}, {"started", true}}}});
    }
    fhd::app::send_message(c, {{"type", "end"}, {"complete", true}});
    ::close(c);
  }

  int fd_;
  std::thread thread_;
};

json one_task(const std::string& file, const std::string& output) {
  return {{"type", "tasks"},
          {"tasks", {{{"id", 0}, {"file", file}, {"output", output}, {"run_id", "r"}, {"q_cache", ""}}}}};
}

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
            read_json(d / out / fs::path(x["scans"][0]["file"].get<std::string>()).stem() /
                      "report.json")["batch"]["run_id"]);
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

  auto crash =
      run_cli("--quiet batch" + file_args(in, {"crashes.h5", "good.h5"}) + " --out " + (d / "c").string() + common);
  INFO(crash.out << "\n" << server.log());
  CHECK(crash.code == 2);
  auto rows = rows_by_name(read_json(d / "c" / "summary.json"));
  CHECK(rows["crashes.h5"]["reason"].get<std::string>().rfind("crashed: signal 6", 0) == 0);
  CHECK(rows["good.h5"]["status"] == "ok");

  // SIGTERM to the batch while its scan hangs on the server.
  const std::string hang =
      fhd::test::shell(std::string(FHDRECON_EXE) + " --quiet batch " + (in / "hangs.h5").string() + " " +
                       (in / "good.h5").string() + " --out " + (d / "h").string() + common +
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
  auto none =
      run_cli("--quiet batch " + scan + " --out " + (d / "o").string() + " --server " + (d / "none.sock").string());
  INFO(none.out);
  CHECK(none.code == 2);
  CHECK(none.out.rfind(
            "fhdrecon: error: batch --server " + (d / "none.sock").string() + ": no fhdrecon server answers there",
            0) == 0);
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
  // A message dripped a byte a second: the 10 s are for the whole message, not each read.
  const int stalled = connect_and_send(std::string("\x40\0\0\0{\"type\"", 11));
  std::thread drip([stalled] {
    for (int i = 0; i < 40 && ::send(stalled, " ", 1, MSG_NOSIGNAL) == 1; ++i)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto ok =
      run_cli("--quiet batch " + scan + " --out " + (d / "ok").string() + " --iters 3 --server " + server.socket());
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::shutdown(stalled, SHUT_RDWR);
  drip.join();
  ::close(stalled);
  INFO(ok.out << "\n" << server.log());
  CHECK(ok.code == 0);
  CHECK(waited < 20);
  CHECK(server.log().find("serve: a batch's connection: batch: a message claims 2147483648 bytes") !=
        std::string::npos);
  CHECK(server.log().find("serve: a batch's connection: did not send a whole message within 10 s") !=
        std::string::npos);
  // The server's --device rules: the other one is refused by the server, not
  // run (or failed row by row) on workers it did not mean to start.
  auto device = run_cli("--quiet batch " + scan + " --out " + (d / "dev").string() + " --device gpu --server " +
                        server.socket());
  CHECK(device.code != 0);
  CHECK(device.out.find("the server refused the batch: the batch asks for --device gpu; this server serves --device cpu") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(d / "dev"));  // the directory it made goes again, lock file and all
  auto gpus =
      run_cli("--quiet batch " + scan + " --out " + (d / "o").string() + " --jobs 2 --server " + server.socket());
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

TEST_CASE("a server resolves nothing from its own directory: the batch sends absolute paths, a relative one is refused",
          "[batch][server][paths]") {
  const fs::path d = fresh("paths");
  synth(d / "in" / "s0.h5", "--spokes 12");
  synth(d / "srv" / "in" / "s0.h5", "--spokes 16 --noise 0.2");  // the other scan of the same name
  Served server(d, "", d / "srv");
  const std::string run = fhd::test::shell("cd " + d.string() + "; $FHD --quiet batch in/s0.h5 --out outR --iters 3" +
                                           " --device cpu --cache-dir qc --server " + server.socket() + "; echo rc=$?");
  INFO(run << "\n" << server.log());
  CHECK(fhd::test::exit_status(run) == 0);
  REQUIRE(fs::exists(d / "outR" / "summary.json"));
  CHECK_FALSE(fs::exists(d / "srv" / "outR"));
  CHECK(fs::exists(d / "qc"));
  CHECK_FALSE(fs::exists(d / "srv" / "qc"));
  const json row = read_json(d / "outR" / "summary.json")["scans"][0];
  CHECK(row["file"] == "in/s0.h5");  // named as the batch named it
  CHECK(row["output"] == "outR/s0");
  CHECK(read_json(d / "outR" / "s0" / "report.json")["batch"]["input"] == (d / "in" / "s0.h5").string());

  // A relative or empty path, or a message of the wrong shape: refused, one line each.
  for (const json& tasks : {one_task("in/s0.h5", (d / "x").string()), one_task("", (d / "x").string()),
                            json{{"type", "tasks"}, {"tasks", {{{"id", 0}}}}}}) {
    RawClient c(server.socket());
    c.send(batch_header(1));
    CHECK(c.receive(5)["type"] == "workers");
    c.send(tasks);
    const json answer = c.receive(5);
    INFO(tasks.dump() << " -> " << answer.dump());
    CHECK(answer["type"] == "refused");
  }
  const std::string log = server.log();
  INFO(log);
  CHECK(log.find("serve: refused a batch: scan 0: \"file\" is not an absolute path: in/s0.h5") != std::string::npos);
  CHECK(log.find("serve: refused a batch: scan 0: \"file\" is empty") != std::string::npos);
  CHECK(log.find("serve: refused a batch: scan 0 has no \"file\"") != std::string::npos);
  CHECK(log.find("json.exception") == std::string::npos);
  CHECK_FALSE(fs::exists(d / "x"));
  CHECK(server.stop());
}

TEST_CASE("a batch stops at once when interrupted: waiting its turn, or its stop read with its scans",
          "[batch][server][interrupt]") {
  const fs::path in = fresh("queued-in"), d = fresh("queued");
  synth(in / "good.h5", "--spokes 12");
  fs::copy_file(in / "good.h5", in / "hangs.h5");
  Served server(d, "FHDRECON_TEST_SCAN_FAULT=hang:hangs");
  const std::string common = " --iters 3 --device cpu --server " + server.socket() + " > /dev/null 2>&1";
  // A holds the server (its scan hangs); B waits its turn and gets SIGINT.
  const std::string out = fhd::test::shell(
      "$FHD --quiet batch " + (in / "hangs.h5").string() + " --out " + (d / "a").string() + common +
      " & a=$!; sleep 1; " + "$FHD --quiet batch " + (in / "good.h5").string() + " --out " + (d / "b").string() +
      common +
      " & b=$!; sleep 1.5; kill -INT $b; for i in $(seq 50); do kill -0 $b 2>/dev/null || break; sleep 0.1; done; " +
      "kill -0 $b 2>/dev/null && echo b-still-waiting && kill -KILL $b; wait $b; echo rc=$?; kill -TERM $a; wait $a");
  INFO(out << "\n" << server.log());
  CHECK(out.find("b-still-waiting") == std::string::npos);
  CHECK(fhd::test::exit_status(out) == 1);
  REQUIRE(fs::exists(d / "b" / "summary.json"));
  CHECK(rows_by_name(read_json(d / "b" / "summary.json"))["good.h5"]["reason"] == "not run: batch interrupted");

  // A stop that arrives in the same read as the scans (here: the same write).
  RawClient c(server.socket());
  c.send(batch_header(1));
  CHECK(c.receive(5)["type"] == "workers");
  std::string frames;
  for (const json& m : {one_task((in / "hangs.h5").string(), (d / "raw").string()), json{{"type", "stop"}}}) {
    const std::string body = m.dump();
    const auto n = std::uint32_t(body.size());
    frames += std::string{char(n & 0xff), char(n >> 8 & 0xff), char(n >> 16 & 0xff), char(n >> 24 & 0xff)} + body;
  }
  REQUIRE(::write(c.fd(), frames.data(), frames.size()) == ssize_t(frames.size()));
  json m = c.receive(10);
  while (m.is_object() && m["type"] == "done") m = c.receive(10);
  CHECK(m == json{{"type", "end"}, {"complete", false}});
  CHECK(server.stop());
}

TEST_CASE("a server whose stderr is closed goes on serving (no SIGPIPE)", "[batch][server][sigpipe]") {
  const fs::path in = fresh("pipe-in"), d = fresh("pipe");
  synth(in / "a.h5", "--spokes 12");
  const std::string sock = (d / "s.sock").string();
  // `serve 2>&1 | head -1`: its stderr is a pipe nobody reads after the first line.
  const int pid = std::stoi(fhd::test::shell("( $FHD --verbose serve --socket " + sock +
                                             " --device cpu --jobs 1 2>&1 & echo $! > " + (d / "pid").string() +
                                             ") | head -1 > /dev/null; cat " + (d / "pid").string()));
  for (int i = 0; i < 200 && !fs::exists(sock); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (const char* out : {"one", "two"}) {
    auto r = run_cli("--verbose batch " + (in / "a.h5").string() + " --out " + (d / out).string() +
                     " --iters 3 --device cpu --server " + sock);
    INFO(out << "\n" << r.out);
    CHECK(r.code == 0);
  }
  CHECK(alive(pid));
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 300 && alive(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(alive(pid));
  CHECK_FALSE(fs::exists(sock));
}

TEST_CASE("a server takes a batch of thousands of scans (more than one message holds)", "[batch][server][large]") {
  const fs::path d = fresh("large");
  const std::string name(70, 'x');
  {
    std::ofstream list(d / "list.txt");
    for (int i = 0; i < 4000; ++i) list << (d / "missing" / (name + std::to_string(i) + ".h5")).string() << "\n";
  }
  Served server(d);
  auto r = run_cli("--quiet batch --files-from " + (d / "list.txt").string() + " --out " + (d / "o").string() +
                   " --iters 3 --device cpu --server " + server.socket());
  INFO(r.out.substr(0, 2000) << "\n" << server.log().substr(0, 2000));
  CHECK(r.code == 2);  // every scan failed: it does not exist
  REQUIRE(fs::exists(d / "o" / "summary.json"));
  const json scans = read_json(d / "o" / "summary.json")["scans"];
  CHECK(scans.size() == 4000);
  CHECK(scans[3999]["status"] == "failed");
  CHECK(scans[3999]["file"] == (d / "missing" / (name + "3999.h5")).string());
  CHECK(server.stop());
}

TEST_CASE("SIGTERM ends a server that is reading half a batch, at once", "[batch][server][slow]") {
  const fs::path d = fresh("term");
  Served server(d);
  RawClient c(server.socket());
  REQUIRE(::write(c.fd(), "\x40\0\0\0{\"ty", 8) == 8);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(server.stop());
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 3);
}

TEST_CASE("a served scan is ok only with this batch's outputs in DIR: a peer that wrote nothing fails its rows",
          "[batch][server][trust]") {
  const fs::path in = fresh("fake-in"), d = fresh("fake");
  synth(in / "a.h5", "--spokes 12");
  fs::copy_file(in / "a.h5", in / "b.h5");
  const std::string sock = (d / "fake.sock").string();
  FakeServer fake(sock);
  auto r = run_cli("--quiet batch" + file_args(in, {"a.h5", "b.h5"}) + " --out " + (d / "o").string() +
                   " --iters 3 --device cpu --server " + sock);
  INFO(r.out);
  CHECK(r.code == 2);
  const auto rows = rows_by_name(read_json(d / "o" / "summary.json"));
  for (const char* f : {"a.h5", "b.h5"}) {
    INFO(f);
    CHECK(rows.at(f)["status"] == "failed");
    CHECK(rows.at(f)["reason"] == "the server reported outputs that are not in " +
                                      (d / "o" / fs::path(f).stem()).string() +
                                      " (does the server see the same filesystem?)");
    CHECK(rows.at(f)["iterative"]["psnr_db"].is_null());
  }
}

TEST_CASE("a server of another build refuses a batch with one line", "[batch][server][revision]") {
  const fs::path d = fresh("revision");
  Served server(d);
  RawClient c(server.socket());
  c.send(batch_header(1, "0000000000-other"));
  const json m = c.receive(5);
  CHECK(m == json{{"type", "refused"},
                  {"reason", "the batch is of fhdrecon revision 0000000000-other, this server of revision " +
                                 fhd::app::build_revision() + ": restart fhdrecon serve from the batch's build"}});
  CHECK(server.stop());
}

TEST_CASE("batch --server names a path that is not a socket as such", "[batch][server]") {
  const fs::path d = fresh("notsock");
  std::ofstream(d / "plain") << "x";
  auto r = run_cli("--quiet batch " + (d / "a.h5").string() + " --out " + (d / "o").string() + " --server " +
                   (d / "plain").string());
  CHECK(r.code == 2);
  CHECK(r.out == "fhdrecon: error: batch --server " + (d / "plain").string() +
                     ": is not a socket (give the path of fhdrecon serve --socket)\n");
  CHECK_FALSE(fs::exists(d / "o"));
}

TEST_CASE("a second server on one path is refused while the first runs; a server removes only its own socket",
          "[batch][server][lock]") {
  const fs::path d = fresh("lock");
  Served server(d);
  // Its socket file gone: the second server still finds the first (by PATH.lock), not a free path.
  fs::remove(server.socket());
  auto second = run_cli("--quiet serve --socket " + server.socket() + " --device cpu", "timeout 10");
  CHECK(second.code == 2);
  CHECK(second.out == "fhdrecon: error: serve --socket " + server.socket() + ": a server is already listening there\n");
  std::ofstream(server.socket()) << "not the server's";
  server.stop();
  CHECK(text_of(server.socket()) == "not the server's");
}
