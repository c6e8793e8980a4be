#pragma once
// JSON reports: one generic, atomic writer (the app decides the content).
#include <string>

#include <nlohmann/json.hpp>

namespace fhd {

// Pretty-printed (2-space indent, trailing newline), written to a temporary
// and renamed. NaN/Inf numbers, which JSON cannot hold, are written as null
// by nlohmann::json: the reader sees null, never a broken file.
void write_json(const std::string& path, const nlohmann::json& j);

// Any text (CSV, Markdown), written to a temporary and renamed. Throws
// InputError naming the path when it cannot be written.
void write_text(const std::string& path, const std::string& text);

}  // namespace fhd
