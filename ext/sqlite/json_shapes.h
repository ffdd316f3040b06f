// The JSON the functions return, shaped as the Rust mentat's SQLite extension shapes it
// (its README: pg_mentat's formats), so that its users can switch.
//
//   edn_t {"tempids":{"a":65536},"tx_id":268435457,"tx_instant":"2024-05-01T10:00:00.123+00:00"}
//   edn_q     relation  {"columns":["?e","?n"],"result":[[65536,"Alice"]],"results":[...]}
//             a lone aggregate with one row  {"result":3}
//             collection {"result":[...]}, tuple {"result":[a,b]} or {"result":null},
//             scalar {"result":v} or {"result":null}
//   edn_pull  {":db/id":65536,":person/name":"Alice",":person/friend":{":db/id":65537}}
//
// Values in query results: refs and longs are numbers, keywords ":ns/name" strings,
// instants "YYYY-MM-DDTHH:MM:SS.ffffffZ", uuids hyphenated strings, bytes hex strings, a
// (pull ...) element a nested object. Values in pulled maps are the same except that
// instants are microseconds since the epoch. Object keys are sorted (as serde_json's
// maps are); map keys that are not strings print as EDN (":person/name"). Text is
// written directly, without a JSON document in between; invalid UTF-8 in strings becomes
// U+FFFD.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "mentat/edn.h"
#include "mentat/store.h"

namespace mentat::sqlite_ext {

// RFC 3339 as chrono's to_rfc3339 prints UTC: no fraction, or 3 or 6 digits, "+00:00".
std::string Rfc3339(int64_t micros);
// ISO 8601 with 6 fraction digits and "Z" (query results).
std::string IsoMicros(int64_t micros);

// A find element that is an aggregate ("(count ?e)"), as opposed to a variable, a pull
// or (the ?x).
bool IsAggregateColumn(const std::string& column);

std::string TxReportJson(const TxReport& report);
std::string QueryResultJson(const QueryResult& result);
// `v` in the query-result encoding.
std::string QueryValueJson(const edn::Value& v);
// A pulled map (nil: none) in the pull encoding, with ":db/id" set to `id` when it has
// none.
std::string PullJson(const edn::Value& pulled, std::optional<Entid> id);

}  // namespace mentat::sqlite_ext
