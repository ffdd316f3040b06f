// Printing results in the CLI's output formats.
//
// Formats for people: aligned tables (headers, truncated cells, a row count, colours on a
// terminal), Markdown tables, and `line` (one `column = value` line per cell, a blank line
// between rows, as sqlite3's .mode line, for wide rows). For other programs: EDN, JSON
// (a relation as an array of objects keyed by column name), JSON Lines (one JSON value a
// line: a row as an object) and CSV (complete values, no colours, no decoration). Every
// function writes whole lines ending in '\n'.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/edn.h"
#include "mentat/store.h"

namespace mentat::cli {

enum class Format { kEdn, kJson, kTable, kCsv, kJsonl, kMarkdown, kLine };

// The formats' names, for help and error messages: "table, edn, json, jsonl, csv,
// markdown or line".
extern const char* const kFormatNames;

// Parses "edn", "json", "jsonl", "table", "csv", "markdown" or "line" into `*out`; false
// (and `*out` untouched) otherwise.
bool ParseFormat(std::string_view name, Format* out);
const char* FormatName(Format f);

// How results are printed.
struct OutputStyle {
  Format format = Format::kEdn;
  bool color = false;    // ANSI colours; only on a terminal, never with NO_COLOR
  size_t max_cell = 60;  // table cells are truncated to this many characters ("…")
  size_t max_width = 0;  // tables shrink their widest columns to fit; 0: no limit
};

// True when colours may be used on `fd`: it is a terminal, NO_COLOR is unset or empty,
// and TERM is not "dumb".
bool ColorWanted(int fd);
// The width of the terminal on `fd` in columns, or 0 when it is not a terminal.
size_t TerminalWidth(int fd);

// ANSI sequences (empty strings when `on` is false).
const char* Bold(bool on);
const char* Dim(bool on);
const char* Red(bool on);
const char* Reset(bool on);

// The text of a table or CSV cell: strings without quotes, everything else as EDN.
std::string CellText(const edn::Value& v);
// Display width of UTF-8 text (code points).
size_t DisplayWidth(std::string_view s);

// One value (a transaction report, a summary): EDN text in the edn, table and csv
// formats, JSON in the json format.
void PrintValue(std::ostream& out, const OutputStyle& style, const edn::Value& v);
// Rows under headers: an aligned table with a row count, CSV with a header line, or
// `whole` (the same data as one EDN value) printed as EDN or JSON.
void PrintRows(std::ostream& out, const OutputStyle& style, const std::vector<std::string>& headers,
               const std::vector<std::vector<edn::Value>>& rows, const edn::Value& whole);
// A map (a pulled entity): `attribute | value` rows in table and CSV, else the value.
void PrintMap(std::ostream& out, const OutputStyle& style, const edn::Value& map);
// The key of column `header` in a JSON object: without a leading '?' or ':'.
std::string JsonKey(const std::string& header);
// A query result: headers named after the find elements (or the :keys of a map result).
void PrintQueryResult(std::ostream& out, const OutputStyle& style, const QueryResult& r);

}  // namespace mentat::cli
