#include "io/atomic_file.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "recon/error.hpp"

namespace fhd {
namespace fs = std::filesystem;

namespace {
// pid + a process-wide counter: two writers (threads or processes) never share a temporary.
std::string temp_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  fs::path p(path);
  std::string tag = ".fhdtmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-";
  return (p.parent_path() / (tag + p.filename().string())).string();
}
}  // namespace

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)), tmp_(temp_name(path_)) {
  if (path_.empty() || fs::path(path_).filename().empty())
    throw InputError("output", "path", "'" + path_ + "'", "not a file name");
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) std::remove(tmp_.c_str());
}

void AtomicOutput::commit() {
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp_.c_str());
    throw InputError(path_, "output", path_, "cannot rename the finished temporary into place: " + why);
  }
  committed_ = true;
}

void make_output_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw InputError(dir, "output directory", dir, "exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec))
    throw InputError(dir, "output directory", dir, "cannot create: " + (ec ? ec.message() : "unknown reason"));
}

void make_parent_dir(const std::string& path) {
  make_output_dir(fs::path(path).parent_path().string());
}

}  // namespace fhd
