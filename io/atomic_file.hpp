#pragma once
// Outputs appear whole or not at all (ARCHITECTURE.md): every writer writes to
// a temporary name in the destination's directory, then renames it over the
// destination. rename() within one file system is atomic, so a reader never
// sees half a file and a failed write never clobbers an earlier good one.
#include <string>

namespace fhd {

class AtomicOutput {
 public:
  // `path` is the final name. The temporary is a hidden sibling whose name ends
  // like `path` (libraries such as niftiio pick the format from the suffix).
  explicit AtomicOutput(std::string path);
  ~AtomicOutput();  // removes the temporary unless commit() succeeded
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& tmp() const { return tmp_; }
  const std::string& path() const { return path_; }
  // Renames tmp() to path(). Throws InputError naming the path on failure.
  void commit();

 private:
  std::string path_, tmp_;
  bool committed_ = false;
};

// Creates `dir` and its parents if missing. Throws InputError (naming the
// directory and the system's reason) when it cannot or when `dir` is a file.
void make_output_dir(const std::string& dir);

// Creates the parent directory of the file `path` if needed (no-op for a bare name).
void make_parent_dir(const std::string& path);

}  // namespace fhd
