#include "util/case.h"

#include <unicode/locid.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

namespace mentat::text {

namespace {

bool IsAscii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

std::string Ascii(std::string_view s, bool upper) {
  std::string out(s);
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string Map(std::string_view s, bool upper) {
  if (IsAscii(s)) return Ascii(s, upper);
  icu::UnicodeString u =
      icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  if (upper)
    u.toUpper(icu::Locale::getRoot());
  else
    u.toLower(icu::Locale::getRoot());
  std::string out;
  u.toUTF8String(out);
  return out;
}

}  // namespace

std::string UpperCase(std::string_view s) { return Map(s, true); }
std::string LowerCase(std::string_view s) { return Map(s, false); }

std::string Capitalize(std::string_view s) {
  if (s.empty()) return std::string();
  // The length of the first code point (ill-formed lead bytes count as one).
  int32_t i = 0;
  UChar32 c;
  U8_NEXT(reinterpret_cast<const uint8_t*>(s.data()), i, static_cast<int32_t>(s.size()), c);
  (void)c;
  size_t first = static_cast<size_t>(i);
  return UpperCase(s.substr(0, first)) + LowerCase(s.substr(first));
}

}  // namespace mentat::text
