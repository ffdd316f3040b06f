// A small DuckDB host for tests and benchmarks: loads libduckdb.so with dlopen, opens a
// database with unsigned extensions allowed, and runs SQL through DuckDB's C API.
//
//   auto db = DuckHost::Open();                  // default libduckdb, in-memory database
//   auto con = (*db)->Connect();
//   auto r = (*con)->Query("LOAD '" + DefaultExtensionPath() + "'");
//
// Values come back as text, formatted as DuckDB prints them (integers, DOUBLE with
// ".0" on whole numbers, "YYYY-MM-DD HH:MM:SS[.f]" timestamps, canonical UUIDs, BLOBs
// with \xHH escapes; other types as "<TYPE>": CAST them in SQL), with each column's
// DuckDB type name, so tests can assert both. Results are read chunk by chunk through
// the C API (duckdb_fetch_chunk), never through its deprecated value accessors. Thread safety: a
// DuckHost may be shared; each thread uses its own Connection.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/status.h"

namespace mentat::duckdb_host {

struct QueryOutput {
  std::vector<std::string> names;
  std::vector<std::string> types;                             // "BIGINT", "VARCHAR", ...
  std::vector<std::vector<std::optional<std::string>>> rows;  // nullopt for NULL

  // The value at (row, col) or "NULL"; "" when out of range.
  std::string Cell(size_t row, size_t col) const;
};

struct Api;  // the resolved C API functions

class Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  // Runs one or more statements; the output of the last. A DuckDB error becomes
  // kInvalidArgument with DuckDB's message.
  Result<QueryOutput> Query(const std::string& sql);

 private:
  friend class DuckHost;
  Connection(const Api* api, void* con) : api_(api), con_(con) {}
  const Api* api_;
  void* con_;  // duckdb_connection
};

class DuckHost {
 public:
  // `library`: path of libduckdb.so ("" for DefaultLibraryPath()); `db_path`: a DuckDB
  // database file ("" for in-memory). The library stays loaded for the process.
  static Result<std::unique_ptr<DuckHost>> Open(const std::string& library = "",
                                                const std::string& db_path = "");
  ~DuckHost();
  DuckHost(const DuckHost&) = delete;
  DuckHost& operator=(const DuckHost&) = delete;

  Result<std::unique_ptr<Connection>> Connect();
  // DuckDB's version, e.g. "v1.4.4".
  std::string version() const;

 private:
  DuckHost(const Api* api, void* db) : api_(api), db_(db) {}
  const Api* api_;
  void* db_;  // duckdb_database
};

// $MENTAT_DUCKDB_LIBRARY, else the libduckdb.so this build was configured with.
std::string DefaultLibraryPath();
// $MENTAT_DUCKDB_EXTENSION, else build/mentat.duckdb_extension.
std::string DefaultExtensionPath();
// `s` as a SQL string literal: 'it''s'.
std::string Quote(std::string_view s);

}  // namespace mentat::duckdb_host
