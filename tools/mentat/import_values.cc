#include "import_values.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace mentat::cli {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

bool ParseLong(const std::string& s, int64_t* out) {
  const char* b = s.data();
  if (!s.empty() && s[0] == '+') ++b;
  auto [p, ec] = std::from_chars(b, s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

Result<edn::Value> EntityRef(const std::string& cell) {
  int64_t n = 0;
  if (ParseLong(cell, &n)) return edn::Value::Int(n);
  if (cell[0] == ':') return edn::Value::Keyword(cell.substr(1));
  if (cell[0] == '[') {
    MENTAT_ASSIGN_OR_RETURN(edn::Value v, edn::Read(cell));
    if (!v.is_vector() || v.size() != 2)
      return Status::InvalidArgument("expected a lookup ref [:attr value], got " + cell);
    return v;
  }
  return edn::Value::String(cell);  // a tempid
}

Result<edn::Value> TypedCell(const Attribute& attr, const std::string& cell) {
  auto bad = [&](const char* what) {
    return Status::InvalidArgument("expected " + std::string(what) + ", got \"" + cell + "\"");
  };
  if (attr.type != ValueType::kString && cell[0] == '#') {  // a tagged EDN literal
    auto v = edn::Read(cell);
    if (v.ok()) return *v;
  }
  switch (attr.type) {
    case ValueType::kString:
      return edn::Value::String(cell);
    case ValueType::kLong: {
      int64_t n = 0;
      if (!ParseLong(cell, &n)) return bad("a long");
      return edn::Value::Int(n);
    }
    case ValueType::kBigInt:
    case ValueType::kBigDec: {
      // The literal's text, with or without its suffix (123N, 1.50M).
      std::string text = cell;
      char suffix = attr.type == ValueType::kBigInt ? 'N' : 'M';
      if (!text.empty() && text.back() == suffix) text.pop_back();
      auto v = edn::Read(text + suffix);
      if (!v.ok() || (v->kind() != edn::Kind::kBigInt && v->kind() != edn::Kind::kBigDec))
        return bad(attr.type == ValueType::kBigInt ? "an integer" : "a decimal number");
      return *v;
    }
    case ValueType::kUri:
      return edn::Value::Uri(cell);
    case ValueType::kSymbol: {
      auto v = edn::Read(cell);
      if (!v.ok() || v->kind() != edn::Kind::kSymbol) return bad("a symbol");
      return *v;
    }
    case ValueType::kTuple: {
      auto v = edn::Read(cell);
      if (!v.ok() || !v->is_vector()) return bad("a tuple (an EDN vector such as [\"a\" 1])");
      return *v;
    }
    case ValueType::kFloat:
    case ValueType::kDouble: {
      char* end = nullptr;
      double d = std::strtod(cell.c_str(), &end);
      if (end != cell.c_str() + cell.size()) return bad("a double");
      return edn::Value::Float(d);
    }
    case ValueType::kBoolean: {
      std::string l = cell;
      std::transform(l.begin(), l.end(), l.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (l == "true" || l == "t" || l == "1" || l == "yes") return edn::Value::Bool(true);
      if (l == "false" || l == "f" || l == "0" || l == "no") return edn::Value::Bool(false);
      return bad("a boolean (true or false)");
    }
    case ValueType::kInstant: {
      auto t = edn::ParseInstant(cell);
      if (!t.ok()) return bad("an instant (RFC 3339, e.g. 2024-01-31T10:00:00Z)");
      return edn::Value::Inst(*t);
    }
    case ValueType::kUuid: {
      auto u = edn::ParseUuid(cell);
      if (!u.ok()) return bad("a uuid");
      return edn::Value::MakeUuid(*u);
    }
    case ValueType::kKeyword:
      return edn::Value::Keyword(cell[0] == ':' ? cell.substr(1) : cell);
    case ValueType::kRef:
      return EntityRef(cell);
    case ValueType::kBytes: {
      if (cell.size() % 2 != 0) return bad("hex bytes");
      std::string bytes;
      for (size_t i = 0; i < cell.size(); i += 2) {
        unsigned x = 0;
        auto [p, ec] = std::from_chars(cell.data() + i, cell.data() + i + 2, x, 16);
        if (ec != std::errc() || p != cell.data() + i + 2) return bad("hex bytes");
        bytes += static_cast<char>(x);
      }
      return edn::Value::Bytes(std::move(bytes));
    }
  }
  return bad("a value");
}

namespace {

std::string Plural(uint64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string Committed(const ImportStats& stats) {
  if (stats.transactions == 0) return "nothing";
  return Plural(stats.transactions, "transaction") + " (" + Plural(stats.datoms, "datom") + ")";
}

}  // namespace mentat::cli
