// Text forms of mentat results for the DuckDB functions (no DuckDB types here).
#pragma once

#include <string>

#include "mentat/edn.h"
#include "mentat/store.h"

namespace mentat::duckdb_ext {

// edn_t's result: {"tx_id":N,"tx_instant":"2025-01-01T00:00:00.000Z","tempids":{"a":N}}.
std::string TxReportJson(const TxReport& report);

// JSON text of any value (util/json_edn.h mapping: keywords ":ns/name", instants RFC
// 3339, uuids canonical, bytes hex, collections arrays, maps objects).
std::string ValueJson(const edn::Value& v);

// The text of a value in a VARCHAR column: strings as they are, keywords ":ns/name",
// every other value as JSON text.
std::string CellText(const edn::Value& v);

}  // namespace mentat::duckdb_ext
