#pragma once
// Reading an untrusted HDF5 file in a child process only
// (docs/robustness.md, "Crashes and hangs inside libhdf5").
//
// A corrupt HDF5 *internal* structure (a global heap under a variable-length
// read, a B-tree) can crash libhdf5, spin in it, or make it allocate without
// bound before it returns any error; no check of ours can see it first. So the
// file is read by a child: this same executable started again (fork + exec of
// /proc/self/exe) in its reader mode, which runs one named reader and sends
// what it read through a pipe, as bytes of our own format. A pre-read in the
// child followed by the parent's own read is not enough: whether libhdf5's
// over-read of a corrupt file faults depends on the process's memory layout,
// so a file the child survived could still crash the parent. Exec, not a bare
// fork: the child starts with one thread and fresh locks (a forked copy of a
// threaded process could deadlock in the sanitizers' or libc's locks), with
// default signal handlers (a TERM ends it), and without our file descriptors
// (the output directory's lock is not inherited). It is started by
// posix_spawn, which does not copy the parent's page tables (a GPU worker's
// fork took 15-20 ms). PR_SET_PDEATHSIG and the interrupt's cleanup
// (io/atomic_file.hpp) kill it with its parent. A process that reads file
// after file (a batch worker) keeps a spare child started ahead
// (keep_spare_reader): each file is still read by a child of its own, which
// has read nothing before it.
#include <optional>
#include <string>

namespace fhd {

// Reads `path` the way the caller would and returns what it read as bytes of
// our own format (scans: io/scan_bytes.hpp), throwing InputError on bad input.
// `arg` is the caller's one option for the reader (an ISMRMRD file's
// trajectory units), "" when it has none. Runs in the child; the parent only
// decodes the bytes, so libhdf5 never runs on an untrusted file in the parent.
// What the reader logs (spdlog) is sent back with its bytes and logged by the
// parent, at the same levels: the child's own stderr goes nowhere.
using ChildReader = std::string (*)(const std::string& path, const std::string& arg);

// Names a reader the child may run. Call during static initialisation (a
// namespace-scope constant in the reader's own file), so every executable that
// links the reader can serve it. Returns true.
bool add_child_reader(const std::string& name, ChildReader read);

// First thing in main(), before threads or other work: when this process was
// started as a reader child (argv: exe, the reader flag, reader name, path,
// argument, the parent's pid; a spare has "-" for name, path and argument and
// reads them from its request socket), runs the reader, writes its result and
// its log to the pipe and exits;
// otherwise returns.
void serve_reader_child(int argc, char** argv);

// From now on this process keeps one reader child started ahead, so that a
// read does not wait for a child's exec and start (0.05-0.09 s of a 20 MB
// scan's read on the GPU host). Each read_in_child takes it, and starts the
// next one beside its own read. For processes that read many files; the
// spare is killed with its parent.
void keep_spare_reader();
// The spare's pid, -1 when none waits (for tests).
int spare_reader_pid();

// Runs reader `name` on `path` (with `arg`) in a child process, reading its
// result while it waits (the time limit covers the read and the hand-over):
//   the child read it              -> the bytes its reader returned, its log
//                                     lines logged here
//   the child threw InputError     -> the same InputError here
//   it crashed, ran past its time (reader_child_seconds) or out of its
//   memory cap (what it has plus 8x the file size plus 1 GiB)
//                                  -> one InputError naming `path`.
// Where no child can be started (no pipe, spawn or exec), returns nullopt: the
// caller then reads the file itself, as without isolation.
std::optional<std::string> read_in_child(const std::string& path, const std::string& name,
                                         const std::string& arg = "");

// The child's time: FHDRECON_READ_TIMEOUT seconds when set, else 6 s plus one
// per 64 MiB of file, so a spin on a damaged file of a few KB ends the run
// within 10 s while a valid multi-GB file (read at about 1 s per GB) has a
// margin of 16.
double reader_child_seconds(double file_bytes);

}  // namespace fhd
