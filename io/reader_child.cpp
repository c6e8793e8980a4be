#include "core/sanitizer.hpp"
#include "io/reader_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "io/h5util.hpp"
#include "io/scan_checks.hpp"

namespace fhd {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kFlag = "--fhdrecon-reader-child";  // argv[1] of a reader child
constexpr int kResultFd = 3;                              // the child's end of the pipe
constexpr int kRequestFd = 4;                             // a spare's end of its request socket
constexpr const char* kAsked = "-";                       // a spare's reader, path and argument: sent later
constexpr int kLogLines = 64;                             // the child's last log messages sent back

// What a child is asked to do: run reader `name` on `path` with `arg`.
struct Request {
  std::string name, path, arg;
};

std::map<std::string, ChildReader>& readers() {
  static std::map<std::string, ChildReader> r;
  return r;
}

// ------------------------------------------------------------ the child

// Address space now (VmSize), from /proc/self/statm (pages).
double address_space_bytes() {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return double(pages) * double(sysconf(_SC_PAGE_SIZE));
}

void cap_address_space(const std::string& path) {
  if (kAsan) return;
  std::error_code ec;
  const double size = double(fs::file_size(path, ec));
  // The readers' own checks keep a valid file's needs to a few times its size.
  const double cap = address_space_bytes() + 8.0 * (ec ? 0 : size) + double(1u << 30);
  const rlimit r{rlim_t(cap), rlim_t(cap)};
  setrlimit(RLIMIT_AS, &r);
}

void write_all(int fd, const std::string& msg) {
  for (std::size_t at = 0; at < msg.size();) {
    const ssize_t n = ::write(fd, msg.data() + at, msg.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += std::size_t(n);
  }
}

// 'O' (read: `result` holds the reader's bytes), 'E' (`result` holds the
// InputError) or 'X' (another error).
char run_reader(const Request& r, std::string& result) {
  const auto it = readers().find(r.name);
  if (it == readers().end()) {
    result = "no reader named " + r.name + " in this executable";
    return 'X';
  }
  try {
    result = it->second(r.path, r.arg);
  } catch (const InputError& e) {
    result = e.what();
    return 'E';
  } catch (const std::exception& e) {
    result = e.what();
    return 'X';
  }
  return 'O';
}

// The reader's log, kept in the child (its stderr goes nowhere) to be sent
// back: one line per message, its level's digit, then its text made printable.
std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> capture_log() {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(kLogLines);
  auto logger = std::make_shared<spdlog::logger>("reader", sink);
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return sink;
}

std::string captured(spdlog::sinks::ringbuffer_sink_mt& sink) {
  std::string log;
  for (const auto& m : sink.last_raw())
    log += char('0' + m.level) + printable(std::string(m.payload.data(), m.payload.size())) + '\n';
  return log;
}

// ------------------------------------------------------------ the parent

// What the child sends: a head (its tag, 'O', 'E' or 'X', the body's length
// and the log's), the body (the reader's bytes, or the error's message) and
// the log (capture_log's lines). An exec that failed sends the head "N" alone.
constexpr std::size_t kHead = 1 + 2 * sizeof(std::uint64_t);

std::string answer_head(char tag, std::uint64_t body, std::uint64_t log) {
  std::string head(kHead, tag);
  std::memcpy(&head[1], &body, sizeof body);
  std::memcpy(&head[1 + sizeof body], &log, sizeof log);
  return head;
}

struct Answer {
  std::string head, body;  // body: the reader's bytes, then the log
  std::uint64_t announced(int which) const {  // 0: the body's length, 1: the log's
    std::uint64_t n = 0;
    if (head.size() == kHead) std::memcpy(&n, head.data() + 1 + which * sizeof n, sizeof n);
    return n;
  }
  bool complete() const {
    return head.size() == kHead && announced(1) <= body.size() && body.size() - announced(1) == announced(0);
  }
  // The log's lines, taken off the body.
  std::string take_log() {
    std::string log = body.substr(std::size_t(announced(0)));
    body.resize(std::size_t(announced(0)));
    return log;
  }
};

// Sizes the body once when the head is complete: a large scan is received
// without reallocations (the length is ours, still only trusted up to the
// memory available).
void take(Answer& a, const char* data, std::size_t n) {
  const std::size_t head = std::min(n, kHead - std::min(kHead, a.head.size()));
  a.head.append(data, head);
  if (head && a.head.size() == kHead) {
    const std::size_t free = available_host_bytes();
    const std::uint64_t total = a.announced(0) + a.announced(1);
    if ((free == 0 || total <= free) && total >= a.announced(0)) a.body.reserve(std::size_t(total));
  }
  a.body.append(data + head, n - head);
}

// The child's log lines, logged here at their levels (a line not of
// capture_log's form is dropped).
void relay_log(const std::string& log) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 1 && line[0] >= '0' && line[0] <= '6')
      spdlog::log(spdlog::level::level_enum(line[0] - '0'), "{}", line.substr(1));
}

// The result pipe's read end, non-blocking; read while the child writes
// (a scan's bytes, a MiB at a time). Returns false when the deadline passed
// before the child closed its end.
bool read_until_eof(int fd, Clock::time_point deadline, Answer& out) {
  std::vector<char> buf(std::size_t(1) << 20);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, int(std::min<long long>(left, 1000)));
    if (r < 0 && errno != EINTR) return true;  // cannot wait on it: treat as the end
    if (r <= 0) continue;
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n == 0) return true;
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return true;
    take(out, buf.data(), std::size_t(n));
  }
}

// Waits (without reaping) until `pid` has ended or the deadline passed.
bool ended_by(pid_t pid, Clock::time_point deadline) {
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno != EINTR;
    if (info.si_pid == pid) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Ends the child when it ran past the deadline, then reaps it. Forgotten by the
// interrupt's cleanup only once it has ended and before it is reaped, so the
// cleanup never signals a pid that was reused.
int finish_child(pid_t pid, Clock::time_point deadline, bool& timed_out) {
  if (!ended_by(pid, deadline)) {
    timed_out = true;
    ::kill(pid, SIGKILL);
    ended_by(pid, Clock::time_point::max());
  }
  forget_child_process(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string this_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

// A started child: its pid, the read end of its result pipe and, for a spare,
// the socket its request goes through.
struct Started {
  pid_t pid = -1;
  int result = -1, request = -1;
};

// An fd numbered above the child's own (3 and 4), close-on-exec; -1 on failure.
int above_child_fds(int fd) {
  if (fd < 0 || fd > kRequestFd) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, kRequestFd + 1);
  ::close(fd);
  return moved;
}

// posix_spawn (a vfork: no copy of the parent's page tables, which took
// 15-20 ms of a GPU worker's read) of this executable in reader mode: the
// result pipe as fd 3 and, for a spare, the request socket as fd 4. The child
// sets its own PR_SET_PDEATHSIG after the exec (argv names the parent).
// Returns a pid of -1 when no child could be started.
Started spawn_reader(const Request& r, bool spare) {
  Started c;
  int pipe_fds[2], sock[2] = {-1, -1};
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return c;
  const int read_end = above_child_fds(pipe_fds[0]), write_end = above_child_fds(pipe_fds[1]);
  if (spare && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) == 0) {
    sock[0] = above_child_fds(sock[0]);
    sock[1] = above_child_fds(sock[1]);
  }
  const bool ok = read_end >= 0 && write_end >= 0 && (!spare || (sock[0] >= 0 && sock[1] >= 0));
  std::vector<std::string> args = {this_executable(), kFlag, spare ? kAsked : r.name, spare ? kAsked : r.path,
                                   spare ? kAsked : r.arg, std::to_string(::getpid())};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  posix_spawn_file_actions_adddup2(&fa, write_end, kResultFd);
  if (spare) posix_spawn_file_actions_adddup2(&fa, sock[1], kRequestFd);
  std::fflush(nullptr);
  pid_t pid = -1;
  if (ok && ::posix_spawn(&pid, "/proc/self/exe", &fa, &attr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  for (int fd : {write_end, sock[1]})
    if (fd >= 0) ::close(fd);
  if (pid < 0) {
    for (int fd : {read_end, sock[0]})
      if (fd >= 0) ::close(fd);
    return c;
  }
  register_child_process(pid);  // an interrupt kills it (and PR_SET_PDEATHSIG, should we be killed)
  return {pid, read_end, sock[0]};
}

// The request a spare waits for: the reader's name, the path and the
// argument, each ended by a NUL, then the end of the stream.
bool send_request(const Started& c, const Request& r) {
  const std::string msg = r.name + '\0' + r.path + '\0' + r.arg + '\0';
  for (std::size_t at = 0; at < msg.size();) {
    const ssize_t n = ::send(c.request, msg.data() + at, msg.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += std::size_t(n);
  }
  return ::shutdown(c.request, SHUT_WR) == 0;
}

// Reads a spare's request from fd 4: false when it is malformed or cut short.
bool receive_request(Request& r) {
  std::string msg;
  char buf[4096];
  for (ssize_t n; (n = ::read(kRequestFd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || msg.size() > (std::size_t(1) << 20)) return false;
    msg.append(buf, std::size_t(n));
  }
  ::close(kRequestFd);
  std::vector<std::string> fields;
  for (std::size_t at = 0, end; (end = msg.find('\0', at)) != std::string::npos; at = end + 1)
    fields.push_back(msg.substr(at, end - at));
  if (fields.size() != 3 || msg.empty() || msg.back() != '\0') return false;
  r = {fields[0], fields[1], fields[2]};
  return true;
}

// Ends a child that will not be used (a spare left over, or one that died).
void discard(Started& c) {
  if (c.pid > 0) {
    ::kill(c.pid, SIGKILL);
    forget_child_process(c.pid);
    while (::waitpid(c.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  for (int fd : {c.result, c.request})
    if (fd >= 0) ::close(fd);
  c = Started{};
}

// The spare: a reader child started ahead, waiting for its request, so a read
// does not wait for the exec and the executable's start (0.05-0.09 s of a
// 20 MB scan's 0.15 s read on the GPU host). Only where keep_spare_reader()
// asked for one; a spare that died meanwhile is replaced by a fresh child.
struct SpareState {
  std::mutex mutex;
  bool wanted = false;
  Started child;
};

SpareState& spare_state() {
  static SpareState s;
  return s;
}

// A live spare, or a pid of -1.
Started take_spare() {
  SpareState& s = spare_state();
  std::lock_guard<std::mutex> g(s.mutex);
  Started c = s.child;
  s.child = Started{};
  if (c.pid > 0) {
    siginfo_t info{};
    if (::waitid(P_PID, id_t(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == c.pid) discard(c);
  }
  return c;
}

void replenish_spare() {
  SpareState& s = spare_state();
  std::lock_guard<std::mutex> g(s.mutex);
  if (!s.wanted || s.child.pid > 0) return;
  s.child = spawn_reader(Request{}, true);
}

// The child that reads `path` (its result pipe only): the spare when there is
// one and it takes the request, else a fresh one; then the next spare is
// started beside this read.
Started start_reader(const Request& r) {
  Started c = take_spare();
  if (c.pid > 0 && !send_request(c, r)) discard(c);
  if (c.request >= 0) {
    ::close(c.request);  // the request is sent
    c.request = -1;
  }
  if (c.pid < 0) c = spawn_reader(r, false);
  replenish_spare();
  return c;
}

[[noreturn]] void refuse(const std::string& path, const std::string& problem) {
  throw file_error(path, problem);
}

}  // namespace

bool add_child_reader(const std::string& name, ChildReader read) {
  readers()[name] = read;
  return true;
}

double reader_child_seconds(double file_bytes) {
  if (const char* v = std::getenv("FHDRECON_READ_TIMEOUT")) {
    const double s = std::strtod(v, nullptr);
    if (s > 0 && std::isfinite(s)) return s;
  }
  return 6.0 + file_bytes / double(64u << 20);
}

void serve_reader_child(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], kFlag) != 0) return;
  // argv: the flag, the reader's name, the path, the argument (all kAsked for
  // a spare), the parent's pid.
  if (argc != 6) ::_exit(127);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (std::to_string(::getppid()) != argv[5]) ::_exit(127);  // the parent is already gone
  ::syscall(SYS_close_range, kRequestFd + 1, ~0U, 0);        // no inherited lock or socket stays open
  h5::no_cleanup_at_exit();
  Request r{argv[2], argv[3], argv[4]};
  if (r.name != kAsked)
    ::close(kRequestFd);
  else if (!receive_request(r))
    ::_exit(127);
  cap_address_space(r.path);
  // The result goes through the pipe; what a crash prints (libhdf5's traces)
  // would break the CLI's one-line error, and stdout is the parent's table.
  // Sanitizer reports are kept by ASAN_OPTIONS=log_path (scripts/fuzz.sh,
  // scripts/sanitize.sh), which does not use stderr.
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) ::dup2(null, 1), ::dup2(null, 2);
  test_hook("reader-child");
  const auto sink = capture_log();
  std::string result;
  const char tag = run_reader(r, result);
  const std::string log = captured(*sink);
  write_all(kResultFd, answer_head(tag, result.size(), log.size()));
  write_all(kResultFd, result);
  write_all(kResultFd, log);
  ::_exit(0);
}

int spare_reader_pid() {
  std::lock_guard<std::mutex> g(spare_state().mutex);
  return spare_state().child.pid;
}

void keep_spare_reader() {
  {
    std::lock_guard<std::mutex> g(spare_state().mutex);
    spare_state().wanted = true;
  }
  replenish_spare();
}

std::optional<std::string> read_in_child(const std::string& path, const std::string& name, const std::string& arg) {
  // Not a regular file (a FIFO, a device): the child still reads it, on the
  // time of an empty file.
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const Clock::time_point start = Clock::now();
  const double seconds = reader_child_seconds(ec ? 0.0 : double(size));
  const Started child = start_reader(Request{name, path, arg});
  if (child.pid < 0) return std::nullopt;
  const pid_t pid = child.pid;
  const int result_fd = child.result;
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  ::fcntl(result_fd, F_SETFL, O_NONBLOCK);
  ::fcntl(result_fd, F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for a large scan; the default 64 KiB works too
  Answer a;
  bool timed_out = !read_until_eof(result_fd, deadline, a);
  ::close(result_fd);
  const int status = finish_child(pid, deadline, timed_out);
  if (timed_out) {
    char s[32];
    std::snprintf(s, sizeof s, "%.3g", seconds);
    refuse(path, std::string("libhdf5 did not finish reading it in ") + s +
                     " s (corrupt HDF5 structure? FHDRECON_READ_TIMEOUT sets the limit)");
  }
  // SIGKILL is never libhdf5's own crash: the OOM killer or someone's kill -9.
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
    refuse(path, "its reader was killed (signal 9: out of memory, or killed from outside); the file may be fine");
  // A child that died after writing part of its answer is a crash too.
  if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0 || !a.complete())
    refuse(path, "libhdf5 crashed reading it (corrupt HDF5 structure; " +
                     (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                          : "exit status " + std::to_string(WEXITSTATUS(status))) +
                     ")");
  const std::string log = a.take_log();  // logged when the read succeeded: an error stays one line
  if (a.head[0] == 'E') throw InputError(a.body);
  if (a.head[0] == 'X') {
    for (char& c : a.body)
      if (c == '\n') c = ' ';
    refuse(path, "unreadable (corrupt?): " + a.body);
  }
  if (a.head[0] != 'O') refuse(path, "unreadable: the reader child's answer is malformed");
  relay_log(log);
  return std::move(a.body);
}

}  // namespace fhd
