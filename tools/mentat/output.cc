#include "output.h"

#include <algorithm>

#include "util/json_edn.h"

namespace mentat::cli {

bool ParseFormat(std::string_view name, Format* out) {
  if (name == "edn") *out = Format::kEdn;
  else if (name == "json") *out = Format::kJson;
  else if (name == "table") *out = Format::kTable;
  else if (name == "csv") *out = Format::kCsv;
  else return false;
  return true;
}

const char* FormatName(Format f) {
  switch (f) {
    case Format::kEdn: return "edn";
    case Format::kJson: return "json";
    case Format::kTable: return "table";
    case Format::kCsv: return "csv";
  }
  return "edn";
}

namespace {

// Text of a cell: strings without quotes, everything else as EDN.
std::string CellText(const edn::Value& v) {
  if (v.is_string()) return v.str();
  return edn::Print(v);
}

std::string CsvEscape(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Display width of UTF-8 text (code points; good enough for aligned columns).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string Truncate(const std::string& s, size_t max) {
  if (Width(s) <= max) return s;
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = s[i];
    if ((c & 0xC0) != 0x80) {
      if (n == max - 1) break;
      ++n;
    }
    out += s[i];
  }
  return out + "…";
}

}  // namespace

void PrintValue(std::ostream& out, Format f, const edn::Value& v) {
  if (f == Format::kJson) {
    out << EdnToJson(v).dump() << "\n";
  } else {
    out << edn::Print(v) << "\n";
  }
}

void PrintRows(std::ostream& out, Format f, const std::vector<std::string>& headers,
               const std::vector<std::vector<edn::Value>>& rows, const edn::Value& edn_value) {
  if (f == Format::kEdn || f == Format::kJson) {
    PrintValue(out, f, edn_value);
    return;
  }
  if (f == Format::kCsv) {
    for (size_t i = 0; i < headers.size(); ++i) out << (i ? "," : "") << CsvEscape(headers[i]);
    out << "\n";
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) out << (i ? "," : "") << CsvEscape(CellText(row[i]));
      out << "\n";
    }
    return;
  }
  constexpr size_t kMaxCell = 60;
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width(headers.size());
  for (size_t i = 0; i < headers.size(); ++i) width[i] = Width(headers[i]);
  for (const auto& row : rows) {
    std::vector<std::string> line;
    for (size_t i = 0; i < row.size() && i < headers.size(); ++i) {
      line.push_back(Truncate(CellText(row[i]), kMaxCell));
      width[i] = std::max(width[i], Width(line.back()));
    }
    cells.push_back(std::move(line));
  }
  auto rule = [&]() {
    for (size_t i = 0; i < width.size(); ++i) out << (i ? "-+-" : "") << std::string(width[i], '-');
    out << "\n";
  };
  auto line = [&](const std::vector<std::string>& l) {
    for (size_t i = 0; i < width.size(); ++i) {
      std::string s = i < l.size() ? l[i] : "";
      out << (i ? " | " : "") << s << std::string(width[i] - Width(s), ' ');
    }
    out << "\n";
  };
  line(headers);
  rule();
  for (const auto& l : cells) line(l);
  out << "(" << rows.size() << (rows.size() == 1 ? " row)" : " rows)") << "\n";
}

void PrintQueryResult(std::ostream& out, Format f, const QueryResult& r) {
  edn::Value v = r.ToEdn();
  if ((f == Format::kTable || f == Format::kCsv) &&
      (r.shape == QueryResult::Shape::kScalar) && r.rows.empty()) {
    PrintRows(out, f, r.columns, {}, v);
    return;
  }
  PrintRows(out, f, r.columns, r.rows, v);
}

}  // namespace mentat::cli
