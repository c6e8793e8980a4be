#pragma once
// Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past
// U+10FFFF). Text that leaves the program as JSON or as Cairo's text must be
// UTF-8: batch refuses a scan name it could not carry to a worker exactly, and
// a figure replaces what it cannot draw.
#include <cstddef>
#include <string>

namespace fhd {

// The length of the well-formed sequence at s[i], or 0 if none begins there.
inline std::size_t utf8_sequence(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  const std::size_t n = c < 0x80 ? 1 : (c >= 0xc2 && c <= 0xdf) ? 2 : (c >= 0xe0 && c <= 0xef) ? 3
                      : (c >= 0xf0 && c <= 0xf4) ? 4 : 0;
  bool ok = n > 0 && i + n <= s.size();
  for (std::size_t k = 1; ok && k < n; ++k) ok = (b(i + k) & 0xc0) == 0x80;
  if (ok && n == 3) ok = !(c == 0xe0 && b(i + 1) < 0xa0) && !(c == 0xed && b(i + 1) >= 0xa0);
  if (ok && n == 4) ok = !(c == 0xf0 && b(i + 1) < 0x90) && !(c == 0xf4 && b(i + 1) >= 0x90);
  return ok ? n : 0;
}

inline bool is_utf8(const std::string& s) {
  for (std::size_t i = 0, n; i < s.size(); i += n)
    if ((n = utf8_sequence(s, i)) == 0) return false;
  return true;
}

// `s` with every byte that does not begin a well-formed sequence replaced by U+FFFD.
inline std::string valid_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(s, i);
    if (n) {
      out.append(s, i, n);
      i += n;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

}  // namespace fhd
