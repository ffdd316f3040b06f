// Printing results in the CLI's output formats.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/store.h"

namespace mentat::cli {

enum class Format { kEdn, kJson, kTable, kCsv };

// Parses "edn", "json", "table" or "csv".
bool ParseFormat(std::string_view name, Format* out);
const char* FormatName(Format f);

// A single value (a tx report, a pulled map, a schema listing).
void PrintValue(std::ostream& out, Format f, const edn::Value& v);
// Rows under headers: aligned table (long cells truncated) with a row count, CSV with a
// header line, or EDN/JSON `edn_value` as a whole.
void PrintRows(std::ostream& out, Format f, const std::vector<std::string>& headers,
               const std::vector<std::vector<edn::Value>>& rows, const edn::Value& edn_value);
void PrintQueryResult(std::ostream& out, Format f, const QueryResult& r);

}  // namespace mentat::cli
