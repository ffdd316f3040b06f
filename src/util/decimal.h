// Decimal numbers as text: parsing, printing, and an order-preserving byte key.
//
// Used for :db.type/bigint and :db.type/bigdec (doc/format.md "Value encoding"): SQLite
// has no arbitrary-precision numbers, so such a value is stored as a BLOB whose bytes
// compare (memcmp, SQLite's BLOB order) as the numbers do. Both types share the key, so a
// bigint and a bigdec of the same value have equal keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mentat::decimal {

// Sign, significant digits (no leading or trailing zeros) and an exponent:
// value = 0.DIGITS * 10^exp. Zero has no digits.
struct Decimal {
  bool neg = false;
  std::string digits;
  int64_t exp = 0;
};

// Parses "[+-]digits[.digits][(e|E)[+-]digits]" (a BigInt or BigDec literal's text, or a
// double printed by %g). Stops at the first other character; exponents are clamped.
inline Decimal Parse(std::string_view t) {
  Decimal d;
  size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) d.neg = t[i++] == '-';
  int64_t int_digits = 0;
  bool seen_nonzero = false;
  int64_t leading_frac_zeros = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
    if (t[i] != '0' || seen_nonzero) {
      seen_nonzero = true;
      d.digits.push_back(t[i]);
      ++int_digits;
    }
  }
  if (i < t.size() && t[i] == '.') {
    for (++i; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (t[i] != '0' || seen_nonzero) {
        seen_nonzero = true;
        d.digits.push_back(t[i]);
      } else {
        ++leading_frac_zeros;
      }
    }
  }
  int64_t e = 0;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) eneg = t[i++] == '-';
    for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) {
      if (e < (int64_t{1} << 40)) e = e * 10 + (t[i] - '0');
    }
    if (eneg) e = -e;
  }
  while (!d.digits.empty() && d.digits.back() == '0') d.digits.pop_back();
  if (d.digits.empty()) {
    d.neg = false;
    return d;
  }
  d.exp = (int_digits > 0 ? int_digits : -leading_frac_zeros) + e;
  return d;
}

// True when the value has no fractional part.
inline bool IsInteger(const Decimal& d) {
  return d.digits.empty() || d.exp >= static_cast<int64_t>(d.digits.size());
}

// The order-preserving key: 0x80 for zero; a positive value is 0x81, the exponent as 8
// big-endian bytes offset by 2^63, the digits, 0x00; a negative value is 0x7F followed by
// the complement of the same bytes (0xFF last), so larger magnitudes sort first.
inline std::string Key(const Decimal& d) {
  if (d.digits.empty()) return std::string(1, '\x80');
  std::string body;
  uint64_t e = static_cast<uint64_t>(d.exp) ^ (uint64_t{1} << 63);
  for (int i = 7; i >= 0; --i) body.push_back(static_cast<char>((e >> (8 * i)) & 0xff));
  body += d.digits;
  body.push_back('\0');
  if (!d.neg) return "\x81" + body;
  for (char& c : body) c = static_cast<char>(~static_cast<unsigned char>(c));
  return "\x7f" + body;
}

// The inverse of Key; nullopt for bytes no Key returns.
inline std::optional<Decimal> FromKey(std::string_view k) {
  Decimal d;
  if (k.size() == 1 && static_cast<unsigned char>(k[0]) == 0x80) return d;
  if (k.size() < 11) return std::nullopt;
  unsigned char head = static_cast<unsigned char>(k[0]);
  if (head != 0x81 && head != 0x7f) return std::nullopt;
  d.neg = head == 0x7f;
  std::string body(k.substr(1));
  if (d.neg)
    for (char& c : body) c = static_cast<char>(~static_cast<unsigned char>(c));
  if (body.back() != '\0') return std::nullopt;
  uint64_t e = 0;
  for (int i = 0; i < 8; ++i) e = (e << 8) | static_cast<unsigned char>(body[i]);
  d.exp = static_cast<int64_t>(e ^ (uint64_t{1} << 63));
  d.digits = body.substr(8, body.size() - 9);
  for (char c : d.digits)
    if (c < '0' || c > '9') return std::nullopt;
  if (d.digits.empty() || d.digits[0] == '0' || d.digits.back() == '0') return std::nullopt;
  return d;
}

// Prints an integer ("-120") or, with `integer` false, a decimal: plain notation
// ("0.015", "1.5", "150") for exponents in [-6, 40], else scientific ("1.5E+60").
inline std::string Format(const Decimal& d, bool integer) {
  if (d.digits.empty()) return "0";
  std::string out = d.neg ? "-" : "";
  const int64_t n = static_cast<int64_t>(d.digits.size());
  if (integer && d.exp >= n)
    return out + d.digits + std::string(static_cast<size_t>(d.exp - n), '0');
  if (d.exp >= -6 && d.exp <= 40) {
    if (d.exp <= 0) return out + "0." + std::string(static_cast<size_t>(-d.exp), '0') + d.digits;
    if (d.exp >= n) return out + d.digits + std::string(static_cast<size_t>(d.exp - n), '0');
    return out + d.digits.substr(0, static_cast<size_t>(d.exp)) + "." +
           d.digits.substr(static_cast<size_t>(d.exp));
  }
  out += d.digits.substr(0, 1);
  if (n > 1) out += "." + d.digits.substr(1);
  int64_t e = d.exp - 1;
  return out + "E" + (e < 0 ? "-" : "+") + std::to_string(e < 0 ? -e : e);
}

// a + b exactly; nullopt when their last digits lie more than 100,000 places apart
// (the sum would need that many digits).
inline std::optional<Decimal> Add(const Decimal& a, const Decimal& b) {
  if (a.digits.empty()) return b;
  if (b.digits.empty()) return a;
  // Each value as an integer DIGITS * 10^scale, aligned at the smaller scale.
  int64_t sa = a.exp - static_cast<int64_t>(a.digits.size());
  int64_t sb = b.exp - static_cast<int64_t>(b.digits.size());
  int64_t m = sa < sb ? sa : sb;
  if (sa - m > 100000 || sb - m > 100000) return std::nullopt;
  std::string x = a.digits + std::string(static_cast<size_t>(sa - m), '0');
  std::string y = b.digits + std::string(static_cast<size_t>(sb - m), '0');
  auto less = [](const std::string& p, const std::string& q) {
    return p.size() != q.size() ? p.size() < q.size() : p < q;
  };
  bool neg = a.neg;
  std::string r;
  if (a.neg == b.neg) {
    int carry = 0;
    for (size_t i = 0; i < x.size() || i < y.size() || carry; ++i) {
      int d = carry + (i < x.size() ? x[x.size() - 1 - i] - '0' : 0) +
              (i < y.size() ? y[y.size() - 1 - i] - '0' : 0);
      r.push_back(static_cast<char>('0' + d % 10));
      carry = d / 10;
    }
  } else {
    if (less(x, y)) {
      std::swap(x, y);
      neg = b.neg;
    }
    int borrow = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      int d = (x[x.size() - 1 - i] - '0') - borrow - (i < y.size() ? y[y.size() - 1 - i] - '0' : 0);
      borrow = d < 0;
      r.push_back(static_cast<char>('0' + (d + 10) % 10));
    }
  }
  std::string text(r.rbegin(), r.rend());
  Decimal out = Parse(text);
  if (!out.digits.empty()) {
    out.neg = neg;
    out.exp += m;
  }
  return out;
}

}  // namespace mentat::decimal
