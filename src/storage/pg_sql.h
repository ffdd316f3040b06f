// mentat's SQL, written for SQLite, spelled for PostgreSQL (doc/postgres.md "One text of
// SQL"). The store, the transactor, pull and the views write each statement once, in
// SQLite's dialect; a statement for a PostgreSQL connection passes through PgSql when it is
// prepared (once per connection). What is rewritten is a short fixed list, each a spelling
// with the same meaning on mentat's tables:
//
// - `x IS NOT 0` / `x IS NOT 1` (the partial attribute indexes' terms) become
//   `x IS DISTINCT FROM 0` / `... 1`, the words the PostgreSQL partial indexes are declared
//   with, so that they match;
// - `INSERT OR IGNORE INTO t ...` becomes `INSERT INTO t ... ON CONFLICT DO NOTHING`, and
//   `INSERT OR REPLACE INTO t (cols) ...` an upsert on t's key (PgTableKey) that sets the
//   other columns named;
// - `typeof(x)` becomes `mentat_typeof(x)` (format_pg.cc), which names SQLite's storage
//   classes; `LIMIT -1` becomes `LIMIT ALL`; a subquery in FROM without an alias gets one;
// - `SELECT value FROM json_each(P)` (a JSON array of entity ids) reads the array's
//   elements as bigint;
// - `INDEXED BY name` (an index hint) is dropped: PostgreSQL's planner has no hints.
//
// Placeholders (`?N`) are PostgreSQL's job (pg::PgPlaceholders). Anything else SQLite-only
// reaching PostgreSQL fails there, with PostgreSQL's message: a place to add a spelling.
#pragma once

#include <string>
#include <string_view>

namespace mentat::storage {

std::string PgSql(std::string_view sql);

// The key columns of a mentat table in PostgreSQL (its unique index's, as ON CONFLICT
// names them), or "" for a table without one.
std::string_view PgTableKey(std::string_view table);

// A store's PostgreSQL name split into what libpq takes and the schema the store's tables
// live in: the `schema` parameter of a URI (`postgresql://h/db?schema=s`) or keyword string
// (`host=h dbname=db schema=s`), removed from the connection string; "mentat" without one.
struct PgName {
  std::string conninfo;
  std::string schema;
};
PgName SplitPgName(std::string_view name);

}  // namespace mentat::storage
