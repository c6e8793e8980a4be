#include "app/batch_worker.hpp"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "app/batch_protocol.hpp"
#include "core/clock.hpp"
#include "io/atomic_file.hpp"
#include "io/reader_child.hpp"

using nlohmann::json;

namespace fhd::app {
namespace {

// A closable FIFO between two stages; push waits while `capacity` items do.
template <class T>
class Channel {
 public:
  explicit Channel(std::size_t capacity) : capacity_(capacity) {}
  void push(T v) {
    std::unique_lock<std::mutex> l(mutex_);
    not_full_.wait(l, [&] { return items_.size() < capacity_ || closed_; });
    items_.push_back(std::move(v));
    not_empty_.notify_one();
  }
  // The next item; nothing once closed and empty.
  std::optional<T> pop() {
    std::unique_lock<std::mutex> l(mutex_);
    not_empty_.wait(l, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    std::optional<T> v(std::move(items_.front()));
    items_.pop_front();
    not_full_.notify_one();
    return v;
  }
  void close() {
    std::lock_guard<std::mutex> l(mutex_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;
  std::size_t capacity_;
  bool closed_ = false;
};

// One scan on its way through the stages.
struct Item {
  std::size_t id = 0;
  ScanJob job;
  std::optional<ReadScan> scan;
  std::optional<ScanResult> result;
  std::string error;  // a stage failed: the later ones pass it on as the row's reason
};

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// Runs `step` on the item unless an earlier stage failed; a failure becomes its error.
template <class F>
void attempt(Item& it, F&& step) {
  if (!it.error.empty()) return;
  try {
    step();
  } catch (const std::exception& e) {
    it.error = one_line(e.what());
  } catch (...) {
    it.error = "unknown error";
  }
}

class Stages {
 public:
  explicit Stages(const WorkerSetup& s)
      : setup_(s), warm_(s.base.device, make_device_options(s.base.solver), s.q_memory_bytes) {}

  // Reads the batch's messages until it says quit or goes away, then lets the
  // scans already sent finish.
  int run() {
    std::thread reader([this] { read_stage(); }), recon([this] { recon_stage(); }),
        writer([this] { write_stage(); });
    int status = 0;
    try {
      control();
    } catch (const std::exception& e) {
      spdlog::error("batch worker: {}", e.what());
      status = 1;
    }
    to_read_.close();
    reader.join();
    recon.join();
    writer.join();
    return status;
  }

 private:
  void control() {
    MessageReader in;
    while (std::optional<json> m = receive_message(setup_.fd, in)) {
      const std::string type = m->value("type", "");
      if (type == "quit") return;
      if (type != "scan") throw std::runtime_error("unknown message type '" + type + "'");
      Item it;
      it.id = m->at("id").get<std::size_t>();
      it.job = setup_.base;
      it.job.file = m->at("file").get<std::string>();
      it.job.output = m->at("output").get<std::string>();
      // A server's worker serves batch after batch: each scan names its run.
      it.job.run_id = m->value("run_id", it.job.run_id);
      it.job.q_cache = m->value("q_cache", it.job.q_cache);
      to_read_.push(std::move(it));
    }
  }

  // libhdf5 serves one thread at a time in any case, and the reader forks a
  // child to read each file first (io/h5util.hpp): no other thread may hold
  // libhdf5's lock at that moment, so reading and writing take turns. The
  // host work (reference image, density weights) is done here too, beside
  // the previous scan's reconstruction.
  void read_stage() {
    while (std::optional<Item> it = to_read_.pop()) {
      const auto t0 = std::chrono::steady_clock::now();
      double read_s = 0;
      attempt(*it, [&] {
        {
          std::lock_guard<std::mutex> g(io_mutex_);
          it->scan.emplace(read_batch_scan(it->job));
        }
        read_s = seconds_since(t0);
        prepare_batch_scan(*it->scan, warm_.expects_gpu());
      });
      // Where a worker's time goes (the slowest stage sets the pace).
      spdlog::debug("worker: {} read in {:.3f} s, prepared in {:.3f} s", it->job.file, read_s, seconds_since(t0) - read_s);
      to_recon_.push(std::move(*it));
    }
    to_recon_.close();
  }

  void recon_stage() {
    // The devices (a GPU's context: about half a second) are made now, while
    // the first scan is read, not after it. A failure is left for the first
    // scan: its own call tries again and puts the error on its row.
    const auto start = std::chrono::steady_clock::now();
    try {
      warm_.devices();
    } catch (...) {
    }
    spdlog::debug("worker: devices made in {:.3f} s", seconds_since(start));
    while (std::optional<Item> it = to_recon_.pop()) {
      send({{"type", "started"}, {"id", it->id}});
      const auto t0 = std::chrono::steady_clock::now();
      attempt(*it, [&] {
        test_fault_for(it->job.file);
        it->result.emplace(reconstruct_batch_scan(warm_, *it->scan, it->job));
      });
      spdlog::debug("worker: {} reconstructed in {:.3f} s", it->job.file, seconds_since(t0));
      to_write_.push(std::move(*it));
    }
    to_write_.close();
  }

  void write_stage() {
    while (std::optional<Item> it = to_write_.pop()) {
      BatchRow row;
      const auto t0 = std::chrono::steady_clock::now();
      attempt(*it, [&] {
        std::lock_guard<std::mutex> g(io_mutex_);
        row = write_batch_scan(*it->scan, *it->result, it->job);
      });
      spdlog::debug("worker: {} written in {:.3f} s", it->job.file, seconds_since(t0));
      if (!it->error.empty()) {
        row = BatchRow{};
        row.file = it->job.file;
        row.output = it->job.output;
        row.status = "failed";
        row.reason = it->error;
        spdlog::debug("{}: {}", row.file, row.reason);  // the batch logs the row once
      } else {
        test_fault_after_write(it->job.file);
      }
      send({{"type", "row"}, {"id", it->id}, {"row", row_json(row)}});
      forget_swapped_outputs();  // reported: an interrupt from now on is about the next scans
      // Reported first: its staging directory goes now (not written: the new
      // set; written: the previous one), the outputs in place stay.
      it->scan.reset();
    }
  }

  void send(const json& m) {
    std::lock_guard<std::mutex> g(send_mutex_);
    send_message(setup_.fd, m);  // a batch that is gone ends us (PR_SET_PDEATHSIG)
  }

  const WorkerSetup& setup_;
  WarmState warm_;
  // The batch bounds what it sends; between stages one scan waits at most.
  Channel<Item> to_read_{std::numeric_limits<std::size_t>::max()}, to_recon_{1}, to_write_{1};
  std::mutex send_mutex_, io_mutex_;
};

}  // namespace

int run_batch_worker(const WorkerSetup& setup) {
  keep_spare_reader();  // from this thread, which lives as long as the worker (PR_SET_PDEATHSIG)
  Stages stages(setup);
  return stages.run();
}

std::vector<std::string> worker_args(const WorkerSetup& setup, bool quiet) {
  std::vector<std::string> a = log_args(quiet);
  a.insert(a.end(), {"batch-worker", "--fd", std::to_string(setup.fd), "--q-memory",
                     std::to_string(setup.q_memory_bytes)});
  const std::vector<std::string> options = job_option_args(setup.base);
  a.insert(a.end(), options.begin(), options.end());
  return a;
}

}  // namespace fhd::app
