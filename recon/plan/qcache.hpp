#pragma once
// A cache of Q on disk. Q depends only on the trajectory, the weights
// |Phi|^2, the image grid and the trig mode (docs/conventions.md), and is the
// costliest stage of a reconstruction (8x the voxels of FhD), so a second run
// over the same trajectory loads it instead. Device-neutral, host only.
//
// One file per key: <dir>/<key>.q, written to a temporary name and renamed,
// so a reader never sees half a file. A file that is corrupt, truncated or
// made for another key is ignored with a warning, never trusted.
#include <memory>
#include <string>
#include <vector>

#include "core/uninit_allocator.hpp"
#include "recon/problem/scan.hpp"

namespace fhd {

// Q on the host (grid.doubled() values). QValues(n) leaves its values
// uninitialised (core/uninit_allocator.hpp): whoever makes one writes them all
// (a file read, a download), without the zeroing pass of a std::vector first.
using QValues = std::vector<cfloat, UninitAllocator<cfloat>>;
// Read-only and shared: the disk cache's reader, a warm worker's memory and the
// plan that uploads Q hold one copy between them, never a copy each.
using SharedQ = std::shared_ptr<const QValues>;

// "q1-<nx>x<ny>x<nz>-<trig>-<m>-<32 hex digits>": a 128-bit hash of every k
// value, every weight (w empty = Phi 1, hashed as such), the grid and the trig
// mode. Any change of any input changes the key.
// `kernel` is the FhD/Q kernel variant that computes Q ("" = the backend's
// default): a TF32 Q must never be served to a run that asked for FP32.
std::string q_key(const Trajectory& traj, const std::vector<float>& w, const ImageGrid& grid, TrigMode trig,
                  const std::string& kernel = "");

// The cache root: $XDG_CACHE_HOME/fhdrecon, else $HOME/.cache/fhdrecon, else ""
// (no cache). Q files live in ROOT/q, tuned launch profiles in ROOT.
std::string default_cache_root();
// $XDG_CACHE_HOME/fhdrecon/q, else $HOME/.cache/fhdrecon/q, else "" (no cache).
std::string default_q_cache_dir();

// Q for `key` (on grid.doubled() of the key's grid), or null when there is
// no usable file: missing (silent), or unreadable/corrupt/mismatched (warning).
SharedQ load_q(const std::string& dir, const std::string& key);

// Stores Q under `key`, creating `dir`. Returns false (with a warning) when it
// cannot be written: the cache is an optimization, a failure never stops a run.
bool store_q(const std::string& dir, const std::string& key, const SharedQ& q);

// store_q writes <key>.q.tmp.<pid>.<random> first. `on_create` is called with
// that name before it is created and `on_done` once it is renamed or removed,
// so the app can register it with its interrupt cleanup (io/atomic_file.hpp:
// recon does not depend on io). store_q also removes temporaries that a killed
// run left in `dir` (their pid is no longer running). Defaults: no-ops.
using QTemporaryHook = void (*)(const std::string& path);
void set_q_temporary_hooks(QTemporaryHook on_create, QTemporaryHook on_done);

// An in-process layer in front of the disk cache, for a process that
// reconstructs scan after scan (a warm batch worker: app/batch_warm.hpp owns
// it): load_q asks it first and hands it what it reads from disk, store_q
// hands it what it stores, so a trajectory's Q is read from disk at most once
// per process. It shares the values it is given (no copy: 134 MB at 128^3) and
// may drop them; a plan still using them keeps them alive. Default: none.
class QMemory {
 public:
  virtual ~QMemory() = default;
  virtual SharedQ find(const std::string& key) = 0;  // null: not kept
  virtual void keep(const std::string& key, SharedQ q) = 0;
};
// Installs `memory` for this process (nullptr: none); it must outlive its use.
void set_q_memory(QMemory* memory);
bool has_q_memory();

}  // namespace fhd
