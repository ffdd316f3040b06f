// Canonical EDN printing, and the text forms of instants and UUIDs.
//
// The printer's output reads back (Read()) to a value equal to the one printed: floats use
// the shortest representation that round-trips and always contain '.' or 'e', strings
// escape control characters, maps print as {k v, k v}.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "mentat/edn.h"

namespace mentat::edn {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void AppendHex4(uint32_t c, std::string* out) {
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHexDigits[(c >> shift) & 15]);
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

void PrintString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7F) continue;
    out->append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default:
        AppendHex4(c, out);
        break;
    }
  }
  out->append(s.data() + start, s.size() - start);
  out->push_back('"');
}

void PrintChar(char32_t c, std::string* out) {
  switch (c) {
    case '\n':
      out->append("\\newline");
      return;
    case ' ':
      out->append("\\space");
      return;
    case '\t':
      out->append("\\tab");
      return;
    case '\r':
      out->append("\\return");
      return;
    case '\b':
      out->append("\\backspace");
      return;
    case '\f':
      out->append("\\formfeed");
      return;
    default:
      break;
  }
  if (c > 0x20 && c < 0x7F) {
    out->push_back('\\');
    out->push_back(static_cast<char>(c));
  } else if (c < 0xA0 || (c >= 0xD800 && c <= 0xDFFF)) {
    AppendHex4(c, out);  // control characters and lone surrogates
  } else if (c <= 0x10FFFF) {
    out->push_back('\\');
    AppendUtf8(c, out);
  } else {
    AppendHex4(0xFFFD, out);  // not a Unicode code point; cannot be written
  }
}

void PrintDouble(double d, std::string* out) {
  if (std::isnan(d)) {
    out->append("##NaN");
    return;
  }
  if (std::isinf(d)) {
    out->append(d > 0 ? "##Inf" : "##-Inf");
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
  (void)ec;                                                  // 64 bytes always suffice
  char* e = std::find(buf, end, 'e');
  out->append(buf, e);
  if (e == end) {
    if (std::find(buf, end, '.') == end) out->append(".0");
    return;
  }
  // Exponent without '+' or leading zeros: "2.5e-07" -> "2.5e-7", "1e+300" -> "1e300".
  char* p = e + 1;
  out->push_back('e');
  if (*p == '-') out->push_back(*p++);
  if (*p == '+') ++p;
  while (p + 1 < end && *p == '0') ++p;
  out->append(p, end);
}

void PrintInt(int64_t i, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, i);
  (void)ec;
  out->append(buf, end);
}

void AppendDigits(std::string* out, int64_t v, int width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  for (int pad = width - static_cast<int>(end - buf); pad > 0; --pad) out->push_back('0');
  out->append(buf, end);
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian calendar).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int64_t* m, int64_t* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2);
}

bool IsLeap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int DaysInMonth(int64_t y, int64_t m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

std::string QuoteForError(std::string_view text) {
  constexpr size_t kMax = 64;
  size_t cut = text.size() <= kMax ? text.size() : kMax;
  while (cut < text.size() && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;  // do not split a UTF-8 sequence
  }
  std::string out;
  PrintString(text.substr(0, cut), &out);
  if (cut < text.size()) out.insert(out.size() - 1, "...");
  return out;
}

// A small cursor over instant text.
class InstantParser {
 public:
  explicit InstantParser(std::string_view t) : t_(t) {}

  Result<int64_t> Parse() {
    int64_t year, month = 1, day = 1, hour = 0, minute = 0, second = 0, frac_micros = 0;
    int64_t offset_seconds = 0;
    bool signed_year = !AtEnd() && (Peek() == '+' || Peek() == '-');
    bool neg_year = signed_year && Peek() == '-';
    if (signed_year) ++i_;
    size_t year_start = i_;
    if (!Digits(0, &year)) return Error("expected a year");
    size_t year_digits = i_ - year_start;
    if (!signed_year && year_digits != 4) return Error("the year must have 4 digits");
    if (signed_year && (year_digits < 4 || year_digits > 6)) {
      return Error("a signed year must have 4 to 6 digits");
    }
    if (neg_year) year = -year;
    if (Accept('-')) {
      if (!Digits(2, &month)) return Error("expected a two-digit month");
      if (month < 1 || month > 12) return Error("month out of range");
      if (Accept('-')) {
        if (!Digits(2, &day)) return Error("expected a two-digit day");
        if (day < 1 || day > DaysInMonth(year, month)) return Error("day out of range");
        if (Accept('T') || Accept('t')) {
          if (!Digits(2, &hour)) return Error("expected a two-digit hour");
          if (!Accept(':') || !Digits(2, &minute)) return Error("expected ':' and minutes");
          if (Accept(':')) {
            if (!Digits(2, &second)) return Error("expected two-digit seconds");
            if (Accept('.')) {
              size_t start = i_;
              int64_t frac;
              if (!Digits(0, &frac)) return Error("expected fractional seconds");
              size_t n = i_ - start;
              if (n > 9) return Error("more than 9 fractional digits");
              for (size_t k = n; k < 9; ++k) frac *= 10;
              frac_micros = frac / 1000;  // nanoseconds truncated to microseconds
            }
          }
          if (hour > 23) return Error("hour out of range");
          if (minute > 59) return Error("minute out of range");
          // A leap second (":60") is accepted only at the end of a minute, as in Clojure.
          if (second > (minute == 59 ? 60 : 59)) return Error("second out of range");
          if (Accept('Z') || Accept('z')) {
            // UTC
          } else if (!AtEnd() && (Peek() == '+' || Peek() == '-')) {
            int64_t sign = Peek() == '-' ? -1 : 1;
            ++i_;
            int64_t oh, om;
            if (!Digits(2, &oh) || !Accept(':') || !Digits(2, &om)) {
              return Error("expected a UTC offset like +02:00");
            }
            if (oh > 23 || om > 59) return Error("UTC offset out of range");
            offset_seconds = sign * (oh * 3600 + om * 60);
          }
        }
      }
    }
    if (!AtEnd()) {
      return Error("unexpected '" + std::string(1, Peek()) + "' at offset " + std::to_string(i_));
    }
    // Years have at most 6 digits, so seconds fit easily; micros may not.
    int64_t days = DaysFromCivil(year, month, day);
    int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
    __int128 micros = static_cast<__int128>(seconds) * 1000000 + frac_micros;
    if (micros < std::numeric_limits<int64_t>::min() ||
        micros > std::numeric_limits<int64_t>::max()) {
      return Error("out of range");
    }
    return static_cast<int64_t>(micros);
  }

 private:
  bool AtEnd() const { return i_ >= t_.size(); }
  char Peek() const { return t_[i_]; }
  bool Accept(char c) {
    if (AtEnd() || t_[i_] != c) return false;
    ++i_;
    return true;
  }
  // Reads exactly `n` digits (n > 0) or one or more (n == 0, at most 18).
  bool Digits(size_t n, int64_t* out) {
    size_t start = i_;
    int64_t v = 0;
    while (!AtEnd() && Peek() >= '0' && Peek() <= '9' && (n == 0 || i_ - start < n)) {
      if (i_ - start >= 18) return false;
      v = v * 10 + (Peek() - '0');
      ++i_;
    }
    size_t got = i_ - start;
    if (got == 0 || (n != 0 && got != n)) return false;
    *out = v;
    return true;
  }
  Status Error(const std::string& what) const {
    return Status::InvalidArgument("invalid instant " + QuoteForError(t_) + ": " + what);
  }

  std::string_view t_;
  size_t i_ = 0;
};

// A scalar's text; collections are printed by PrintValue.
void PrintScalar(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Kind::kNil:
      out->append("nil");
      return;
    case Kind::kBool:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case Kind::kInt:
      PrintInt(v.as_int(), out);
      return;
    case Kind::kBigInt:
      out->append(v.str()).push_back('N');
      return;
    case Kind::kFloat:
      PrintDouble(v.as_double(), out);
      return;
    case Kind::kBigDec:
      out->append(v.str()).push_back('M');
      return;
    case Kind::kChar:
      PrintChar(v.as_char(), out);
      return;
    case Kind::kString:
      PrintString(v.str(), out);
      return;
    case Kind::kKeyword:
      out->append(":").append(v.str());
      return;
    case Kind::kSymbol:
      out->append(v.str());
      return;
    case Kind::kInst:
      out->append("#inst \"").append(FormatInstant(v.as_inst_micros())).push_back('"');
      return;
    case Kind::kUri:
      out->append("#uri ");
      PrintString(v.str(), out);
      return;
    case Kind::kUuid:
      out->append("#uuid \"").append(FormatUuid(v.as_uuid())).push_back('"');
      return;
    case Kind::kBytes:
      out->append("#bytes \"");
      for (char c : v.str()) {
        unsigned char u = static_cast<unsigned char>(c);
        out->push_back(kHexDigits[u >> 4]);
        out->push_back(kHexDigits[u & 15]);
      }
      out->push_back('"');
      return;
    case Kind::kList:
    case Kind::kVector:
    case Kind::kSet:
    case Kind::kMap:
      return;
  }
}

bool IsCollection(const Value& v) { return v.is_seq() || v.is_map(); }

const char* Opener(Kind k) {
  return k == Kind::kList ? "(" : k == Kind::kVector ? "[" : k == Kind::kSet ? "#{" : "{";
}
char Closer(Kind k) { return k == Kind::kList ? ')' : k == Kind::kVector ? ']' : '}'; }

// Iterative, so that any value prints whatever its depth (a recursive pull down a long
// chain nests one map per entity): the stack holds one frame per open collection.
void PrintValue(const Value& root, std::string* out) {
  if (!IsCollection(root)) return PrintScalar(root, out);
  struct Frame {
    const Value* coll;
    size_t next;  // the next element; for maps keys and values alternate (2 per entry)
    size_t end;
  };
  auto open = [out](const Value& v) {
    out->append(Opener(v.kind()));
    return Frame{&v, 0, v.is_map() ? 2 * v.entries().size() : v.items().size()};
  };
  std::vector<Frame> stack;
  stack.push_back(open(root));
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.end) {
      out->push_back(Closer(f.coll->kind()));
      stack.pop_back();
      continue;
    }
    size_t i = f.next++;
    const Value* child;
    if (f.coll->is_map()) {
      const auto& entry = f.coll->entries()[i / 2];
      if (i % 2 == 1) {
        out->push_back(' ');
      } else if (i > 0) {
        out->append(", ");
      }
      child = i % 2 == 0 ? &entry.first : &entry.second;
    } else {
      if (i > 0) out->push_back(' ');
      child = &f.coll->items()[i];
    }
    if (IsCollection(*child)) {
      stack.push_back(open(*child));  // `f` may dangle from here on
    } else {
      PrintScalar(*child, out);
    }
  }
}

}  // namespace

std::string Print(const Value& v) {
  std::string out;
  PrintValue(v, &out);
  return out;
}

void PrintTo(const Value& v, std::string* out) { PrintValue(v, out); }

std::string FormatInstant(int64_t micros) {
  constexpr int64_t kMicrosPerDay = int64_t{86400} * 1000000;
  int64_t days = micros / kMicrosPerDay;
  int64_t rem = micros % kMicrosPerDay;
  if (rem < 0) {
    --days;
    rem += kMicrosPerDay;
  }
  int64_t y, m, d;
  CivilFromDays(days, &y, &m, &d);
  int64_t secs = rem / 1000000, us = rem % 1000000;
  std::string out;
  out.reserve(32);
  if (y < 0 || y > 9999) {
    // ISO 8601 expanded year; ParseInstant reads it back.
    out.push_back(y < 0 ? '-' : '+');
    AppendDigits(&out, y < 0 ? -y : y, 4);
  } else {
    AppendDigits(&out, y, 4);
  }
  out.push_back('-');
  AppendDigits(&out, m, 2);
  out.push_back('-');
  AppendDigits(&out, d, 2);
  out.push_back('T');
  AppendDigits(&out, secs / 3600, 2);
  out.push_back(':');
  AppendDigits(&out, secs / 60 % 60, 2);
  out.push_back(':');
  AppendDigits(&out, secs % 60, 2);
  out.push_back('.');
  if (us % 1000 == 0) {
    AppendDigits(&out, us / 1000, 3);
  } else {
    AppendDigits(&out, us, 6);
  }
  out.push_back('Z');
  return out;
}

Result<int64_t> ParseInstant(std::string_view text) { return InstantParser(text).Parse(); }

std::string FormatUuid(const Uuid& u) {
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < u.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHexDigits[u[i] >> 4]);
    out.push_back(kHexDigits[u[i] & 15]);
  }
  return out;
}

Status CheckUri(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("invalid uri " + QuoteForError(text) + ": " + why);
  };
  if (text.empty()) return bad("it is empty");
  auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  };
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c <= 0x20 || c == 0x7f)
      return bad("a space or control character at offset " + std::to_string(i) +
                 " must be escaped (%XX)");
    if (c < 0x80 &&
        std::string_view("\"<>\\^`{|}").find(static_cast<char>(c)) != std::string_view::npos)
      return bad(std::string("'") + static_cast<char>(c) + "' at offset " + std::to_string(i) +
                 " must be escaped (%XX)");
    if (c == '%' && (i + 2 >= text.size() || !hex(text[i + 1]) || !hex(text[i + 2])))
      return bad("'%' at offset " + std::to_string(i) + " is not followed by two hex digits");
  }
  // A ':' before any '/', '?' or '#' ends a scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
  size_t colon = text.find(':');
  if (colon != std::string_view::npos && colon < text.find_first_of("/?#")) {
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    bool ok = colon > 0 && alpha(text[0]);
    for (size_t i = 1; ok && i < colon; ++i)
      ok = alpha(text[i]) || (text[i] >= '0' && text[i] <= '9') || text[i] == '+' ||
           text[i] == '-' || text[i] == '.';
    if (!ok)
      return bad("the scheme before ':' must be a letter followed by letters, digits, +, - or .");
  }
  return Status::OK();
}

Result<Uuid> ParseUuid(std::string_view text) {
  auto error = [&]() {
    return Status::InvalidArgument("invalid uuid " + QuoteForError(text) +
                                   ": expected 8-4-4-4-12 hex digits");
  };
  if (text.size() != 36) return error();
  Uuid u{};
  size_t byte = 0;
  for (size_t i = 0; i < text.size();) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return error();
      ++i;
      continue;
    }
    auto hex = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    int hi = hex(text[i]), lo = hex(text[i + 1]);
    if (hi < 0 || lo < 0) return error();
    u[byte++] = static_cast<uint8_t>(hi * 16 + lo);
    i += 2;
  }
  return u;
}

}  // namespace mentat::edn
