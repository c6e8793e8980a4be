#include "app/batch_server.hpp"

#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "app/batch.hpp"
#include "app/batch_protocol.hpp"
#include "app/batch_plan.hpp"
#include "app/batch_scan.hpp"
#include "app/batch_workers.hpp"
#include "app/batch_warm.hpp"
#include "app/commands.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace fhd::app {
namespace {

json outcome_json(const ScanOutcome& o) {
  return {{"row", o.row ? row_json(*o.row) : json(nullptr)},
          {"end",
           {{"exit_code", o.end.exit_code},
            {"signal", o.end.signal},
            {"timed_out", o.end.timed_out},
            {"interrupted", o.end.interrupted},
            {"seconds", o.end.seconds}}},
          {"started", o.started}};
}

ScanOutcome outcome_from_json(const json& j) {
  ScanOutcome o;
  if (!j.at("row").is_null()) o.row = row_from_json(j.at("row"));
  const json& e = j.at("end");
  o.end.exit_code = e.at("exit_code").get<int>();
  o.end.signal = e.at("signal").get<int>();
  o.end.timed_out = e.at("timed_out").get<bool>();
  o.end.interrupted = e.at("interrupted").get<bool>();
  o.end.seconds = e.at("seconds").get<double>();
  o.started = j.at("started").get<bool>();
  return o;
}

sockaddr_un socket_address(const std::string& path, const char* what) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof a.sun_path)
    throw InputError(std::string(what) + " " + path + ": a socket path must have 1 to " +
                     std::to_string(sizeof a.sun_path - 1) + " characters");
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

// A connected socket to `path`, or -1 with errno set.
int connect_to(const std::string& path, const char* what) {
  const sockaddr_un a = socket_address(path, what);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

// Holds PATH.lock for the server's life: two servers started together both
// found no answer (one bound, not yet listening), the second replaced the
// first's socket, and the first served an unlinked path for ever. The lock
// file stays (removing it would let a third server lock another inode).
int lock_beside(const std::string& path) {
  const std::string lock = path + ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw InputError("serve --socket " + path + ": cannot open its lock file " + lock + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw InputError("serve --socket " + path + ": a server is already listening there");
  }
  return fd;
}

// Listens on `path`, readable and writable by this user only. A socket file
// that nothing answers on (a server that was killed) is replaced. `bound`:
// the socket file's identity, so the server removes only its own at exit.
int listen_on(const std::string& path, struct stat& bound_file) {
  const sockaddr_un a = socket_address(path, "serve --socket");
  const int probe = connect_to(path, "serve --socket");
  if (probe >= 0) {
    ::close(probe);
    throw InputError("serve --socket " + path + ": a server is already listening there");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw InputError("serve --socket " + path + ": exists and is not a socket");
    ::unlink(path.c_str());
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("serve: socket failed: ") + std::strerror(errno));
  const mode_t old = ::umask(0077);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  const int bind_errno = errno;
  ::umask(old);
  if (bound != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    throw InputError("serve --socket " + path + ": cannot listen there: " + std::strerror(bound ? bind_errno : errno));
  }
  ::lstat(path.c_str(), &bound_file);
  return fd;
}

// Waits up to `seconds` (0: not at all) for fd to have something to read (a
// message, or its end). False too when a signal cut the wait short.
bool readable_within(int fd, double seconds) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, int(seconds * 1000)) > 0;
}

bool is_absolute(const std::string& path) { return std::filesystem::path(path).is_absolute(); }

// A batch the server will not run, for a reason the batch is told.
struct Refusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A batch that went away before its scans were all sent (its Ctrl-C while it
// waited its turn): nothing ran, nothing to tell it.
struct Left : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `key` of `m` as a T; a Refusal naming it, never the JSON library's text.
template <class T>
T field(const json& m, const char* key, const std::string& what) {
  const auto it = m.find(key);
  if (it == m.end()) throw Refusal(what + " has no \"" + key + "\"");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw Refusal(what + ": \"" + key + "\" has the wrong type");
  }
}

// The server's working directory is not the batch's: a path must be absolute.
std::string path_field(const json& m, const char* key, const std::string& what, bool may_be_empty) {
  std::string p = field<std::string>(m, key, what);
  if (p.empty() ? !may_be_empty : !is_absolute(p))
    throw Refusal(what + ": \"" + key + "\" " + (p.empty() ? "is empty" : "is not an absolute path: " + p));
  return p;
}

std::vector<std::string> job_args_of(const json& m) {
  const json& a = field<json>(m, "job_args", "the batch");
  if (!a.is_array()) throw Refusal("the batch: \"job_args\" is not a list");
  std::vector<std::string> v;
  for (const json& s : a) {
    if (!s.is_string()) throw Refusal("the batch: \"job_args\" holds something that is not text");
    v.push_back(s.get<std::string>());
  }
  for (std::size_t i = 0; i + 1 < v.size(); ++i)  // the job options that name a directory
    if ((v[i] == "--cache-dir" || v[i] == "--q-cache") && !is_absolute(v[i + 1]))
      throw Refusal("the batch: " + v[i] + " is not an absolute path: " + v[i + 1]);
  return v;
}

PoolTask task_of(const json& t) {
  if (!t.is_object()) throw Refusal("a scan of the batch is not an object");
  const json& id = field<json>(t, "id", "a scan");
  if (!id.is_number_unsigned()) throw Refusal("a scan: \"id\" is not a whole number");
  const std::string what = "scan " + id.dump();
  return {id.get<std::size_t>(), path_field(t, "file", what, false), path_field(t, "output", what, false),
          field<std::string>(t, "run_id", what), path_field(t, "q_cache", what, true)};
}

// The seconds a client has for each message of its batch (from when the
// server turns to it, then from each message to the next), and that a write
// of the server's may block: a connection that sends half a message, drips
// bytes, or stops reading must not hold the server.
constexpr int kRequestWait = 10;
// ... and for its whole batch (its scans come in several messages).
constexpr int kRequestTotal = 60;

// False (errno set) when the limits could not be set: such a connection is
// not served, since it could hold the server.
bool limit_blocking(int fd) {
  const timeval t{kRequestWait, 0};
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t) == 0 &&
         ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t) == 0;
}

// A batch's connection as the server reads its request: each message within
// kRequestWait, all of them within kRequestTotal, and none once the server is
// told to stop.
class Request {
 public:
  Request(int fd, const StopSignals& signals)
      : fd_(fd), signals_(signals), end_(Clock::now() + std::chrono::seconds(kRequestTotal)) {}

  json next() {
    const Clock::time_point deadline = std::min(end_, Clock::now() + std::chrono::seconds(kRequestWait));
    for (;;) {
      if (std::optional<json> m = in_.next()) return *m;
      if (signals_.stopped()) throw std::runtime_error("dropped: the server was told to stop");
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      if (left <= 0) throw std::runtime_error("did not send a whole message within " + over_what());
      if (readable_within(fd_, std::min(left, 0.2)) && !in_.read_from(fd_))
        throw Left("it went away before its scans were all sent");
    }
  }
  MessageReader& reader() { return in_; }

 private:
  std::string over_what() const {
    return Clock::now() >= end_ ? std::to_string(kRequestTotal) + " s in all" : std::to_string(kRequestWait) + " s";
  }

  int fd_;
  const StopSignals& signals_;
  Clock::time_point end_;
  MessageReader in_;
};

// What the server reads of one batch: its options, then its scans.
struct Batch {
  std::vector<std::string> job_args;
  double timeout_s = 0;
  std::vector<PoolTask> tasks;
};

class Server {
 public:
  explicit Server(const ServerOptions& o) : o_(o) {
    BatchOptions b;
    b.gpus = o.gpus;
    b.jobs = o.jobs;
    b.device = o.device;
    workers_ = batch_workers(b);
    check_batch_device(b, "serve");
    exe_ = o.exe.empty() ? self_exe() : o.exe;
    q_memory_ = q_memory_budget(workers_.size());
  }

  void serve() {
    lock_fd_ = lock_beside(o_.socket);
    listen_fd_ = listen_on(o_.socket, bound_);
    std::string labels;
    for (const Worker& w : workers_) labels += (labels.empty() ? "" : ", ") + w.label;
    spdlog::info("serving batches on {} ({}); SIGINT or SIGTERM ends it", o_.socket, labels);
    StopSignals signals;
    while (!signals.stopped()) {
      if (!readable_within(listen_fd_, 0.2)) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      if (limit_blocking(client))
        serve_client(client, signals);
      else
        spdlog::error("serve: a batch's connection: its time limits could not be set ({}); dropped",
                      std::strerror(errno));
      ::close(client);
    }
    spdlog::info("serve: stopping; the workers quit");
    pool_.reset();
    ::close(listen_fd_);
    // Only our own socket: the path may name another's by now.
    struct stat now {};
    if (::lstat(o_.socket.c_str(), &now) == 0 && now.st_ino == bound_.st_ino && now.st_dev == bound_.st_dev)
      ::unlink(o_.socket.c_str());
    ::close(lock_fd_);
  }

 private:
  // One batch. A client that breaks the protocol gets a line in the log (and,
  // when it is still there to read it, the reason), and the server goes on.
  void serve_client(int fd, const StopSignals& signals) {
    Request request(fd, signals);
    try {
      const Batch batch = receive_batch(fd, request);
      // pool_->run's own StopSignals forgets a signal that came before it.
      if (signals.stopped()) throw std::runtime_error("dropped: the server was told to stop");
      run_tasks(fd, request.reader(), worker_args_for(batch.job_args), batch.tasks, batch.timeout_s);
    } catch (const Refusal& e) {
      spdlog::error("serve: refused a batch: {}", e.what());
      send_message(fd, {{"type", "refused"}, {"reason", e.what()}});
    } catch (const Left& e) {
      spdlog::info("serve: a batch's connection: {}", e.what());
    } catch (const std::exception& e) {
      spdlog::error("serve: a batch's connection: {}", e.what());
    }
  }

  // The `batch` message, then (once the batch is told its workers: its turn
  // has come) `tasks` messages until it has sent every scan it announced.
  Batch receive_batch(int fd, Request& request) {
    const json m = request.next();
    if (m.value("type", json()) != "batch") throw std::runtime_error("did not send a batch");
    check_revision(field<std::string>(m, "revision", "the batch"));
    Batch b{job_args_of(m), field<double>(m, "timeout", "the batch"), {}};
    const json& scans = field<json>(m, "scans", "the batch");
    if (!scans.is_number_unsigned() || scans.get<std::size_t>() > kMaxFileListEntries)
      throw Refusal("the batch: \"scans\" is not a count of 0 to " + std::to_string(kMaxFileListEntries));
    json labels = json::array();
    for (const Worker& w : workers_) labels.push_back(w.label);
    send_message(fd, {{"type", "workers"}, {"labels", labels}});
    while (b.tasks.size() < scans.get<std::size_t>()) {
      const json more = request.next();
      if (more.value("type", json()) != "tasks") throw Refusal("sent something else where its scans were due");
      const json& list = field<json>(more, "tasks", "a tasks message");
      if (!list.is_array() || b.tasks.size() + list.size() > scans.get<std::size_t>())
        throw Refusal("a tasks message is not a list, or holds more scans than the batch announced");
      for (const json& t : list) b.tasks.push_back(task_of(t));
    }
    return b;
  }

  // A server started before an upgrade would run the old code under the new
  // build's fingerprint: a batch of another build is refused.
  static void check_revision(const std::string& theirs) {
    if (theirs != build_revision())
      throw Refusal("the batch is of fhdrecon revision " + theirs + ", this server of revision " + build_revision() +
                    ": restart fhdrecon serve from the batch's build");
  }

  std::vector<std::string> worker_args_for(const std::vector<std::string>& job_args) const {
    std::vector<std::string> a = log_args(global_options().quiet);
    a.insert(a.end(), {"batch-worker", "--fd", "3", "--q-memory", std::to_string(q_memory_)});
    const std::vector<std::string> job = on_our_device(job_args);
    a.insert(a.end(), job.begin(), job.end());
    return a;
  }

  // The server's --device rules its workers: a batch's auto (its default)
  // becomes it, and the other device is refused. A `serve --device cpu` ran
  // a batch's workers with --device auto, so on a GPU host on the GPUs.
  std::vector<std::string> on_our_device(std::vector<std::string> job_args) const {
    if (o_.device == "auto") return job_args;
    for (std::size_t i = 0; i + 1 < job_args.size(); ++i) {
      if (job_args[i] != "--device") continue;
      std::string& d = job_args[i + 1];
      if (d != "auto" && d != o_.device)
        throw Refusal("the batch asks for --device " + d + "; this server serves --device " + o_.device);
      d = o_.device;
    }
    return job_args;
  }

  void run_tasks(int fd, MessageReader& in, const std::vector<std::string>& args, const std::vector<PoolTask>& tasks,
                 double timeout_s) {
    if (!pool_ || pool_->worker_args() != args) {  // other options: other workers
      pool_.reset();
      pool_ = std::make_unique<WorkerPool>(exe_, args, workers_);
    }
    // The batch stops this run by saying so (perhaps in bytes read with its
    // last scans), by going away, or by not taking what it is sent.
    bool stop = false;
    const auto stopped = [&] {
      try {
        if (!stop && readable_within(fd, 0)) stop = !in.read_from(fd);  // gone
        while (std::optional<json> said = in.next()) stop |= said->value("type", "") == "stop";
      } catch (const std::exception&) {
        stop = true;  // not our protocol
      }
      return stop;
    };
    const auto t0 = std::chrono::steady_clock::now();
    const bool complete = pool_->run(
        tasks, timeout_s,
        [&](std::size_t id, std::size_t w, const ScanOutcome& o) {
          if (!send_message(fd, {{"type", "done"}, {"id", id}, {"worker", w}, {"outcome", outcome_json(o)}}))
            stop = true;
        },
        stopped);
    send_message(fd, {{"type", "end"}, {"complete", complete}});
    spdlog::info("serve: a batch of {} scans {} in {:.2f} s", tasks.size(), complete ? "done" : "stopped",
                 seconds_since(t0));
  }

  ServerOptions o_;
  std::vector<Worker> workers_;
  std::string exe_;
  std::size_t q_memory_ = 0;
  std::unique_ptr<WorkerPool> pool_;
  int listen_fd_ = -1, lock_fd_ = -1;
  struct stat bound_ {};
};

// The batch's path as the server gets it: its working directory is not ours.
std::string absolute_path(const std::string& p) { return p.empty() ? p : std::filesystem::absolute(p).string(); }

// Sends the tasks in `tasks` messages of at most about a quarter of
// kMaxMessageBytes each. False when the server is gone.
bool send_tasks(int fd, const std::vector<PoolTask>& tasks) {
  json chunk = json::array();
  std::size_t bytes = 0;
  for (const PoolTask& t : tasks) {
    json j = {{"id", t.id},
              {"file", absolute_path(t.file)},
              {"output", absolute_path(t.output)},
              {"run_id", t.run_id},
              {"q_cache", absolute_path(t.q_cache)}};
    bytes += j.dump(-1, ' ', false, json::error_handler_t::replace).size();
    chunk.push_back(std::move(j));
    if (bytes > kMaxMessageBytes / 4) {
      if (!send_message(fd, {{"type", "tasks"}, {"tasks", chunk}})) return false;
      chunk = json::array();
      bytes = 0;
    }
  }
  return chunk.empty() || send_message(fd, {{"type", "tasks"}, {"tasks", chunk}});
}

// The worker's row with the scan named as the batch names it (the server
// was sent absolute paths).
ScanOutcome as_named(ScanOutcome o, const PoolTask& t) {
  if (!o.row) return o;
  const std::string sent = absolute_path(t.file) + ": ";
  if (o.row->reason.rfind(sent, 0) == 0) o.row->reason = t.file + ": " + o.row->reason.substr(sent.size());
  o.row->file = t.file;
  o.row->output = t.output;
  return o;
}

// The scans the server did not do: not run (or not finished), interrupted.
void interrupt_pending(const std::map<std::size_t, const PoolTask*>& pending, std::vector<Worker>& workers,
                       const WorkerPool::Done& done) {
  if (workers.empty()) workers.push_back({"server", {}});
  for (const auto& [id, task] : pending) {
    ScanOutcome o;
    o.end.interrupted = true;
    done(id, 0, o);
  }
}

}  // namespace

void run_batch_server(const ServerOptions& o) {
  // A closed stderr (`serve ... 2>&1 | head -1`) must not kill the server or
  // its workers (who inherit this): a log line then fails with EPIPE, unseen.
  ::signal(SIGPIPE, SIG_IGN);
  Server server(o);
  server.serve();
}

ServerLink::ServerLink(const std::string& path) : path_(path) {
  fd_ = connect_to(path, "batch --server");
  if (fd_ < 0) {
    const int e = errno;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
      throw InputError("batch --server " + path + ": is not a socket (give the path of fhdrecon serve --socket)");
    throw InputError("batch --server " + path + ": no fhdrecon server answers there (" + std::strerror(e) +
                     "; start one with fhdrecon serve --socket " + path + ")");
  }
  // The server decides every row: on a shared /tmp another user could have
  // made the socket. Only a server of this user is believed.
  ucred peer{};
  socklen_t len = sizeof peer;
  const bool known = ::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0;
  if (!known || peer.uid != ::getuid()) {
    const std::string who = known ? std::to_string(peer.uid) : "unknown";
    ::close(fd_);
    fd_ = -1;
    throw InputError("batch --server " + path + ": the server there runs as uid " + who + ", not as you (uid " +
                     std::to_string(::getuid()) + "); refused");
  }
}

ServerLink::~ServerLink() {
  if (fd_ >= 0) ::close(fd_);
}

bool ServerLink::run(const std::vector<std::string>& job_args, const std::vector<PoolTask>& tasks, double timeout_s,
                     std::vector<Worker>& workers, const WorkerPool::Done& done) {
  std::map<std::size_t, const PoolTask*> pending;
  for (const PoolTask& t : tasks) pending[t.id] = &t;
  StopSignals signals;
  bool served = false, stop_sent = false, waiting_said = false;
  const auto t0 = std::chrono::steady_clock::now();
  MessageReader in;
  bool open =
      send_message(fd_, {{"type", "batch"},
                         {"revision", build_revision()},
                         {"job_args", job_args},
                         {"timeout", timeout_s},
                         {"scans", tasks.size()}});
  while (open) {
    if (readable_within(fd_, 0.1)) {
      open = in.read_from(fd_);
      while (std::optional<json> m = in.next()) {
        const std::string type = m->value("type", "");
        if (type == "workers") {  // our turn: the scans follow
          for (const std::string& label : m->at("labels").get<std::vector<std::string>>())
            workers.push_back({label, {}});
          served = true;
          open = send_tasks(fd_, tasks) && open;
        } else if (type == "refused") {
          throw std::runtime_error("batch --server " + path_ + ": the server refused the batch: " +
                                   m->value("reason", std::string("no reason given")));
        } else if (type == "done") {
          const std::size_t id = m->at("id").get<std::size_t>(), w = m->at("worker").get<std::size_t>();
          const auto it = pending.find(id);
          if (it == pending.end() || w >= workers.size()) throw std::runtime_error("batch --server: a stray message");
          const PoolTask& task = *it->second;
          pending.erase(it);
          done(id, w, as_named(outcome_from_json(m->at("outcome")), task));
        } else if (type == "end") {
          if (pending.empty()) return m->at("complete").get<bool>() && !stop_sent;
          open = false;
        }
      }
    } else if (workers.empty() && !waiting_said && seconds_since(t0) > 1.0) {
      spdlog::info("batch: waiting for the server at {} (busy with another batch?)", path_);
      waiting_said = true;
    }
    if (signals.stopped() && !served) {  // still waiting its turn: nothing began, so just leave
      interrupt_pending(pending, workers, done);
      return false;
    }
    if (signals.stopped() && !stop_sent) {
      send_message(fd_, {{"type", "stop"}});
      stop_sent = true;
    }
  }
  // The server went away (or ended the batch early): what it did not do was not run.
  spdlog::error("batch --server {}: the server went away with {} scans left", path_, pending.size());
  interrupt_pending(pending, workers, done);
  return false;
}

}  // namespace fhd::app
