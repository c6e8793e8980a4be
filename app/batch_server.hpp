#pragma once
// A resident batch server (docs/batch.md, "A resident server"): `fhdrecon
// serve --socket PATH` starts the warm workers once (one per GPU, or CPU jobs)
// and keeps them, with their devices and the Q they hold in memory, from one
// batch to the next; `fhdrecon batch ... --server PATH` hands its scans to
// them instead of starting workers of its own, so no batch pays their start
// (issue 26: about 0.9 s a batch on the GPU). The batch keeps everything else:
// the file list, skips, the output lock, the rows and the summary. One batch at
// a time; the next one's connection waits its turn.
//
// Messages (app/batch_protocol.hpp's framing) on the server's Unix socket.
// Batch to server: {"type": "batch", "job_args": [the workers' job options],
// "timeout": seconds, "scans": N}; once the server answers {"type": "workers",
// "labels"} (its turn has come), {"type": "tasks", "tasks": [{"id", "file",
// "output", "run_id", "q_cache"}]} messages until N scans are sent (a long
// file list does not fit one message); then {"type": "stop"} when it is
// interrupted. Every path is absolute: the server's working directory is not
// the batch's. Server to batch: {"type": "done", "id", "worker", "outcome"}
// per scan as it ends, then {"type": "end", "complete"}; or {"type":
// "refused", "reason"} for a batch it will not run. A batch interrupted while
// it waits its turn just closes its connection: nothing of it has begun.
#include <string>
#include <vector>

#include "app/batch_pool.hpp"

namespace fhd::app {

struct ServerOptions {
  std::string socket;  // the path it listens on
  std::string gpus;    // --gpus, as batch's
  int jobs = 0;        // --jobs, as batch's
  std::string device = "auto";
  std::string exe;  // the fhdrecon its workers run ("" = this executable)
};

// Serves batches until SIGINT/SIGTERM, then lets its workers quit and removes
// the socket. Refuses a path where a server already answers.
void run_batch_server(const ServerOptions& o);

// A batch's connection to a server.
class ServerLink {
 public:
  // Throws InputError naming the path when no server answers there.
  explicit ServerLink(const std::string& path);
  ~ServerLink();
  ServerLink(const ServerLink&) = delete;
  ServerLink& operator=(const ServerLink&) = delete;

  // Runs `tasks` on the server's workers, started with `job_args`
  // (job_option_args of the batch's job, without its run id and Q cache,
  // which each task carries). `workers` gets the server's workers (their
  // labels) before the first `done`. SIGINT/SIGTERM stop the batch on the server: the scans not
  // done come back interrupted and it returns false, as it does when the
  // server goes away; true when every task ran.
  bool run(const std::vector<std::string>& job_args, const std::vector<PoolTask>& tasks, double timeout_s,
           std::vector<Worker>& workers, const WorkerPool::Done& done);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace fhd::app
