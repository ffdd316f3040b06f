// Text forms of mentat results for the DuckDB functions (no DuckDB types here).
//
// The JSON shapes follow the Rust mentat's extensions (pg_mentat's formats), as the
// SQLite extension does, so results read the same from either host:
//   edn_t     {"tx_id":268435457,"tx_instant":"2024-05-01T10:00:00.123+00:00",
//              "tempids":{"a":65536}}   (instant as chrono's to_rfc3339 prints UTC)
//   edn_pull  {":db/id":65536,":person/name":"Alice",":person/friend":{":db/id":65537}}
//             (keywords ":ns/name", instants microseconds since the epoch, uuids
//             hyphenated, bytes hex)
//   edn_q     JSON cells: as pull, except instants "YYYY-MM-DDTHH:MM:SS.ffffffZ"
#pragma once

#include <cstdint>
#include <string>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/store.h"

namespace mentat::duckdb_ext {

// RFC 3339 in UTC as chrono's to_rfc3339: no fraction, or 3 or 6 digits, "+00:00".
std::string Rfc3339(int64_t micros);

std::string TxReportJson(const TxReport& report);
// The report as EDN ({:tx-id :tx-instant :tempids :tx-data}, attributes as idents).
std::string TxReportEdn(const TxReport& report, const Schema* schema);

std::string PullJson(const edn::Value& pulled);

// A value in an edn_q JSON column.
std::string QueryCellJson(const edn::Value& v);

// A value in an edn_q VARCHAR column typed string or keyword: strings as they are,
// keywords ":ns/name" (anything else as QueryCellJson).
std::string CellText(const edn::Value& v);

}  // namespace mentat::duckdb_ext
