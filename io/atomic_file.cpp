#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "core/error.hpp"

namespace fhd {
namespace fs = std::filesystem;

// ------------------------------------------------------------ temporaries

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::set<std::string>& registry() {
  static std::set<std::string> r;
  return r;
}

// pid + a process-wide counter: two writers (threads or processes) never share a temporary.
std::string temp_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  fs::path p(path);
  std::string tag = ".fhdtmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-";
  return (p.parent_path() / (tag + p.filename().string())).string();
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

void register_temporary(const std::string& path) {
  std::lock_guard<std::mutex> g(registry_mutex());
  registry().insert(path);
}

void create_temporary(const std::string& path, const std::function<void()>& create) {
  std::lock_guard<std::mutex> g(registry_mutex());  // an interrupt removes it, or comes after
  registry().insert(path);
  create();
}

void forget_temporary(const std::string& path) {
  std::lock_guard<std::mutex> g(registry_mutex());
  registry().erase(path);
}

namespace {
// A writer may still be adding a file to a staging directory while it is
// removed (rmdir then fails, not empty): try again until it is gone.
void remove_whole(const std::string& path) noexcept {
  std::error_code ec;
  for (int attempt = 0; attempt < 100 && fs::exists(fs::symlink_status(path, ec)); ++attempt) fs::remove_all(path, ec);
}
}  // namespace

void remove_temporary(const std::string& path) noexcept {
  std::lock_guard<std::mutex> g(registry_mutex());  // never beside an interrupt's removal of the same path
  remove_whole(path);
  registry().erase(path);
}

void remove_temporaries_and_hold() noexcept {
  registry_mutex().lock();  // never unlocked: no temporary is created or swapped in after this
  for (const std::string& p : registry()) remove_whole(p);
  registry().clear();
}

namespace {
std::mutex& children_mutex() {
  static std::mutex m;
  return m;
}
std::set<int>& children() {
  static std::set<int> c;
  return c;
}

// SIGKILL to every registered child, then up to a second for them to end, so
// that nothing they hold (a file, a lock) outlives this process.
void kill_children() noexcept {
  std::lock_guard<std::mutex> g(children_mutex());
  for (int pid : children()) ::kill(pid, SIGKILL);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (int pid : children())
    while (std::chrono::steady_clock::now() < until) {
      siginfo_t info{};
      if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}
}  // namespace

void register_child_process(int pid) {
  std::lock_guard<std::mutex> g(children_mutex());
  children().insert(pid);
}

void forget_child_process(int pid) {
  std::lock_guard<std::mutex> g(children_mutex());
  children().erase(pid);
}

namespace {
int g_signal_pipe[2] = {-1, -1};
std::atomic<bool> g_swapped{false};  // an output set of this run is in place (the interrupt message says so)
std::atomic<const char*> g_interrupt_label{"fhdrecon: interrupted"};

extern "C" void on_interrupt(int sig) {
  const int saved = errno;
  const unsigned char s = static_cast<unsigned char>(sig);
  if (::write(g_signal_pipe[1], &s, 1) < 0) {
  }  // nothing safe to do; the helper thread is already at work
  errno = saved;
}

void cleanup_thread() {
  unsigned char s = 0;
  while (::read(g_signal_pipe[0], &s, 1) < 0 && errno == EINTR) {
  }
  kill_children();
  remove_temporaries_and_hold();  // an output set swaps whole or not at all, and nothing new appears until _Exit
  std::fprintf(stderr, "%s (%s): temporaries removed, %s\n", g_interrupt_label.load(), ::strsignal(s),
               g_swapped.load() ? "the new outputs were already in place" : "earlier outputs left as they were");
  std::signal(s, SIG_DFL);
  ::kill(::getpid(), s);
  std::_Exit(128 + s);
}
}  // namespace

void forget_swapped_outputs() noexcept { g_swapped = false; }

void set_interrupt_label(const char* text) noexcept { g_interrupt_label = text; }

void install_interrupt_cleanup() {
  if (g_signal_pipe[0] >= 0 || ::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
  std::thread(cleanup_thread).detach();
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

void test_hook(const std::string& point) {
  const char* env = std::getenv("FHDRECON_TEST_HOOK");
  if (!env) return;
  const std::string h = env;
  const auto at = h.find('@');
  if (at == std::string::npos || h.substr(at + 1) != point) return;
  const std::string action = h.substr(0, at);
  if (action == "sigint" || action == "sigterm") ::kill(::getpid(), action == "sigint" ? SIGINT : SIGTERM);
  if (action == "pause" || action == "sigint" || action == "sigterm")  // the signal ends us meanwhile
    std::this_thread::sleep_for(std::chrono::seconds(60));
  if (action == "spin") {  // busy for up to 60 s, as libhdf5 spinning on a damaged heap
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
}

// ------------------------------------------------------------ one file

void sync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, "output", path, "cannot open to sync: " + errno_text());
  const bool ok = ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: the file system cannot sync (e.g. some /proc)
  const std::string why = errno_text();
  if (::close(fd) != 0 || !ok) throw InputError(path, "output", path, "cannot sync to disk: " + why);
}

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)), tmp_(temp_name(path_)) {
  if (path_.empty() || fs::path(path_).filename().empty())
    throw InputError("output", "path", "'" + path_ + "'", "not a file name");
  make_parent_dir(path_);  // its folders, made only now that there is something to write (check_writable_file)
  register_temporary(tmp_);
}

AtomicOutput::~AtomicOutput() {
  if (committed_)
    forget_temporary(tmp_);
  else
    remove_temporary(tmp_);
}

void AtomicOutput::commit() {
  try {
    sync_path(tmp_);
  } catch (...) {
    std::remove(tmp_.c_str());
    throw;
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::string why = errno_text();
    std::remove(tmp_.c_str());
    throw InputError(path_, "output", path_, "cannot rename the finished temporary into place: " + why);
  }
  committed_ = true;
  const std::string dir = fs::path(path_).parent_path().string();
  sync_path(dir.empty() ? "." : dir);
}

void make_output_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(dir, "output directory", dir, "exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    throw InputError(dir, "output directory", dir, "cannot create: " + (ec ? ec.message() : "unknown reason"));
}

void make_parent_dir(const std::string& path) {
  make_output_dir(fs::path(path).parent_path().string());
}

void check_writable_file(const std::string& path, const std::string& option) {
  if (path.empty()) throw InputError(option, "path", "\"\"", "must name a file");
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path, option, path, "is a directory, not a file");
  const fs::path name = fs::path(path).filename();
  if (name.empty() || name == "." || name == "..")
    throw InputError(path, option, path, "names a directory (it ends in '/', '.' or '..'), not a file");
  // Nothing is created before the run: its missing folders are made when the
  // file is written (a folder made here stayed behind a failed run, and one
  // inside --out broke that directory for every later run). The probe goes
  // into the nearest folder that exists.
  fs::path dir = fs::path(path).parent_path();
  while (!dir.empty() && !fs::exists(dir, ec)) dir = dir.parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw InputError(path, option, path, dir.string() + " is not a directory");
  // Create and remove a probe file rather than ask access(): root passes every
  // permission test, yet cannot create files in /proc or on a read-only mount.
  const std::string probe =
      ((dir.empty() ? fs::path(".") : dir) / (".fhdtmp-probe-" + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) throw InputError(path, option, path, "cannot create a file there: " + errno_text());
  ::close(fd);
  ::unlink(probe.c_str());
}

// ------------------------------------------------------------ a set of files

namespace {

// "out/", "./out" and "out" name one directory; "." becomes the absolute cwd.
fs::path normal_dir(const std::string& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p;
}

bool is_temporary_name(const std::string& name) { return name.rfind(".fhdtmp-", 0) == 0; }

}  // namespace

OutputSet::OutputSet(std::string dir, std::vector<std::string> owned) : owned_(std::move(owned)) {
  if (dir.empty()) throw InputError("--out", "directory", "\"\"", "must name a directory");
  const fs::path p = normal_dir(dir);
  if (p == p.root_path()) throw InputError(dir, "output directory", dir, "cannot replace the root directory");
  dir_ = dir;
  std::error_code ec;
  created_ = !fs::exists(dir_, ec);
  make_output_dir(dir_);
  // Staged beside the link and swapped with it, the outputs replaced the link
  // (a `results -> /scratch/...` link became a directory on the link's filesystem).
  fs::path real = fs::canonical(dir_, ec);
  if (ec) real = p;
  target_ = real.string();
  parent_ = real.parent_path().string();
  staging_ = (real.parent_path() / ("." + real.filename().string() + ".fhdtmp-" + std::to_string(::getpid()))).string();
  try {
    check_staging_possible();
    lock();
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.is_directory() && !is_temporary_name(e.path().filename().string()))
        throw InputError(dir_, "output directory", dir_,
                         "holds the subdirectory '" + e.path().filename().string() +
                             "'; fhdrecon replaces its output directory as a whole, so give it one of its own");
    if (::access(parent_.c_str(), W_OK | X_OK) != 0)
      throw InputError(dir_, "output directory", dir_, "its parent " + parent_ + " is not writable: " + errno_text());
    remove_stale();
  } catch (...) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    if (created_) fs::remove(dir_, ec);
    throw;
  }
}

// Before any work: the swap at the end must be able to happen.
void OutputSet::check_staging_possible() const {
  const fs::path real(target_);
  if (real == real.root_path()) throw InputError(dir_, "output directory", dir_, "cannot replace the root directory");
  struct stat d {}, up {};
  if (::stat(target_.c_str(), &d) == 0 && ::stat(parent_.c_str(), &up) == 0 && d.st_dev != up.st_dev)
    throw InputError(dir_, "output directory", dir_,
                     "is a mount point (another filesystem than its parent " + parent_ +
                         "); fhdrecon stages a new set beside its output directory and swaps it in, so give a "
                         "folder inside it, e.g. " + (fs::path(dir_) / "run1").string());
  const long name_max = ::pathconf(parent_.c_str(), _PC_NAME_MAX);
  const std::size_t staging_name = fs::path(staging_).filename().string().size();
  if (name_max > 0 && staging_name > std::size_t(name_max))
    throw InputError(dir_, "output directory", dir_,
                     "its name is too long: the staging directory beside it (.NAME.fhdtmp-PID) would need " +
                         std::to_string(staging_name) + " bytes where " + std::to_string(name_max) +
                         " fit; give a name of at most " +
                         std::to_string(real.filename().string().size() - (staging_name - std::size_t(name_max))) +
                         " bytes");
}

void OutputSet::lock() {
  for (int attempt = 0; attempt < 5; ++attempt) {
    lock_fd_ = ::open(target_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock_fd_ < 0) throw InputError(dir_, "output directory", dir_, "cannot open: " + errno_text());
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      const bool busy = errno == EWOULDBLOCK;
      const std::string why = errno_text();
      ::close(lock_fd_);
      lock_fd_ = -1;
      throw InputError(dir_, "output directory", dir_,
                       busy ? "another fhdrecon run is writing it (locked); wait for it or choose another --out"
                            : "cannot lock: " + why);
    }
    // A run that swapped its set in meanwhile left us locking the old inode: retry.
    struct stat locked {}, now {};
    if (::fstat(lock_fd_, &locked) == 0 && ::stat(target_.c_str(), &now) == 0 && locked.st_ino == now.st_ino &&
        locked.st_dev == now.st_dev)
      return;
    ::close(lock_fd_);
    lock_fd_ = -1;
  }
  throw InputError(dir_, "output directory", dir_, "keeps being replaced by another run");
}

// With the lock held, no live run owns a staging directory or temporary of ours.
void OutputSet::remove_stale() noexcept {
  std::error_code ec;
  const std::string prefix = "." + fs::path(target_).filename().string() + ".fhdtmp-";
  for (const auto& e : fs::directory_iterator(parent_, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) fs::remove_all(e.path(), ec);
  for (const auto& e : fs::directory_iterator(dir_, ec))
    if (is_temporary_name(e.path().filename().string())) fs::remove_all(e.path(), ec);
}

OutputSet::~OutputSet() {
  std::error_code ec;
  remove_temporary(staging_);  // the unfinished new set, or after the swap the old one
  if (!committed_ && created_ && fs::is_empty(dir_, ec) && !ec) fs::remove(dir_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string OutputSet::file(const std::string& name) {
  if (files_ == 0) {
    std::error_code ec;
    create_temporary(staging_, [&] { fs::create_directory(staging_, ec); });
    if (ec) throw InputError(dir_, "output directory", staging_, "cannot create the staging directory: " + ec.message());
  }
  test_hook(std::to_string(++files_));
  return (fs::path(staging_) / name).string();
}

// Plain files in DIR that this kind of run never writes stay (hard links: no copy, no window).
void OutputSet::carry_over_foreign_files() {
  for (const auto& e : fs::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    if (is_temporary_name(name) || std::count(owned_.begin(), owned_.end(), name)) continue;
    const fs::path to = fs::path(staging_) / name;
    if (fs::exists(to)) continue;
    // No call failed for an entry that is not a plain file: errno was stale.
    if (!e.is_regular_file())
      throw InputError(dir_, "output directory", dir_,
                       "holds '" + name + "', which is not a plain file (made during the run?); it cannot be kept");
    if (::link(e.path().c_str(), to.c_str()) != 0)
      throw InputError(dir_, "output directory", dir_, "cannot keep its file '" + name + "': " + errno_text());
  }
}

void OutputSet::commit() {
  if (files_ == 0) file("");  // an empty set still replaces the old one
  for (const auto& e : fs::directory_iterator(staging_)) sync_path(e.path().string());
  carry_over_foreign_files();
  sync_path(staging_);
  test_hook("swap");
  {
    std::lock_guard<std::mutex> g(registry_mutex());  // an interrupt waits for the swap
    // The normal name: "out/./" as typed is refused by rename (EBUSY, after the whole run).
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0)
      throw InputError(dir_, "output directory", dir_, "cannot swap the new outputs into place: " + errno_text());
    committed_ = true;
    g_swapped = true;
  }
  sync_path(parent_);
  // staging_ now holds the previous set: the destructor removes it, after the
  // caller has reported the new one (deleting 115 MB of a 128^3 run's outputs
  // took 0.03-0.07 s, which a batch worker's row waited for).
}

}  // namespace fhd
