#include "util/json_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace mentat {

std::string JsonDouble(double d) {
  if (std::isnan(d)) return "{\"d\": \"NaN\"}";
  if (std::isinf(d)) return d > 0 ? "{\"d\": \"Infinity\"}" : "{\"d\": \"-Infinity\"}";
  char buf[400];
  // A large integral double in full (numeric prints no exponent, so "1e+300" would read
  // back as an integer).
  if (std::fabs(d) >= 1e15 && d == std::trunc(d)) {
    std::snprintf(buf, sizeof buf, "%.1f", d);
    return buf;
  }
  for (int prec = 15; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string out(buf);
  if (out.find_first_of(".eE") == std::string::npos) out += ".0";
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out.push_back(static_cast<char>(ch));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string JsonBlob(std::string_view bytes) {
  static const char kHexDigits[] = "0123456789abcdef";
  std::string out = "{\"b\": \"";
  for (unsigned char b : bytes) {
    out.push_back(kHexDigits[b >> 4]);
    out.push_back(kHexDigits[b & 15]);
  }
  return out + "\"}";
}

}  // namespace mentat
