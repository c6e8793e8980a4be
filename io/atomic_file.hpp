#pragma once
// Outputs appear whole or not at all (docs/architecture.md, "Durable outputs").
// - One file: AtomicOutput writes to a temporary name in the destination's
//   directory, fsyncs it, then renames it over the destination. A reader never
//   sees half a file and a failed write never clobbers an earlier good one.
// - A set of files (a run's images and report): OutputSet writes them all into
//   a staging directory beside the target, then swaps the two directories in
//   one rename (renameat2 RENAME_EXCHANGE). The previous set survives any
//   failure before the swap; an advisory lock (flock) refuses a second writer.
// Every temporary is registered, so an interrupt (SIGINT, SIGTERM, SIGHUP, once
// install_interrupt_cleanup ran) removes them before the process dies, and the
// next run into the same directory removes what a killed run left.
#include <functional>
#include <string>
#include <vector>

namespace fhd {

class AtomicOutput {
 public:
  // `path` is the final name. The temporary is a hidden sibling whose name ends
  // like `path` (libraries such as niftiio pick the format from the suffix).
  // Makes the missing folders of `path`.
  explicit AtomicOutput(std::string path);
  ~AtomicOutput();  // removes the temporary unless commit() succeeded
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& tmp() const { return tmp_; }
  const std::string& path() const { return path_; }
  // fsyncs tmp(), renames it to path(), fsyncs the directory. Throws
  // InputError naming the path on failure (the destination is then untouched).
  void commit();

 private:
  std::string path_, tmp_;
  bool committed_ = false;
};

class OutputSet {
 public:
  // `dir` is the target directory; `owned` the file names a run of this kind
  // may write there (files of an earlier run that this one does not rewrite
  // are dropped, so a set never mixes two runs). Other plain files in `dir`
  // are carried over; a subdirectory is refused (the directory must be the
  // tool's own). Creates `dir` when missing and locks it. A link (or a path
  // through one) is resolved: the outputs go where it points and the link
  // stays. Throws InputError naming `dir` for "", an unusable directory, a
  // mount point (the new set is staged beside it and swapped in, which a
  // mount point refuses), a name too long for its staging directory, or when
  // another run holds it.
  OutputSet(std::string dir, std::vector<std::string> owned);
  // Removes the staging directory (unfinished, or after commit() the previous
  // set); not committed, also `dir` if it made it and it is empty.
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  const std::string& dir() const { return dir_; }
  // Where to write the set's file `name` now (inside the staging directory).
  std::string file(const std::string& name);
  // fsyncs every file and swaps the staging directory into place; the old set
  // goes with this object.
  void commit();

 private:
  void lock();
  void remove_stale() noexcept;
  void carry_over_foreign_files();
  void check_staging_possible() const;
  // dir_ as given (for messages); target_ the directory it resolves to (links
  // followed), which is locked, staged beside and swapped.
  std::string dir_, target_, parent_, staging_;
  std::vector<std::string> owned_;
  int lock_fd_ = -1;
  int files_ = 0;
  bool created_ = false, committed_ = false;
};

// Creates `dir` and its parents if missing. Throws InputError (naming the
// directory and the system's reason) when it cannot or when `dir` is a file.
void make_output_dir(const std::string& dir);

// Creates the parent directory of the file `path` if needed (no-op for a bare name).
void make_parent_dir(const std::string& path);

// Before any work: `path` must be a file name (not "", a directory, nor a
// name ending in '/', '.' or '..') whose nearest existing folder this process
// can write in. Creates nothing: AtomicOutput makes the missing folders when
// the file is written. Throws InputError naming it.
void check_writable_file(const std::string& path, const std::string& option);

// fsync a file (or directory). Throws InputError naming it on failure.
void sync_path(const std::string& path);

// Temporaries to remove if the process is interrupted (thread-safe).
void register_temporary(const std::string& path);
// Registers `path` and runs `create` (which makes it) in one step under the
// registry's lock: an interrupt's cleanup either removes what was made or
// runs before it is made, never between.
void create_temporary(const std::string& path, const std::function<void()>& create);
void forget_temporary(const std::string& path);
// Removes a registered temporary (file or directory) and forgets it.
void remove_temporary(const std::string& path) noexcept;
// The interrupt's cleanup: removes every registered temporary and keeps the
// registry locked, so no thread registers, creates or swaps one afterwards.
void remove_temporaries_and_hold() noexcept;

// Child processes to kill when this process is interrupted (thread-safe), so
// none outlives it (a reader child spinning in libhdf5, io/reader_child.hpp).
// Forget a child once it has ended and before reaping it: its pid is then not
// reused while registered.
void register_child_process(int pid);
void forget_child_process(int pid);

// SIGINT, SIGTERM and SIGHUP kill the registered children, remove the
// registered temporaries, print one line and then end the process by the
// same signal (exit status 128 + signal).
// Uses a signal-safe self-pipe and a helper thread; call once, early in main.
void install_interrupt_cleanup();
// For a process that writes one output set after another (a warm batch
// worker): the sets swapped in so far are done, so an interrupt's line speaks
// only of what comes after.
void forget_swapped_outputs() noexcept;
// How the interrupt's line begins ("fhdrecon: interrupted" unless set): a
// batch's worker is ended by its batch (a time limit, a stop), which no user
// interrupted. `text` must live as long as the process (a literal).
void set_interrupt_label(const char* text) noexcept;

// Test-only (tests/app): FHDRECON_TEST_HOOK=<action>@<point>, action pause
// (sleep up to 60 s), spin (busy up to 60 s), sigint or sigterm (signal this
// process), point a file number k (before the k-th file of an output set,
// from 1), "swap" (just before the swap) or "reader-child" (in the reader
// child, before it reads: io/reader_child.hpp). Never set by users;
// documented in docs/formats.md.
void test_hook(const std::string& point);

}  // namespace fhd
