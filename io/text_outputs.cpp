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
    if (!f) throw file_error(path, "cannot write");
  }
  out.commit();
}

void write_json(const std::string& path, const nlohmann::json& j) {
  // Bytes that are not UTF-8 (a file name in Latin-1) become U+FFFD: JSON
  // text cannot hold them, and refusing the report threw away a finished
  // reconstruction for its input's name.
  write_text(path, j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace fhd
