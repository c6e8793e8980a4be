#include "app/batch_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <set>
#include <stdexcept>

#include "core/clock.hpp"
#include "app/batch_protocol.hpp"

using nlohmann::json;

namespace fhd::app {
namespace {

using Clock = std::chrono::steady_clock;

// A worker told to quit that is still there this long after (its GPU teardown
// stuck in a driver, say) is ended like a hung one.
constexpr double kQuitGrace = 30.0;

// One worker slot's process and the scans it holds.
struct Proc {
  pid_t pid = 0;
  int fd = -1;
  MessageReader in;
  std::deque<std::size_t> held;  // task indices, in the order sent (rows come back in it)
  std::set<std::size_t> started;
  Clock::time_point oldest_since, term_sent, quit_sent_at;
  bool alone = false;  // running one suspect scan alone
  bool terminating = false, quit_sent = false;
  std::optional<std::size_t> timed_out;  // the scan whose time limit ended it
};

}  // namespace

class WorkerPool::Impl {
 public:
  Impl(std::string exe, std::vector<std::string> args, std::vector<Worker> workers, bool keep)
      : exe_(std::move(exe)), args_(std::move(args)), workers_(std::move(workers)), procs_(workers_.size()),
        keep_(keep) {}

  bool run(const std::vector<PoolTask>& tasks, double timeout_s, const Done& done, const std::function<bool()>& stop) {
    tasks_ = &tasks;
    timeout_s_ = timeout_s;
    done_ = &done;
    queue_.clear();
    suspects_.clear();
    for (std::size_t i = 0; i < tasks.size(); ++i) queue_.push_back(i);
    stopping_ = false;
    for (std::size_t w = 0; w < procs_.size(); ++w) {
      procs_[w].started.clear();  // another run's task numbers
      if (procs_[w].pid) reap(w);  // one that ended while idle is started again
    }
    StopSignals signals;
    for (;;) {
      if ((signals.stopped() || (stop && stop())) && !stopping_) {
        stopping_ = true;
        for (Proc& p : procs_)
          if (p.pid) terminate(p);
      }
      for (std::size_t w = 0; w < procs_.size() && !stopping_; ++w) {
        if (!procs_[w].pid && work_left()) start(w);
        if (procs_[w].pid) feed(w);
      }
      if (finished()) break;
      wait_for_messages();
      for (std::size_t w = 0; w < procs_.size(); ++w) {
        if (!procs_[w].pid) continue;
        reap(w);
        if (procs_[w].pid) enforce_limits(procs_[w]);
      }
    }
    return !stopping_;
  }

  const std::vector<std::string>& args() const { return args_; }
  // From now on a worker with nothing to do is told to quit.
  void stop_keeping() { keep_ = false; }

 private:
  bool work_left() const { return !queue_.empty() || !suspects_.empty(); }

  // Every worker gone (stopped, or told to quit); or, keeping them, every
  // task's row in.
  bool finished() const {
    const bool running = std::any_of(procs_.begin(), procs_.end(), [](const Proc& p) { return p.pid != 0; });
    if (stopping_ || !keep_) return !running && (stopping_ || !work_left());
    const bool busy = std::any_of(procs_.begin(), procs_.end(), [](const Proc& p) { return !p.held.empty(); });
    return !work_left() && !busy;
  }

  void start(std::size_t w) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw std::runtime_error(std::string("batch: socketpair failed: ") + std::strerror(errno));
    pid_t pid = 0;
    try {
      pid = spawn_process(exe_, args_, workers_[w], sv[1]);
    } catch (...) {
      ::close(sv[0]), ::close(sv[1]);
      throw;
    }
    ::close(sv[1]);
    ::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    procs_[w] = Proc{};
    procs_[w].pid = pid;
    procs_[w].fd = sv[0];
  }

  void send(Proc& p, std::size_t t) {
    if (p.held.empty()) p.oldest_since = Clock::now();
    p.held.push_back(t);
    const PoolTask& task = (*tasks_)[t];
    json m = {{"type", "scan"}, {"id", t}, {"file", task.file}, {"output", task.output}};
    if (!task.run_id.empty()) m["run_id"] = task.run_id;
    if (!task.q_cache.empty()) m["q_cache"] = task.q_cache;
    // A worker that is gone is found by reap; its scans go with it.
    send_message(p.fd, m);
  }

  // Keeps the worker busy: up to kWorkerDepth scans; a suspect only alone, on
  // a worker with nothing else, and while suspects wait no worker takes more,
  // so one soon is free. Quit once nothing is left for it.
  void feed(std::size_t w) {
    Proc& p = procs_[w];
    if (p.terminating || p.quit_sent || p.alone) return;
    if (!suspects_.empty()) {
      if (p.held.empty()) {
        send(p, suspects_.front());
        suspects_.pop_front();
        p.alone = true;
      }
      return;
    }
    while (p.held.size() < kWorkerDepth && !queue_.empty()) {
      send(p, queue_.front());
      queue_.pop_front();
    }
    if (p.held.empty() && !work_left() && !keep_) {
      send_message(p.fd, {{"type", "quit"}});
      p.quit_sent = true;
      p.quit_sent_at = Clock::now();
    }
  }

  void wait_for_messages() {
    std::vector<pollfd> fds;
    std::vector<std::size_t> slot;
    for (std::size_t w = 0; w < procs_.size(); ++w)
      if (procs_[w].pid) fds.push_back({procs_[w].fd, POLLIN, 0}), slot.push_back(w);
    if (::poll(fds.data(), fds.size(), 10) <= 0) return;
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        procs_[slot[i]].in.read_from(fds[i].fd);
        handle_messages(slot[i]);
      }
  }

  // Rows and "started" notes from worker w; a worker that breaks the protocol
  // is ended like a crashed one.
  void handle_messages(std::size_t w) {
    Proc& p = procs_[w];
    for (;;) {
      std::optional<std::pair<std::size_t, ScanOutcome>> row;
      try {
        std::optional<json> m = p.in.next();
        if (!m) return;
        row = handle(p, *m);
      } catch (const std::exception&) {
        ::kill(-p.pid, SIGKILL);
        return;
      }
      if (row) (*done_)((*tasks_)[row->first].id, w, row->second);
    }
  }

  std::optional<std::pair<std::size_t, ScanOutcome>> handle(Proc& p, const json& m) {
    const std::string type = m.value("type", "");
    const std::size_t t = m.at("id").get<std::size_t>();
    const auto at = std::find(p.held.begin(), p.held.end(), t);
    if (at == p.held.end()) throw std::runtime_error("a message about a scan it does not hold");
    if (type == "started") {
      p.started.insert(t);
      return std::nullopt;
    }
    if (type != "row") throw std::runtime_error("unknown message type");
    ScanOutcome o;
    o.row = row_from_json(m.at("row"));
    if (at == p.held.begin()) p.oldest_since = Clock::now();
    p.held.erase(at);
    p.alone = false;
    return std::make_pair(t, o);
  }

  void reap(std::size_t w) {
    Proc& p = procs_[w];
    int st = 0;
    if (::waitpid(p.pid, &st, WNOHANG) != p.pid) return;
    ::kill(-p.pid, SIGKILL);  // what it left in its group (a reader child)
    while (p.in.read_from(p.fd)) {  // rows it sent before it ended
    }
    handle_messages(w);
    ::close(p.fd);
    lost(w, ended_by(st));
    procs_[w] = Proc{};
  }

  // The scans a worker held when it ended.
  void lost(std::size_t w, ChildEnd e) {
    Proc& p = procs_[w];
    auto report = [&](std::size_t t, const ChildEnd& end) {
      ScanOutcome o;
      o.end = end;
      o.started = p.started.count(t) > 0;
      (*done_)((*tasks_)[t].id, w, o);
    };
    if (p.held.empty()) return;
    if (stopping_) {
      e.interrupted = true;
      for (std::size_t t : p.held) report(t, e);
    } else if (p.timed_out) {  // (its row may have come meanwhile)
      e.timed_out = true;
      for (auto t = p.held.rbegin(); t != p.held.rend(); ++t)  // the others again, first
        if (*t != *p.timed_out) queue_.push_front(*t);
      if (std::find(p.held.begin(), p.held.end(), *p.timed_out) != p.held.end()) report(*p.timed_out, e);
    } else if (p.held.size() == 1) {
      report(p.held.front(), e);
    } else {  // which one? each alone again tells
      suspects_.insert(suspects_.end(), p.held.begin(), p.held.end());
    }
  }

  void terminate(Proc& p) {
    if (p.terminating) return;
    p.terminating = true;
    p.term_sent = Clock::now();
    ::kill(-p.pid, SIGTERM);
  }

  void enforce_limits(Proc& p) {
    if (p.terminating) {
      if (seconds_since(p.term_sent) > kKillGrace) ::kill(-p.pid, SIGKILL);
      return;
    }
    if (timeout_s_ > 0 && !p.held.empty() && seconds_since(p.oldest_since) > timeout_s_) {
      p.timed_out = p.held.front();
      terminate(p);
    } else if (p.quit_sent && seconds_since(p.quit_sent_at) > kQuitGrace) {
      terminate(p);
    }
  }

  const std::string exe_;
  const std::vector<std::string> args_;
  const std::vector<Worker> workers_;
  std::vector<Proc> procs_;
  // This run's:
  const std::vector<PoolTask>* tasks_ = nullptr;
  double timeout_s_ = 0;
  const Done* done_ = nullptr;
  std::deque<std::size_t> queue_, suspects_;
  bool stopping_ = false;
  bool keep_;  // workers stay, idle, once a run's tasks are done
};

WorkerPool::WorkerPool(std::string exe, std::vector<std::string> worker_args, std::vector<Worker> workers, bool keep)
    : impl_(std::make_unique<Impl>(std::move(exe), std::move(worker_args), std::move(workers), keep)) {}

WorkerPool::~WorkerPool() {
  try {
    close();
  } catch (...) {
  }
}

bool WorkerPool::run(const std::vector<PoolTask>& tasks, double timeout_s, const Done& done,
                     const std::function<bool()>& stop) {
  return impl_->run(tasks, timeout_s, done, stop);
}

void WorkerPool::close() {
  const std::vector<PoolTask> none;
  const Done ignore = [](std::size_t, std::size_t, const ScanOutcome&) {};
  impl_->stop_keeping();
  impl_->run(none, 0, ignore, {});
}

const std::vector<std::string>& WorkerPool::worker_args() const { return impl_->args(); }

bool run_warm_workers(const std::string& exe, const std::vector<std::string>& worker_args,
                      const std::vector<PoolTask>& tasks, const std::vector<Worker>& workers, double timeout_s,
                      const std::function<void(std::size_t, std::size_t, const ScanOutcome&)>& done) {
  WorkerPool pool(exe, worker_args, workers, /*keep=*/false);
  return pool.run(tasks, timeout_s, done);
}

}  // namespace fhd::app
