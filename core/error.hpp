#pragma once
// Typed errors. Validation happens at the boundary (io/, app/); everything
// thrown for bad input is an InputError carrying where and what, so the CLI can
// print exactly one line and exit non-zero.
#include <stdexcept>
#include <string>

namespace fhd {

// `s` with every control byte (0x00-0x1f and 0x7f; tab and newline included)
// written as \xNN: a value taken from a damaged file (an attribute holding ESC
// or BEL) can neither drive the user's terminal nor break an error into two lines.
inline std::string printable(const std::string& s) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Bad user input: a file, an option, a dataset. Message format:
//   "<where>: <field> = <value>: <problem>", control bytes escaped (printable).
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& where, const std::string& field, const std::string& value,
             const std::string& problem)
      : std::runtime_error(printable(where + ": " + field + " = " + value + ": " + problem)) {}
  explicit InputError(const std::string& msg) : std::runtime_error(printable(msg)) {}
};

// A problem with a whole file, "<path>: <problem>": the file is the field
// and the value, named once ("a.h5: does not exist").
inline InputError file_error(const std::string& path, const std::string& problem) {
  return InputError(path + ": " + problem);
}

// A library option that cannot work: `field` is the option's name in the
// library's options (recon/problem/options.hpp: "reg", "maps_crop", ...);
// each front end maps it to its own name (the CLI to its flags).
class OptionError : public InputError {
 public:
  OptionError(const std::string& field, const std::string& value, const std::string& problem)
      : InputError("options", field, value, problem), field_(field), value_(value), problem_(problem) {}
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string field_, value_, problem_;
};

// The machine cannot do it (no GPU, out of device memory, a CUDA failure).
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fhd
