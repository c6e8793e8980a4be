#pragma once
// Small HDF5 (C API) helpers shared by io/ readers and writers. Internal to io/.
#include <hdf5.h>

#include <string>
#include <vector>

namespace fhd::h5 {

// Owns one hid_t and closes it with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset();
  // Closes now and throws (HDF5: <what>) when the close fails: for a written
  // file, the close is where the last metadata reaches the disk.
  void close(const std::string& what);
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// Silences HDF5's automatic error-stack printing while alive: a corrupt file
// becomes one InputError line from us instead of a page of HDF5 traces.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();

 private:
  H5E_auto2_t old_func_ = nullptr;
  void* old_data_ = nullptr;
};

// Call first thing in main, before any other HDF5 call: libhdf5 then installs no
// atexit cleanup. After a write failed on a full disk, H5Fclose fails and the
// file stays in libhdf5's table; its atexit cleanup closed it again and crashed
// (SIGSEGV in H5F__close_cb, libhdf5 1.10.8), so a run that had printed its one
// error line ended by signal 11. Every file fhdrecon writes is closed and checked
// explicitly; a failed one is a temporary that is removed, so the cleanup has
// nothing to save.
void no_cleanup_at_exit();

// The compound {r, i} of two float32: h5py's and MATLAB's complex64 layout.
Handle complex_type();

// Opens an existing HDF5 file read-only; throws InputError if it does not exist
// or is not HDF5 (truncated, corrupt).
Handle open_read(const std::string& path);
Handle create_file(const std::string& path);  // truncates; throws on failure

bool exists(hid_t loc, const std::string& name);  // link exists (dataset or group)
std::vector<hsize_t> shape(hid_t dataset);
std::string class_name(hid_t type);  // "integer", "float", "compound", ... for messages

void write_string_attr(hid_t obj, const std::string& name, const std::string& value);
// Reads a string attribute (fixed or variable length). Throws InputError naming `file` and `field`.
std::string read_string_attr(hid_t obj, const std::string& name, const std::string& file,
                             const std::string& field);

// Creates dataset `name` of `file_type` with `dims` and writes `data` (in `mem_type`).
void write_dataset(hid_t loc, const char* name, hid_t mem_type, hid_t file_type, const std::vector<hsize_t>& dims,
                   const void* data);
// A 1-D attribute of n values.
void write_attr(hid_t obj, const char* name, hid_t mem_type, hid_t file_type, hsize_t n, const void* data);

// Throws std::runtime_error("HDF5: <what>") if status < 0. For writer-side failures.
void check(herr_t status, const std::string& what);
hid_t check_id(hid_t id, const std::string& what);

}  // namespace fhd::h5
