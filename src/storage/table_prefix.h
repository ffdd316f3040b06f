// mentat's table names under a prefix (doc/format.md "Host mode"). The SQLite extension's
// host mode keeps a store in the application's own database; there mentat's tables,
// indexes and views are named `mentat_datoms`, `mentat_meta`, ... so that they are easy to
// tell from the application's and cannot clash with them. The store, the transactor, pull,
// the views and the query compiler write every statement once with the plain names; a
// connection with a prefix (Connection::set_table_prefix) passes each statement through
// PrefixTables when it prepares it.
#pragma once

#include <string>
#include <string_view>

namespace mentat::storage {

// The prefix of host mode's layout.
inline constexpr std::string_view kHostTablePrefix = "mentat_";

// True when `name` (case-insensitively) is one of mentat's schema object names: its
// tables, indexes and the full-text view (format.cc).
bool IsStoreObjectName(std::string_view name);

// `sql` with every identifier that is one of mentat's schema object names written as
// `prefix` + name: bare, "double-quoted", [bracketed] or `backquoted` identifiers, and a
// 'string literal' whose whole text is such a name (FTS5's content='fulltext_docs', a
// lookup in sqlite_master). Comments and other literals are copied as they are. Every name
// is renamed wherever it stands (a column named `datoms` too: attr_stats.datoms becomes
// mentat_datoms), which keeps each statement consistent with the tables it created.
std::string PrefixTables(std::string_view sql, std::string_view prefix);

}  // namespace mentat::storage
