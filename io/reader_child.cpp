#include "core/sanitizer.hpp"
#include "io/reader_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
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
char run_reader(const std::string& name, const std::string& path, std::string& result) {
  const auto it = readers().find(name);
  if (it == readers().end()) {
    result = "no reader named " + name + " in this executable";
    return 'X';
  }
  try {
    result = it->second(path);
  } catch (const InputError& e) {
    result = e.what();
    return 'E';
  } catch (const std::exception& e) {
    result = e.what();
    return 'X';
  }
  return 'O';
}

// ------------------------------------------------------------ the parent

// What the child sends: a head (its tag, 'O', 'E' or 'X', and the body's
// length) and a body (the reader's bytes, or the error's message). An exec
// that failed sends the head "N" alone.
constexpr std::size_t kHead = 1 + sizeof(std::uint64_t);

struct Answer {
  std::string head, body;
  std::uint64_t announced() const {
    std::uint64_t n = 0;
    if (head.size() == kHead) std::memcpy(&n, head.data() + 1, sizeof n);
    return n;
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
    if (free == 0 || a.announced() <= free) a.body.reserve(std::size_t(a.announced()));
  }
  a.body.append(data + head, n - head);
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

// fork + exec of this executable in reader mode, its pipe end as fd 3. Between
// fork and exec only async-signal-safe calls (raw syscalls where a sanitizer
// could intercept them): the child of a threaded process may not take a lock.
// Returns -1 when no child could be started.
pid_t spawn_reader(const std::string& name, const std::string& path, int write_fd) {
  const std::string exe = this_executable();
  std::vector<std::string> args = {exe, kFlag, name, path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  sigset_t none;
  sigemptyset(&none);
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != parent) ::_exit(127);  // the parent is already gone
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (write_fd == kResultFd ? ::fcntl(kResultFd, F_SETFD, 0) != 0 : ::dup2(write_fd, kResultFd) != kResultFd)
    ::_exit(127);
  ::syscall(SYS_close_range, kResultFd + 1, ~0U, 0);  // no inherited lock or pipe survives exec
  ::execv("/proc/self/exe", argv.data());
  if (::write(kResultFd, "N", 1) < 0) {
  }  // exec failed: the parent reads in-process; nothing else to do here
  ::_exit(127);
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
  if (argc != 4 || std::strcmp(argv[1], kFlag) != 0) return;
  h5::no_cleanup_at_exit();
  const std::string name = argv[2], path = argv[3];
  cap_address_space(path);
  // The result goes through the pipe; what a crash prints (libhdf5's traces)
  // would break the CLI's one-line error, and stdout is the parent's table.
  // Sanitizer reports are kept by ASAN_OPTIONS=log_path (scripts/fuzz.sh,
  // scripts/sanitize.sh), which does not use stderr.
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) ::dup2(null, 1), ::dup2(null, 2);
  test_hook("reader-child");
  std::string result;
  const char tag = run_reader(name, path, result);
  std::string head(kHead, tag);
  const std::uint64_t n = result.size();
  std::memcpy(&head[1], &n, sizeof n);
  write_all(kResultFd, head);
  write_all(kResultFd, result);
  ::_exit(0);
}

std::optional<std::string> read_in_child(const std::string& path, const std::string& name) {
  // Not a regular file (a FIFO, a device): the child still reads it, on the
  // time of an empty file.
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const Clock::time_point start = Clock::now();
  const double seconds = reader_child_seconds(ec ? 0.0 : double(size));
  const pid_t pid = spawn_reader(name, path, fds[1]);
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return std::nullopt;
  }
  register_child_process(pid);  // an interrupt kills it (and PR_SET_PDEATHSIG, should we be killed)
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  ::fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups for a large scan; the default 64 KiB works too
  Answer a;
  bool timed_out = !read_until_eof(fds[0], deadline, a);
  ::close(fds[0]);
  const int status = finish_child(pid, deadline, timed_out);
  if (a.head == "N") return std::nullopt;  // exec failed
  if (timed_out) {
    char s[32];
    std::snprintf(s, sizeof s, "%.3g", seconds);
    refuse(path, std::string("libhdf5 did not finish reading it in ") + s +
                     " s (corrupt HDF5 structure? FHDRECON_READ_TIMEOUT sets the limit)");
  }
  // A child that died after writing part of its answer is a crash too.
  if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0 || a.head.size() != kHead || a.body.size() != a.announced())
    refuse(path, "libhdf5 crashed reading it (corrupt HDF5 structure; " +
                     (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                          : "exit status " + std::to_string(WEXITSTATUS(status))) +
                     ")");
  if (a.head[0] == 'E') throw InputError(a.body);
  if (a.head[0] == 'X') {
    for (char& c : a.body)
      if (c == '\n') c = ' ';
    refuse(path, "unreadable (corrupt?): " + a.body);
  }
  if (a.head[0] != 'O') refuse(path, "unreadable: the reader child's answer is malformed");
  return std::move(a.body);
}

}  // namespace fhd
