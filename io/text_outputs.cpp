#include "io/text_outputs.hpp"

#include <fstream>

#include "io/atomic_file.hpp"
#include "core/error.hpp"

namespace fhd {

void write_text(const std::string& path, const std::string& text) {
  AtomicOutput out(path);
  {
    std::ofstream f(out.tmp(), std::ios::binary);
    f << text;
    f.close();
    if (!f) throw InputError(path, "file", path, "cannot write");
  }
  out.commit();
}

void write_json(const std::string& path, const nlohmann::json& j) {
  // Serialize first: invalid UTF-8 throws here, before any file exists.
  write_text(path, j.dump(2) + "\n");
}

}  // namespace fhd
