#include "output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "edn/json_edn.h"

namespace mentat::cli {

const char* const kFormatNames = "table, edn, json, jsonl, csv, markdown or line";

bool ParseFormat(std::string_view name, Format* out) {
  if (name == "jsonl") {
    *out = Format::kJsonl;
  } else if (name == "markdown" || name == "md") {
    *out = Format::kMarkdown;
  } else if (name == "line") {
    *out = Format::kLine;
  } else if (name == "edn") {
    *out = Format::kEdn;
  } else if (name == "json") {
    *out = Format::kJson;
  } else if (name == "table") {
    *out = Format::kTable;
  } else if (name == "csv") {
    *out = Format::kCsv;
  } else {
    return false;
  }
  return true;
}

const char* FormatName(Format f) {
  switch (f) {
    case Format::kEdn:
      return "edn";
    case Format::kJson:
      return "json";
    case Format::kTable:
      return "table";
    case Format::kCsv:
      return "csv";
    case Format::kJsonl:
      return "jsonl";
    case Format::kMarkdown:
      return "markdown";
    case Format::kLine:
      return "line";
  }
  return "edn";
}

bool ColorWanted(int fd) {
  if (!isatty(fd)) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

size_t TerminalWidth(int fd) {
  if (!isatty(fd)) return 0;
  struct winsize ws {};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return 80;
  return ws.ws_col;
}

const char* Bold(bool on) { return on ? "\033[1m" : ""; }
const char* Dim(bool on) { return on ? "\033[2m" : ""; }
const char* Red(bool on) { return on ? "\033[1;31m" : ""; }
const char* Reset(bool on) { return on ? "\033[0m" : ""; }

std::string CellText(const edn::Value& v) {
  if (v.is_string()) return v.str();
  return edn::Print(v);
}

size_t DisplayWidth(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

namespace {

// A CSV cell: as the table's, but instants, uuids and bytes without their EDN tag
// (2024-01-31T10:00:00.000Z, 4f1c..., hex), as JSON writes them and .import reads them.
std::string CsvCellText(const edn::Value& v) {
  if (v.kind() == edn::Kind::kInst || v.kind() == edn::Kind::kUuid ||
      v.kind() == edn::Kind::kBytes || v.kind() == edn::Kind::kUri) {
    std::string text = edn::Print(v);
    size_t open = text.find('"'), close = text.rfind('"');
    if (open != std::string::npos && close > open) return text.substr(open + 1, close - open - 1);
    return text;
  }
  return CellText(v);
}

std::string CsvEscape(const std::string& s) {
  bool quote = s.find_first_of(",\"\n\r") != std::string::npos ||
               (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A cell on one line: control characters shown as escapes so columns stay aligned.
std::string OneLine(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Truncate(const std::string& s, size_t max) {
  if (max == 0 || DisplayWidth(s) <= max) return s;
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

void PrintTable(std::ostream& out, const OutputStyle& style,
                const std::vector<std::string>& headers,
                const std::vector<std::vector<edn::Value>>& rows) {
  const bool color = style.color;
  size_t n = headers.size();
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width(n);
  for (size_t i = 0; i < n; ++i) width[i] = DisplayWidth(headers[i]);
  cells.reserve(rows.size());
  for (const auto& row : rows) {
    std::vector<std::string> line(n);
    for (size_t i = 0; i < row.size() && i < n; ++i) {
      if (row[i].is_nil()) continue;  // empty, as SQL shells show NULL
      line[i] = Truncate(OneLine(CellText(row[i])), style.max_cell);
      width[i] = std::max(width[i], DisplayWidth(line[i]));
    }
    cells.push_back(std::move(line));
  }
  // Shrink the widest columns until the table fits the terminal.
  if (style.max_width > 0 && n > 0) {
    auto total = [&] {
      size_t t = 3 * (n - 1);
      for (size_t w : width) t += w;
      return t;
    };
    while (total() > style.max_width) {
      auto widest = std::max_element(width.begin(), width.end());
      if (*widest <= 8) break;
      --*widest;
    }
    for (auto& line : cells)
      for (size_t i = 0; i < n; ++i) line[i] = Truncate(line[i], width[i]);
  }
  auto pad = [](const std::string& s, size_t w) {
    size_t d = DisplayWidth(s);
    return d >= w ? std::string() : std::string(w - d, ' ');
  };
  for (size_t i = 0; i < n; ++i) {
    std::string h = Truncate(headers[i], width[i]);
    out << (i ? " | " : "") << Bold(color) << h << Reset(color)
        << (i + 1 < n ? pad(h, width[i]) : "");
  }
  out << "\n";
  for (size_t i = 0; i < n; ++i) out << (i ? "-+-" : "") << std::string(width[i], '-');
  out << "\n";
  for (size_t r = 0; r < cells.size(); ++r) {
    std::string line;
    for (size_t i = 0; i < n; ++i) {
      line += i ? " | " : "";
      line += cells[r][i];
      if (i + 1 < n) line += pad(cells[r][i], width[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << Dim(color) << "(" << rows.size() << (rows.size() == 1 ? " row)" : " rows)") << Reset(color)
      << "\n";
}

template <typename Json>
std::string JsonText(const Json& j) {
  // Strings that are not UTF-8 (stored before transactions refused them) print with
  // U+FFFD in place of the bad bytes instead of aborting the output.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A row as a JSON object keyed by the headers, in column order.
nlohmann::ordered_json RowObject(const std::vector<std::string>& headers,
                                 const std::vector<edn::Value>& row) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (size_t i = 0; i < row.size() && i < headers.size(); ++i)
    o[JsonKey(headers[i])] = EdnToJson(row[i]);
  return o;
}

// A Markdown cell: one line, with '|' escaped.
std::string MarkdownCell(const std::string& s) {
  std::string out;
  for (char c : OneLine(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void PrintMarkdown(std::ostream& out, const OutputStyle& style,
                   const std::vector<std::string>& headers,
                   const std::vector<std::vector<edn::Value>>& rows) {
  out << "|";
  for (const auto& h : headers) out << " " << MarkdownCell(h) << " |";
  out << "\n|";
  for (size_t i = 0; i < headers.size(); ++i) out << "---|";
  out << "\n";
  for (const auto& row : rows) {
    out << "|";
    for (size_t i = 0; i < headers.size(); ++i) {
      std::string cell = i < row.size() && !row[i].is_nil() ? CellText(row[i]) : "";
      out << " " << MarkdownCell(Truncate(cell, style.max_cell)) << " |";
    }
    out << "\n";
  }
}

void PrintLines(std::ostream& out, const OutputStyle& style,
                const std::vector<std::string>& headers,
                const std::vector<std::vector<edn::Value>>& rows) {
  size_t w = 0;
  for (const auto& h : headers) w = std::max(w, DisplayWidth(h));
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r) out << "\n";
    for (size_t i = 0; i < headers.size(); ++i) {
      std::string cell = i < rows[r].size() && !rows[r][i].is_nil() ? CellText(rows[r][i]) : "";
      out << std::string(w - DisplayWidth(headers[i]), ' ') << Bold(style.color) << headers[i]
          << Reset(style.color) << " = " << Truncate(cell, style.max_cell) << "\n";
    }
  }
}

}  // namespace

std::string JsonKey(const std::string& header) {
  if (!header.empty() && (header[0] == '?' || header[0] == ':')) return header.substr(1);
  return header;
}

void PrintValue(std::ostream& out, const OutputStyle& style, const edn::Value& v) {
  if (style.format == Format::kJsonl) {
    // A collection a line at a time; anything else on one line.
    if (v.is_vector() || v.is_list() || v.is_set()) {
      for (const auto& x : v.items()) out << JsonText(EdnToJson(x)) << "\n";
    } else {
      out << JsonText(EdnToJson(v)) << "\n";
    }
    return;
  }
  if (style.format == Format::kJson) {
    out << JsonText(EdnToJson(v)) << "\n";
  } else {
    out << edn::Print(v) << "\n";
  }
}

void PrintRows(std::ostream& out, const OutputStyle& style, const std::vector<std::string>& headers,
               const std::vector<std::vector<edn::Value>>& rows, const edn::Value& whole) {
  switch (style.format) {
    case Format::kEdn:
    case Format::kJson:
      PrintValue(out, style, whole);
      return;
    case Format::kCsv:
      for (size_t i = 0; i < headers.size(); ++i) out << (i ? "," : "") << CsvEscape(headers[i]);
      out << "\n";
      for (const auto& row : rows) {
        for (size_t i = 0; i < row.size(); ++i)
          out << (i ? "," : "") << (row[i].is_nil() ? "" : CsvEscape(CsvCellText(row[i])));
        out << "\n";
      }
      return;
    case Format::kTable:
      PrintTable(out, style, headers, rows);
      return;
    case Format::kJsonl:
      for (const auto& row : rows) out << JsonText(RowObject(headers, row)) << "\n";
      return;
    case Format::kMarkdown:
      PrintMarkdown(out, style, headers, rows);
      return;
    case Format::kLine:
      PrintLines(out, style, headers, rows);
      return;
  }
}

void PrintMap(std::ostream& out, const OutputStyle& style, const edn::Value& map) {
  if (!map.is_map() || style.format == Format::kEdn || style.format == Format::kJson) {
    PrintValue(out, style, map);
    return;
  }
  std::vector<std::vector<edn::Value>> rows;
  for (const auto& [k, v] : map.entries()) rows.push_back({k, v});
  PrintRows(out, style, {"attribute", "value"}, rows, map);
}

void PrintQueryResult(std::ostream& out, const OutputStyle& style, const QueryResult& r) {
  using Shape = QueryResult::Shape;
  const bool rows_as_objects = r.shape == Shape::kRelation || r.shape == Shape::kTuple;
  if (style.format == Format::kEdn || (style.format == Format::kJson && !rows_as_objects) ||
      (style.format == Format::kJsonl && !rows_as_objects)) {
    PrintValue(out, style, r.ToEdn());
    return;
  }
  std::vector<std::string> headers = r.columns;
  if (!r.map_keys.empty()) {
    headers.clear();
    for (const auto& k : r.map_keys) {
      std::string h = CellText(k);
      if (k.is_keyword() && !h.empty() && h[0] == ':') h.erase(0, 1);
      headers.push_back(h);
    }
  }
  if (style.format == Format::kJson) {
    // A relation as an array of objects keyed by column name; a tuple as one object (or
    // null when there is no result).
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const auto& row : r.rows) j.push_back(RowObject(headers, row));
    if (r.shape == Shape::kTuple) j = r.rows.empty() ? nlohmann::ordered_json() : j[0];
    out << JsonText(j) << "\n";
    return;
  }
  PrintRows(out, style, headers, r.rows, edn::Value());
}

}  // namespace mentat::cli
