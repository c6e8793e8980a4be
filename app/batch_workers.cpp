#include "app/batch_workers.hpp"

#include <sched.h>
#include <spdlog/fmt/fmt.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "recon/device/cpu_threads.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace fhd::app {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) parts.push_back(cur), cur.clear();
    else cur += c;
  }
  parts.push_back(cur);
  return parts;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The GPUs this process may use, as CUDA_VISIBLE_DEVICES values.
std::vector<std::string> visible_gpus() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::vector<std::string> ids;
    for (const std::string& id : split(v, ','))
      if (!id.empty()) ids.push_back(id);
    return ids;
  }
  std::vector<std::string> ids;
  std::error_code ec;
  for (int i = 0; fs::exists("/dev/nvidia" + std::to_string(i), ec); ++i) ids.push_back(std::to_string(i));
  return ids;
}

// The affinity mask, lowered to a cgroup CPU quota (recon/device/cpu_threads.hpp).
int usable_cores() { return usable_cpus(); }

// OMP_NUM_THREADS for `workers` children sharing this process's cores, unless the user chose.
void share_cores(std::vector<Worker>& ws) {
  if (ws.size() < 2 || std::getenv("OMP_NUM_THREADS")) return;
  std::string n = std::to_string(std::max<int>(1, usable_cores() / static_cast<int>(ws.size())));
  for (Worker& w : ws) w.env.emplace_back("OMP_NUM_THREADS", n);
}

}  // namespace

std::vector<std::size_t> pick_gpus(const std::string& spec) {
  const std::vector<std::string> vis = visible_gpus();
  auto bad = [&](const std::string& why) {
    return InputError("--gpus " + spec + ": " + why + " (" + std::to_string(vis.size()) + " GPUs visible" +
                      (std::getenv("CUDA_VISIBLE_DEVICES") ? " through CUDA_VISIBLE_DEVICES)" : ")"));
  };
  std::vector<std::size_t> pick;
  if (spec == "all") {
    for (std::size_t i = 0; i < vis.size(); ++i) pick.push_back(i);
  } else if (all_digits(spec)) {  // a count
    std::size_t n = std::stoul(spec);
    if (n == 0 || n > vis.size()) throw bad("asks for " + spec + " GPUs");
    for (std::size_t i = 0; i < n; ++i) pick.push_back(i);
  } else {  // a list of device numbers
    for (const std::string& id : split(spec, ',')) {
      if (!all_digits(id)) throw bad("expected all, a count or a list like 0,2");
      if (std::stoul(id) >= vis.size()) throw bad("no GPU " + id);
      pick.push_back(std::stoul(id));
    }
  }
  if (pick.empty()) throw bad("no GPU to use");
  return pick;
}

std::size_t visible_gpu_count() { return visible_gpus().size(); }

std::vector<Worker> gpu_workers(const std::string& spec) {
  const std::vector<std::string> vis = visible_gpus();
  const std::vector<std::size_t> pick = pick_gpus(spec);
  std::vector<Worker> ws;
  for (std::size_t i : pick) ws.push_back({"gpu " + vis[i], {{"CUDA_VISIBLE_DEVICES", vis[i]}}});
  share_cores(ws);
  return ws;
}

std::vector<Worker> cpu_workers(int jobs) {
  if (jobs < 1) throw InputError("--jobs " + std::to_string(jobs) + ": at least 1");
  std::vector<Worker> ws;
  for (int i = 0; i < jobs; ++i) ws.push_back({"cpu " + std::to_string(i), {}});
  share_cores(ws);
  return ws;
}

std::string describe_end(const ChildEnd& e, double timeout_s) {
  if (e.timed_out) return fmt::format("timed out after {:g} s (killed)", timeout_s);
  if (e.signal) return fmt::format("crashed: signal {} ({})", e.signal, strsignal(e.signal));
  return fmt::format("exited with status {} without a result", e.exit_code);
}

std::string self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("batch: cannot find this executable (/proc/self/exe): " + ec.message());
  return p.string();
}

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }
struct sigaction g_old_int {}, g_old_term {}, g_old_hup {};
int g_depth = 0;  // StopSignals alive (one thread makes them: the batch's or the server's)

// environ with `extra` set (replacing what it names), as NAME=VALUE strings.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : extra) replaced |= kv.rfind(k + "=", 0) == 0;
    if (!replaced) env.push_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (std::string& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

using Clock = std::chrono::steady_clock;

struct Running {
  pid_t pid = 0;
  std::size_t task = 0;
  Clock::time_point start, term_sent;
  bool terminating = false;
  bool timed_out = false;
};


// Sends SIGTERM to a child that ran too long (or when we were told to stop),
// then SIGKILL when it is still there kKillGrace seconds later.
void enforce_limits(Running& r, double timeout_s, bool stop) {
  if (!r.terminating && ((timeout_s > 0 && seconds_since(r.start) > timeout_s) || stop)) {
    r.timed_out = !stop;
    r.terminating = true;
    r.term_sent = Clock::now();
    kill(-r.pid, SIGTERM);
  } else if (r.terminating && seconds_since(r.term_sent) > kKillGrace) {
    kill(-r.pid, SIGKILL);
  }
}

}  // namespace

// Nested (a server's, then its pool's for each batch): only the outermost
// clears the flag and swaps the handlers. An inner one cleared a signal that
// came before it (the server's SIGTERM just before a batch's pool began was
// lost), and saved the outer's handler as "previous", so the process's own
// never came back.
StopSignals::StopSignals() {
  if (g_depth++ > 0) return;
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  // A closed terminal or ssh session: the generic cleanup _Exit-ed, leaving the
  // previous run's summary in DIR, disagreeing with the outputs.
  sigaction(SIGHUP, &sa, &g_old_hup);
}

StopSignals::~StopSignals() {
  if (--g_depth > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGHUP, &g_old_hup, nullptr);
}

bool StopSignals::stopped() const { return g_stop != 0; }

int spawn_process(const std::string& exe, const std::vector<std::string>& args, const Worker& w, int fd) {
  std::vector<std::string> argv_s = {exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = child_environment(w.env);
  std::vector<char*> argv = c_strings(argv_s), envp = c_strings(env_s);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("batch: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (fd >= 0 && (fd == 3 ? fcntl(3, F_SETFD, 0) : dup2(fd, 3)) < 0) _exit(127);  // dup2 clears close-on-exec
    execve(exe.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

ChildEnd ended_by(int st) {
  ChildEnd e;
  if (WIFEXITED(st)) e.exit_code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) e.signal = WTERMSIG(st);
  return e;
}

bool run_children(const std::string& exe, const std::vector<ChildTask>& tasks, const std::vector<Worker>& workers,
                  double timeout_s, const std::function<void(std::size_t, std::size_t, const ChildEnd&)>& done) {
  StopSignals signals;
  std::vector<Running> slots(workers.size());
  std::size_t next = 0, running = 0;
  for (;;) {
    for (std::size_t w = 0; w < slots.size() && !signals.stopped(); ++w)
      if (!slots[w].pid && next < tasks.size()) {
        slots[w] = Running{};
        slots[w].pid = spawn_process(exe, tasks[next].args, workers[w]);
        slots[w].task = next;
        slots[w].start = Clock::now();
        ++next, ++running;
      }
    if (running == 0 && (next == tasks.size() || signals.stopped())) break;
    for (std::size_t w = 0; w < slots.size(); ++w) {
      Running& r = slots[w];
      if (!r.pid) continue;
      int st = 0;
      if (waitpid(r.pid, &st, WNOHANG) == r.pid) {
        kill(-r.pid, SIGKILL);  // anything the child left running in its group
        ChildEnd e = ended_by(st);
        e.seconds = seconds_since(r.start);
        e.timed_out = r.timed_out;
        e.interrupted = r.terminating && !r.timed_out;
        r.pid = 0;
        --running;
        done(tasks[r.task].id, w, e);
        continue;
      }
      enforce_limits(r, timeout_s, signals.stopped());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !signals.stopped();
}

}  // namespace fhd::app
