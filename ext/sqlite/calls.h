// What the SQL functions and the edn_rows table share: argument decoding, query options,
// and turning a Status (or an exception) into an SQL error.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mentat/edn.h"
#include "mentat/status.h"
#include "mentat/store.h"
#include "storage/sqlite_api.h"
#include "stores.h"

namespace mentat::sqlite_ext {

// The text of `v`, or std::nullopt for SQL NULL. Numbers are converted to text.
std::optional<std::string> TextArg(sqlite3_value* v);

// Query options from the JSON text of the `options` argument. SQL NULL, '', 'null' and
// '{}' mean none; anything else goes to mentat::options_from_json (unknown keys and wrong
// shapes are errors).
Result<QueryOptions> ParseQueryOptions(std::string_view query,
                                       const std::optional<std::string>& json);

// Runs `query` on the store named by `db_path`. std::nullopt when host mode finds no store
// in the host database (a read never creates one).
Result<std::optional<QueryResult>> RunQuery(HostContext* ctx,
                                            const std::optional<std::string>& db_path,
                                            const std::string& query,
                                            const std::optional<std::string>& options);

// Sets `value` as the result (or column value) of `c`, typed by its kind: nil NULL, bool
// and int INTEGER, float REAL, bytes BLOB, strings TEXT, keywords ":ns/name" TEXT,
// instants ISO 8601 TEXT, uuids TEXT, collections and maps (pull) JSON TEXT.
void ResultValue(sqlite3_context* c, const edn::Value& value);

// "fn: <code name>: <message>" as the SQL error of `c`; kBusy also sets SQLITE_BUSY.
void ResultStatus(sqlite3_context* c, const char* fn, const Status& st);

// The SQLite result code for `st` (SQLITE_BUSY, SQLITE_INTERRUPT, else SQLITE_ERROR).
int SqliteCode(const Status& st);

}  // namespace mentat::sqlite_ext
