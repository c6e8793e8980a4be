#pragma once
// Child processes for batch: each scan runs in its own fhdrecon process with a
// time limit, on one of several workers (one per GPU, or CPU jobs), so a crash
// or hang inside a library costs one row (docs/batch.md).
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fhd::app {

// Where a child runs: the environment it gets on top of ours.
struct Worker {
  std::string label;                                     // "gpu 1", "cpu 0"
  std::vector<std::pair<std::string, std::string>> env;  // CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS
};

// --gpus all|N|LIST: one worker per GPU, each child seeing only its GPU
// (CUDA_VISIBLE_DEVICES). Devices are numbered as this process sees them: the
// entries of CUDA_VISIBLE_DEVICES when it is set, else /dev/nvidia0, 1, ...
// Throws InputError naming the value when it names no usable device.
std::vector<Worker> gpu_workers(const std::string& spec);

// The devices --gpus all|N|LIST names, as this process numbers them (the same
// rules and messages as gpu_workers); a LIST may repeat a device.
std::vector<std::size_t> pick_gpus(const std::string& spec);

// How many GPUs this process may use, counted as pick_gpus does.
std::size_t visible_gpu_count();

// --jobs N: N CPU workers, each child with OMP_NUM_THREADS = cores / N
// (unless the user set OMP_NUM_THREADS).
std::vector<Worker> cpu_workers(int jobs);

// How a child ended.
struct ChildEnd {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it (not one we sent for the time limit)
  bool timed_out = false;
  bool interrupted = false;  // ended because this batch was told to stop
  double seconds = 0;
};
// One line for a child that ended without writing its row: "crashed: signal 11
// (Segmentation fault)", "timed out after 5 s (killed)", "exited with status 1".
std::string describe_end(const ChildEnd& e, double timeout_s);

struct ChildTask {
  std::size_t id;
  std::vector<std::string> args;  // after the program name
};

// Runs every task as `exe args...` (its own process group), at most one per
// worker at a time, in order. A child past `timeout_s` (0 = none) gets SIGTERM,
// then SIGKILL a few seconds later. `done` is called as each child ends (in
// this thread). SIGINT/SIGTERM to this process stop it starting more, end the
// running children and return false; true when every task ran.
bool run_children(const std::string& exe, const std::vector<ChildTask>& tasks, const std::vector<Worker>& workers,
                  double timeout_s, const std::function<void(std::size_t id, std::size_t worker, const ChildEnd&)>& done);

// This executable's path (/proc/self/exe).
std::string self_exe();

// ---------------------------------------------------------------- shared by
// run_children and the warm workers (app/batch_pool.hpp)

// Catches SIGINT/SIGTERM/SIGHUP for its lifetime (the previous handlers come back after).
// Nested ones share the outermost's flag: a signal before the inner one began
// still counts.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  bool stopped() const;
};

// fork + exec of `exe args...` with the worker's environment, in a process
// group of its own (a time limit kills the whole group), killed when we die
// (PR_SET_PDEATHSIG), so nothing outlives the batch. `fd` >= 0 becomes the
// child's descriptor 3 (the warm worker's socket).
int spawn_process(const std::string& exe, const std::vector<std::string>& args, const Worker& w, int fd = -1);

// How a process ended, from waitpid's status (signal, exit code).
ChildEnd ended_by(int wait_status);

constexpr double kKillGrace = 3.0;  // seconds between SIGTERM and SIGKILL

}  // namespace fhd::app
