#include "io/h5util.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/error.hpp"

namespace fhd::h5 {

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::close(const std::string& what) {
  const hid_t id = id_;
  id_ = -1;
  if (id >= 0 && close_) check(close_(id), what);
}

void Handle::reset() {
  if (id_ >= 0 && close_) close_(id_);
  id_ = -1;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &old_func_, &old_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, old_func_, old_data_); }

void no_cleanup_at_exit() { H5dont_atexit(); }

void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("HDF5: " + what);
}

hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw std::runtime_error("HDF5: " + what);
  return id;
}

Handle complex_type() {
  Handle t(check_id(H5Tcreate(H5T_COMPOUND, 2 * sizeof(float)), "create complex type"), H5Tclose);
  check(H5Tinsert(t.get(), "r", 0, H5T_NATIVE_FLOAT), "insert r");
  check(H5Tinsert(t.get(), "i", sizeof(float), H5T_NATIVE_FLOAT), "insert i");
  return t;
}

Handle open_read(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw file_error(path, "does not exist");
  if (!fs::is_regular_file(path, ec)) throw file_error(path, "is not a regular file");
  // H5Fis_hdf5 says "not HDF5" for a file it may not read: name the real cause.
  if (::access(path.c_str(), R_OK) != 0)
    throw file_error(path, std::string("cannot be read (") + std::strerror(errno) + ")");
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw file_error(path, "is not an HDF5 file (or is truncated/corrupt)");
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw file_error(path, "HDF5 cannot open it (truncated or corrupt?)");
  return Handle(f, H5Fclose);
}

Handle create_file(const std::string& path) {
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) throw file_error(path, "cannot create HDF5 file");
  return Handle(f, H5Fclose);
}

bool exists(hid_t loc, const std::string& name) {
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<hsize_t> shape(hid_t dataset) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return {};
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

std::string class_name(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float" + std::to_string(8 * H5Tget_size(type));
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ARRAY: return "array";
    default: return "other";
  }
}

void write_string_attr(hid_t obj, const std::string& name, const std::string& value) {
  // Variable-length UTF-8: what h5py writes for str and reads back as str.
  Handle type(check_id(H5Tcopy(H5T_C_S1), "copy string type"), H5Tclose);
  check(H5Tset_size(type.get(), H5T_VARIABLE), "string size");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string cset");
  Handle space(check_id(H5Screate(H5S_SCALAR), "scalar space"), H5Sclose);
  Handle attr(check_id(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                       "create attribute " + name),
              H5Aclose);
  const char* p = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &p), "write attribute " + name);
}

std::string read_string_attr(hid_t obj, const std::string& name, const std::string& file,
                             const std::string& field) {
  if (H5Aexists(obj, name.c_str()) <= 0) throw InputError(file, field, "(missing)", "required attribute is missing");
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  Handle type(H5Aget_type(attr.get()), H5Tclose);
  if (!attr.ok() || !type.ok() || H5Tget_class(type.get()) != H5T_STRING)
    throw InputError(file, field, type.ok() ? class_name(type.get()) : "?", "expected a string attribute");
  Handle space(H5Aget_space(attr.get()), H5Sclose);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    throw InputError(file, field, "(array)", "expected a scalar string attribute");
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* p = nullptr;
    if (H5Aread(attr.get(), mem.get(), &p) < 0 || !p) throw InputError(file, field, "?", "cannot read string");
    std::string s(p);
    H5free_memory(p);
    return s;
  }
  // One extra byte: a NULLTERM memory type of size n holds only n-1 characters.
  std::size_t n = H5Tget_size(type.get()) + 1;
  std::string s(n, '\0');
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem.get(), n);
  if (H5Aread(attr.get(), mem.get(), s.data()) < 0) throw InputError(file, field, "?", "cannot read string");
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  while (!s.empty() && s.back() == ' ') s.pop_back();  // Fortran-style space padding
  return s;
}

void write_dataset(hid_t file, const char* name, hid_t mem_type, hid_t file_type,
                   const std::vector<hsize_t>& dims, const void* data) {
  Handle space(check_id(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "dataspace"), H5Sclose);
  Handle ds(check_id(H5Dcreate2(file, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     std::string("create ") + name),
            H5Dclose);
  check(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), std::string("write ") + name);
}

void write_attr(hid_t obj, const char* name, hid_t mem_type, hid_t file_type, hsize_t n, const void* data) {
  Handle space(check_id(H5Screate_simple(1, &n, nullptr), "attribute space"), H5Sclose);
  Handle a(check_id(H5Acreate2(obj, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), name), H5Aclose);
  check(H5Awrite(a.get(), mem_type, data), name);
}

}  // namespace fhd::h5
