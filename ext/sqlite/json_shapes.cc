#include "json_shapes.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include "util/utf8.h"

namespace mentat::sqlite_ext {

namespace {

// edn::FormatInstant prints 3 fraction digits when the microseconds are whole
// milliseconds, else 6; returns the text before the '.', and the fraction digits.
void SplitInstant(int64_t micros, std::string* head, std::string* frac) {
  std::string s = edn::FormatInstant(micros);
  size_t dot = s.rfind('.');
  size_t z = s.rfind('Z');
  if (dot == std::string::npos || z == std::string::npos || z < dot) {
    *head = s;
    frac->clear();
    return;
  }
  *head = s.substr(0, dot);
  *frac = s.substr(dot + 1, z - dot - 1);
}

void String(std::string_view s, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out->append("\\\"");
        ++i;
        continue;
      case '\\':
        out->append("\\\\");
        ++i;
        continue;
      case '\n':
        out->append("\\n");
        ++i;
        continue;
      case '\r':
        out->append("\\r");
        ++i;
        continue;
      case '\t':
        out->append("\\t");
        ++i;
        continue;
      case '\b':
        out->append("\\b");
        ++i;
        continue;
      case '\f':
        out->append("\\f");
        ++i;
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
      ++i;
      continue;
    }
    char32_t cp;
    size_t n = utf8::Decode(s.substr(i), &cp);
    if (n == 0) {
      out->append("\xef\xbf\xbd");  // U+FFFD
      ++i;
      continue;
    }
    out->append(s.substr(i, n));
    i += n;
  }
  out->push_back('"');
}

void Double(double d, std::string* out) {
  if (!std::isfinite(d)) {
    out->append("null");
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view t(buf, static_cast<size_t>(r.ptr - buf));
  out->append(t);
  // Keep it a float for JSON readers that distinguish (1.0, not 1).
  if (t.find_first_of(".e") == std::string_view::npos) out->append(".0");
}

enum class Encoding { kQuery, kPull };

void Value(const edn::Value& v, Encoding enc, std::string* out);

void Map(const edn::Value& m, Encoding enc, std::string* out,
         std::optional<Entid> id = std::nullopt) {
  std::vector<std::pair<std::string, const edn::Value*>> entries;
  entries.reserve(m.size() + 1);
  for (const auto& [k, x] : m.entries())
    entries.emplace_back(k.is_string() ? k.str() : edn::Print(k), &x);
  edn::Value id_value;
  if (id) {
    bool has = std::any_of(entries.begin(), entries.end(),
                           [](const auto& e) { return e.first == ":db/id"; });
    if (!has) {
      id_value = edn::Value::Int(*id);
      entries.emplace_back(":db/id", &id_value);
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out->push_back('{');
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) out->push_back(',');
    String(entries[i].first, out);
    out->push_back(':');
    Value(*entries[i].second, enc, out);
  }
  out->push_back('}');
}

void Value(const edn::Value& v, Encoding enc, std::string* out) {
  switch (v.kind()) {
    case edn::Kind::kNil:
      out->append("null");
      return;
    case edn::Kind::kBool:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case edn::Kind::kInt:
      out->append(std::to_string(v.as_int()));
      return;
    case edn::Kind::kFloat:
      Double(v.as_double(), out);
      return;
    case edn::Kind::kBigInt:
    case edn::Kind::kBigDec:
    case edn::Kind::kString:
    case edn::Kind::kSymbol:
    case edn::Kind::kUri:
      String(v.str(), out);
      return;
    case edn::Kind::kChar: {
      std::string s = edn::Print(v);  // "\c"
      String(s.size() > 1 ? std::string_view(s).substr(1) : std::string_view(s), out);
      return;
    }
    case edn::Kind::kKeyword:
      String(":" + v.str(), out);
      return;
    case edn::Kind::kInst:
      if (enc == Encoding::kPull) {
        out->append(std::to_string(v.as_inst_micros()));
      } else {
        String(IsoMicros(v.as_inst_micros()), out);
      }
      return;
    case edn::Kind::kUuid:
      String(edn::FormatUuid(v.as_uuid()), out);
      return;
    case edn::Kind::kBytes: {
      static const char* kHex = "0123456789abcdef";
      out->push_back('"');
      for (unsigned char c : v.str()) {
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
      }
      out->push_back('"');
      return;
    }
    case edn::Kind::kList:
    case edn::Kind::kVector:
    case edn::Kind::kSet: {
      out->push_back('[');
      bool first = true;
      for (const auto& x : v.items()) {
        if (!first) out->push_back(',');
        first = false;
        Value(x, enc, out);
      }
      out->push_back(']');
      return;
    }
    case edn::Kind::kMap:
      Map(v, Encoding::kPull, out);  // a pulled map, in a query result or not
      return;
  }
  out->append("null");
}

}  // namespace

std::string Rfc3339(int64_t micros) {
  std::string head, frac;
  SplitInstant(micros, &head, &frac);
  int64_t sub = micros % 1000000;
  if (sub < 0) sub += 1000000;
  if (sub == 0) return head + "+00:00";
  return head + "." + frac + "+00:00";
}

std::string IsoMicros(int64_t micros) {
  std::string head, frac;
  SplitInstant(micros, &head, &frac);
  while (frac.size() < 6) frac += '0';
  return head + "." + frac + "Z";
}

bool IsAggregateColumn(const std::string& column) {
  return column.size() > 1 && column[0] == '(' && column.rfind("(pull ", 0) != 0 &&
         column.rfind("(the ", 0) != 0;
}

std::string TxReportJson(const TxReport& report) {
  std::string out = "{\"tempids\":{";
  bool first = true;
  for (const auto& [k, id] : report.tempids) {  // std::map: sorted
    if (!first) out.push_back(',');
    first = false;
    String(k, &out);
    out.push_back(':');
    out.append(std::to_string(id));
  }
  out.append("},\"tx_id\":").append(std::to_string(report.tx_id));
  out.append(",\"tx_instant\":");
  String(Rfc3339(report.tx_instant), &out);
  out.push_back('}');
  return out;
}

std::string QueryValueJson(const edn::Value& v) {
  std::string out;
  Value(v, Encoding::kQuery, &out);
  return out;
}

std::string PullJson(const edn::Value& pulled, std::optional<Entid> id) {
  std::string out;
  Map(pulled.is_map() ? pulled : edn::Value::Map({}), Encoding::kPull, &out, id);
  return out;
}

std::string QueryResultJson(const QueryResult& r) {
  std::string out;
  auto row = [&](const std::vector<edn::Value>& cells) {
    if (r.map_keys.empty()) {
      out.push_back('[');
      for (size_t i = 0; i < cells.size(); ++i) {
        if (i) out.push_back(',');
        Value(cells[i], Encoding::kQuery, &out);
      }
      out.push_back(']');
      return;
    }
    edn::MapEntries m;
    for (size_t i = 0; i < cells.size() && i < r.map_keys.size(); ++i)
      m.emplace_back(r.map_keys[i], cells[i]);
    // Return maps print their keys as EDN too; values keep the query encoding.
    std::vector<std::pair<std::string, const edn::Value*>> entries;
    for (size_t i = 0; i < m.size(); ++i)
      entries.emplace_back(m[i].first.is_string() ? m[i].first.str() : edn::Print(m[i].first),
                           &m[i].second);
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out.push_back('{');
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i) out.push_back(',');
      String(entries[i].first, &out);
      out.push_back(':');
      Value(*entries[i].second, Encoding::kQuery, &out);
    }
    out.push_back('}');
  };
  auto rows = [&]() {
    out.push_back('[');
    for (size_t i = 0; i < r.rows.size(); ++i) {
      if (i) out.push_back(',');
      row(r.rows[i]);
    }
    out.push_back(']');
  };
  switch (r.shape) {
    case QueryResult::Shape::kRelation: {
      if (r.columns.size() == 1 && IsAggregateColumn(r.columns[0]) && r.rows.size() == 1 &&
          r.map_keys.empty() && !r.rows[0].empty()) {
        out.append("{\"result\":");
        Value(r.rows[0][0], Encoding::kQuery, &out);
        out.push_back('}');
        return out;
      }
      out.append("{\"columns\":[");
      for (size_t i = 0; i < r.columns.size(); ++i) {
        if (i) out.push_back(',');
        String(r.columns[i], &out);
      }
      out.append("],\"result\":");
      size_t start = out.size();
      rows();
      std::string copy = out.substr(start);
      out.append(",\"results\":").append(copy).push_back('}');
      return out;
    }
    case QueryResult::Shape::kCollection:
      out.append("{\"result\":[");
      for (size_t i = 0; i < r.rows.size(); ++i) {
        if (i) out.push_back(',');
        if (r.rows[i].empty()) {
          out.append("null");
        } else {
          Value(r.rows[i][0], Encoding::kQuery, &out);
        }
      }
      out.append("]}");
      return out;
    case QueryResult::Shape::kTuple:
      out.append("{\"result\":");
      if (r.rows.empty()) {
        out.append("null");
      } else {
        row(r.rows[0]);
      }
      out.push_back('}');
      return out;
    case QueryResult::Shape::kScalar:
      out.append("{\"result\":");
      if (r.rows.empty() || r.rows[0].empty()) {
        out.append("null");
      } else {
        Value(r.rows[0][0], Encoding::kQuery, &out);
      }
      out.push_back('}');
      return out;
  }
  return "null";
}

}  // namespace mentat::sqlite_ext
