#include "app/batch_server.hpp"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>

#include "app/batch.hpp"
#include "app/batch_protocol.hpp"
#include "app/batch_scan.hpp"
#include "app/batch_warm.hpp"
#include "app/commands.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

using nlohmann::json;

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

// Listens on `path`, readable and writable by this user only. A socket file
// that nothing answers on (a server that was killed) is replaced.
int listen_on(const std::string& path) {
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
  return fd;
}

// Waits up to `seconds` (0: not at all) for fd to have something to read (a
// message, or its end).
bool readable_within(int fd, double seconds) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, int(seconds * 1000)) > 0;
}

std::vector<std::string> strings_of(const json& j, const char* what) {
  if (!j.is_array()) throw std::runtime_error(std::string(what) + " is not a list");
  std::vector<std::string> v;
  for (const json& s : j) v.push_back(s.get<std::string>());
  return v;
}

std::vector<PoolTask> tasks_of(const json& j) {
  if (!j.is_array()) throw std::runtime_error("tasks is not a list");
  std::vector<PoolTask> tasks;
  for (const json& t : j)
    tasks.push_back({t.at("id").get<std::size_t>(), t.at("file").get<std::string>(), t.at("output").get<std::string>(),
                     t.value("run_id", ""), t.value("q_cache", "")});
  return tasks;
}

// The seconds a client has to send its batch once connected, and that a read
// or write of a message on its connection may block: a connection that sends
// half a message, or stops reading, must not hold the server.
constexpr int kRequestWait = 10;

// False (errno set) when the limits could not be set: such a connection is
// not served, since it could hold the server.
bool limit_blocking(int fd) {
  const timeval t{kRequestWait, 0};
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t) == 0 &&
         ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t) == 0;
}

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
    listen_fd_ = listen_on(o_.socket);
    std::string labels;
    for (const Worker& w : workers_) labels += (labels.empty() ? "" : ", ") + w.label;
    spdlog::info("serving batches on {} ({}); SIGINT or SIGTERM ends it", o_.socket, labels);
    StopSignals signals;
    while (!signals.stopped()) {
      if (!readable_within(listen_fd_, 0.2)) continue;
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) continue;
      if (limit_blocking(client))
        serve_client(client);
      else
        spdlog::error("serve: a batch's connection: its time limits could not be set ({}); dropped",
                      std::strerror(errno));
      ::close(client);
    }
    spdlog::info("serve: stopping; the workers quit");
    pool_.reset();
    ::close(listen_fd_);
    ::unlink(o_.socket.c_str());
  }

 private:
  // One batch. A client that breaks the protocol gets a line in the log, and
  // the server goes on with the next.
  void serve_client(int fd) {
    try {
      MessageReader in;
      if (!readable_within(fd, kRequestWait)) throw std::runtime_error("sent nothing");
      std::optional<json> m = receive_message(fd, in);  // nothing when it stalls past kRequestWait
      if (!m || m->value("type", "") != "batch") throw std::runtime_error("did not send a batch");
      const std::vector<PoolTask> tasks = tasks_of(m->at("tasks"));
      run_tasks(fd, in, worker_args_for(strings_of(m->at("job_args"), "job_args")), tasks,
                m->at("timeout").get<double>());
    } catch (const std::exception& e) {
      spdlog::error("serve: a batch's connection: {}", e.what());
    }
  }

  std::vector<std::string> worker_args_for(const std::vector<std::string>& job_args) const {
    std::vector<std::string> a = log_args(global_options().quiet);
    a.insert(a.end(), {"batch-worker", "--fd", "3", "--q-memory", std::to_string(q_memory_)});
    a.insert(a.end(), job_args.begin(), job_args.end());
    return a;
  }

  void run_tasks(int fd, MessageReader& in, const std::vector<std::string>& args, const std::vector<PoolTask>& tasks,
                 double timeout_s) {
    if (!pool_ || pool_->worker_args() != args) {  // other options: other workers
      pool_.reset();
      pool_ = std::make_unique<WorkerPool>(exe_, args, workers_);
    }
    json labels = json::array();
    for (const Worker& w : workers_) labels.push_back(w.label);
    send_message(fd, {{"type", "workers"}, {"labels", labels}});
    // The batch stops this run by saying so, or by going away.
    bool stop = false;
    const auto stopped = [&] {
      if (!stop && readable_within(fd, 0)) {
        try {
          stop = !in.read_from(fd);  // gone
          while (std::optional<json> said = in.next()) stop |= said->value("type", "") == "stop";
        } catch (const std::exception&) {
          stop = true;  // not our protocol
        }
      }
      return stop;
    };
    const auto t0 = std::chrono::steady_clock::now();
    const bool complete = pool_->run(
        tasks, timeout_s,
        [&](std::size_t id, std::size_t w, const ScanOutcome& o) {
          send_message(fd, {{"type", "done"}, {"id", id}, {"worker", w}, {"outcome", outcome_json(o)}});
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
  int listen_fd_ = -1;
};

}  // namespace

void run_batch_server(const ServerOptions& o) {
  Server server(o);
  server.serve();
}

ServerLink::ServerLink(const std::string& path) : path_(path) {
  fd_ = connect_to(path, "batch --server");
  if (fd_ < 0)
    throw InputError("batch --server " + path + ": no fhdrecon server answers there (" + std::strerror(errno) +
                     "; start one with fhdrecon serve --socket " + path + ")");
}

ServerLink::~ServerLink() {
  if (fd_ >= 0) ::close(fd_);
}

bool ServerLink::run(const std::vector<std::string>& job_args, const std::vector<PoolTask>& tasks, double timeout_s,
                     std::vector<Worker>& workers, const WorkerPool::Done& done) {
  json list = json::array();
  for (const PoolTask& t : tasks)
    list.push_back({{"id", t.id}, {"file", t.file}, {"output", t.output}, {"run_id", t.run_id}, {"q_cache", t.q_cache}});
  std::set<std::size_t> pending;
  for (const PoolTask& t : tasks) pending.insert(t.id);
  StopSignals signals;
  bool stop_sent = false, waiting_said = false;
  const auto t0 = std::chrono::steady_clock::now();
  MessageReader in;
  const bool sent = send_message(fd_, {{"type", "batch"}, {"job_args", job_args}, {"timeout", timeout_s}, {"tasks", list}});
  for (bool open = sent; open;) {
    if (signals.stopped() && !stop_sent) {
      send_message(fd_, {{"type", "stop"}});
      stop_sent = true;
    }
    if (!readable_within(fd_, 0.1)) {
      if (workers.empty() && !waiting_said && seconds_since(t0) > 1.0) {
        spdlog::info("batch: waiting for the server at {} (busy with another batch?)", path_);
        waiting_said = true;
      }
      continue;
    }
    open = in.read_from(fd_);
    while (std::optional<json> m = in.next()) {
      const std::string type = m->value("type", "");
      if (type == "workers") {
        for (const std::string& label : strings_of(m->at("labels"), "labels")) workers.push_back({label, {}});
      } else if (type == "done") {
        const std::size_t id = m->at("id").get<std::size_t>(), w = m->at("worker").get<std::size_t>();
        if (!pending.erase(id) || w >= workers.size()) throw std::runtime_error("batch --server: a stray message");
        done(id, w, outcome_from_json(m->at("outcome")));
      } else if (type == "end") {
        if (pending.empty()) return m->at("complete").get<bool>() && !stop_sent;
        open = false;
      }
    }
  }
  // The server went away (or ended the batch early): what it did not do was not run.
  spdlog::error("batch --server {}: the server went away with {} scans left", path_, pending.size());
  if (workers.empty()) workers.push_back({"server", {}});
  for (std::size_t id : pending) {
    ScanOutcome o;
    o.end.interrupted = true;
    done(id, 0, o);
  }
  return false;
}

}  // namespace fhd::app
