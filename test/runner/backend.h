// The data-driven runner's backends: each runs records against one surface of mentat
// (the library, the CLI, and later the SQLite and DuckDB extensions).
#pragma once

#include <memory>
#include <string>

#include "mentat/edn.h"
#include "mentat/status.h"

namespace mentat::testing {

class Backend {
 public:
  virtual ~Backend() = default;
  // Starts a fresh, empty store.
  virtual Status Reset() = 0;
  // The tx report as EDN ({:tx-id :tempids :tx-data ...}).
  virtual Result<edn::Value> Transact(const std::string& edn) = 0;
  virtual Result<edn::Value> Query(const std::string& query, const std::string& options_json) = 0;
  virtual Result<std::string> Explain(const std::string& query,
                                      const std::string& options_json) = 0;
  virtual Result<edn::Value> Pull(const std::string& pattern, const std::string& eid) = 0;
  // `args`: "INDEX COMPONENTS..."; result: vector of [e a v tx added].
  virtual Result<edn::Value> Datoms(const std::string& args) = 0;
  // The entity `eid` touched: {:db/id N attr value ...}.
  virtual Result<edn::Value> Entity(const std::string& eid) = 0;
};

std::unique_ptr<Backend> MakeLibraryBackend();
std::unique_ptr<Backend> MakeCliBackend(const std::string& mentat_binary);
// The library on PostgreSQL stores (`conninfo`: a database; a fresh schema per case).
std::unique_ptr<Backend> MakePgBackend(const std::string& conninfo);
// The SQLite extension (sqlite_backend.cc): `extension` is build/libmentat_sqlite.so;
// `host_mode` keeps the store in the host connection's own database (db_path NULL).
std::unique_ptr<Backend> MakeSqliteBackend(const std::string& extension, bool host_mode);

}  // namespace mentat::testing
