// UTF-8 validation, shared by the EDN reader (strings, symbols, keywords) and the value
// codec (every string a transaction stores), so that what mentat reads and stores is valid
// UTF-8 (doc/format.md "Strings").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mentat::utf8 {

// Decodes one UTF-8 sequence at the start of `s` (non-empty) into `*out`; returns its
// length, or 0 when it is not well-formed UTF-8: a stray continuation byte, a truncated
// sequence, an overlong form, a surrogate (U+D800..U+DFFF) or a value beyond U+10FFFF.
inline size_t Decode(std::string_view s, char32_t* out) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = b(0);
  size_t len;
  char32_t cp;
  if (c < 0x80) {
    *out = c;
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    len = 2, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i) & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *out = cp;
  return len;
}

// The offset of the first byte of `s` that does not begin a well-formed sequence, or
// std::string_view::npos when all of `s` is UTF-8.
inline size_t FirstInvalid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    char32_t cp;
    size_t len = Decode(s.substr(i), &cp);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

// `s` with each byte that does not begin a well-formed sequence replaced by U+FFFD: for
// hosts that must never receive anything but UTF-8 (DuckDB's VARCHAR).
inline std::string Repaired(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    size_t bad = FirstInvalid(s.substr(i));
    if (bad == std::string_view::npos) {
      out.append(s.substr(i));
      break;
    }
    out.append(s.substr(i, bad)).append("\xEF\xBF\xBD");
    i += bad + 1;
  }
  return out;
}

}  // namespace mentat::utf8
