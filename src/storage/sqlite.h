// RAII wrappers over SQLite connections and statements.
//
// A Connection owns one sqlite3* and a cache of prepared statements keyed by SQL text.
// A Connection is used by one thread at a time (callers lease it from the store's pool).
//
// The same Connection and Statement also drive a PostgreSQL connection (pg/connection.h;
// not in the SQLite extension's build): every call below that is not marked SQLite-only
// works on both, with SQLite's `?N` parameters and SQLite's storage classes
// (SQLITE_INTEGER ... SQLITE_NULL) for column types. A branch on the engine per call,
// always the same way for one connection, costs SQLite's path no virtual call.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mentat/status.h"
#include "storage/sqlite_api.h"

#ifndef MENTAT_SQLITE_EXTENSION
#define MENTAT_WITH_PG 1
#endif

namespace mentat::pg {
class Connection;
class Statement;
}  // namespace mentat::pg

namespace mentat::storage {

// Converts a SQLite result code (and the connection's message) into a Status.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

// Statement::Step and Statement::Run calls made by this thread so far: lets a caller tell
// whether some work ran any statement at all (StoreImpl::Read).
uint64_t ThreadSteps();

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  // Owns `pg`, a PostgreSQL statement.
  explicit Statement(std::unique_ptr<pg::Statement> pg);
  Statement(Statement&& o) noexcept;
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // SQLite-only: the statement (nullptr for PostgreSQL).
  sqlite3_stmt* get() const { return stmt_; }
  explicit operator bool() const { return stmt_ != nullptr || pg_ != nullptr; }
  bool is_pg() const { return pg_ != nullptr; }

  // Bind helpers; `i` is 1-based.
  void BindInt(int i, int64_t v) {
    if (pg_) return PgBindInt(i, v);
    sqlite3_bind_int64(stmt_, i, v);
  }
  void BindDouble(int i, double v) {
    if (pg_) return PgBindDouble(i, v);
    sqlite3_bind_double(stmt_, i, v);
  }
  void BindText(int i, std::string_view v) {
    if (pg_) return PgBindText(i, v);
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindBlob(int i, std::string_view v) {
    if (pg_) return PgBindBlob(i, v);
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int i) {
    if (pg_) return PgBindNull(i);
    sqlite3_bind_null(stmt_, i);
  }

  // Steps once: true when a row is available, false when done; errors as Status.
  Result<bool> Step();
  // Steps to completion, discarding rows.
  Status Run();
  // Run, for a statement of a write transaction whose answer nobody reads: on PostgreSQL
  // it waits and goes out with the next statement that needs an answer (pg::Connection
  // "Writes that wait"), so its error may come from that statement; on SQLite, Run.
  Status RunLater();
  void Reset() {
    if (pg_) return PgReset();
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t ColumnInt(int i) const {
    if (pg_) return PgColumnInt(i);
    return sqlite3_column_int64(stmt_, i);
  }
  double ColumnDouble(int i) const {
    if (pg_) return PgColumnDouble(i);
    return sqlite3_column_double(stmt_, i);
  }
  int ColumnType(int i) const {
    if (pg_) return PgColumnType(i);
    return sqlite3_column_type(stmt_, i);
  }
  std::string_view ColumnText(int i) const {
    if (pg_) return PgColumnText(i);
    const unsigned char* p = sqlite3_column_text(stmt_, i);
    return std::string_view(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, i));
  }
  std::string_view ColumnBlob(int i) const {
    if (pg_) return PgColumnText(i);
    const void* p = sqlite3_column_blob(stmt_, i);
    return std::string_view(static_cast<const char*>(p), sqlite3_column_bytes(stmt_, i));
  }

 private:
  // The PostgreSQL side, out of line (sqlite.cc) so this header needs no libpq.
  void PgBindInt(int i, int64_t v);
  void PgBindDouble(int i, double v);
  void PgBindText(int i, std::string_view v);
  void PgBindBlob(int i, std::string_view v);
  void PgBindNull(int i);
  void PgReset();
  int64_t PgColumnInt(int i) const;
  double PgColumnDouble(int i) const;
  int PgColumnType(int i) const;
  std::string_view PgColumnText(int i) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  pg::Statement* pg_ = nullptr;  // owned
};

// A statement borrowed from a Connection's cache; reset (not finalized) on destruction.
class CachedStatement {
 public:
  explicit CachedStatement(Statement* s) : s_(s) {}
  CachedStatement(CachedStatement&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  CachedStatement(const CachedStatement&) = delete;
  ~CachedStatement() {
    if (s_) s_->Reset();
  }
  Statement* operator->() const { return s_; }
  Statement& operator*() const { return *s_; }

 private:
  Statement* s_;
};

class Connection {
 public:
  // Opens `uri` (a file path or a "file:" URI) with `flags` (SQLITE_OPEN_*).
  static Result<std::unique_ptr<Connection>> Open(const std::string& uri, int flags);
  // Wraps `db`, a connection owned by someone else (the host of the SQLite extension).
  // The Connection never closes it and applies no settings to it; its cached statements
  // are finalized by ClearCache() or the destructor, which the owner must let happen
  // before it closes `db`. REQUIRES: `db` outlives the Connection.
  static std::unique_ptr<Connection> Borrow(sqlite3* db);
  // Connects to a PostgreSQL database (`name`: a postgresql:// URI or a libpq keyword
  // string, with an optional `schema` parameter: pg_sql.h SplitPgName) and puts the
  // store's schema first on the search path. Unsupported in the SQLite extension's build.
  static Result<std::unique_ptr<Connection>> OpenPostgres(const std::string& name);
  // True when `name` names a PostgreSQL database (pg::IsPostgresName), not a file. Always
  // false in the SQLite extension's build.
  static bool IsPostgresName(std::string_view name);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // SQLite-only: the connection (nullptr for PostgreSQL).
  sqlite3* raw() const { return db_; }
  bool borrowed() const { return borrowed_; }
  // The PostgreSQL connection, or nullptr for SQLite.
  pg::Connection* pg() const { return pg_.get(); }
  bool is_pg() const { return pg_ != nullptr; }
  // PostgreSQL: the schema the store's tables live in (first on the search path).
  const std::string& pg_schema() const { return pg_schema_; }
  // SQLite-only: the prefix of the store's table names ("" for a store file's layout,
  // kHostTablePrefix for host mode's: table_prefix.h). Every statement Exec, Prepare and
  // Cached take is written with the plain names and renamed when prepared. Setting it
  // drops the cached statements.
  const std::string& table_prefix() const { return table_prefix_; }
  void set_table_prefix(std::string prefix) {
    table_prefix_ = std::move(prefix);
    ClearCache();
  }

  // Runs one or more statements without results.
  Status Exec(std::string_view sql);
  // PostgreSQL-only: `copy_sql` (COPY ... FROM STDIN) of `data` (util/copy_rows.h), in the
  // current transaction. Returns the rows copied.
  Result<int64_t> CopyIn(const std::string& copy_sql, std::string_view data);
  // PostgreSQL-only: the same in steps (pg::Connection::CopyStart, CopyPut, CopyFinish).
  Status CopyStart(const std::string& copy_sql);
  Status CopyPut(std::string_view data);
  Result<int64_t> CopyFinish(const std::string& abort = "");
  // PostgreSQL-only: asks the server to stop the statement running on this connection now
  // (any thread; a no-op when none runs). SQLite's connections are interrupted otherwise.
  void Cancel();
  // PostgreSQL-only: the statement_timeout (ms; nullopt: the session's default) of the
  // statements run from now on, sent with the next of them
  // (pg::Connection::SetStatementTimeout). A no-op on SQLite.
  void SetStatementTimeout(std::optional<int64_t> ms);
  // Prepares a fresh statement (not cached).
  Result<Statement> Prepare(std::string_view sql);
  // Returns the cached prepared statement for `sql`, preparing it on first use.
  Result<CachedStatement> Cached(const std::string& sql);
  // Drops every cached statement (after DDL changes, for instance).
  void ClearCache() {
    recent_ = {};
    cache_.clear();
  }
  // Single-value query helper: the first column of the first row as an integer,
  // or `fallback` when there is no row.
  Result<int64_t> QueryInt(const std::string& sql, int64_t fallback);

  // SQLite-only: the data version of the main database (SQLITE_FCNTL_DATA_VERSION): it
  // changes when a read transaction begins on a store that changed since this connection's
  // last one, and at this connection's own commits. No statement runs. 0 for PostgreSQL.
  uint32_t PagerDataVersion() const;
  // True inside a read or write transaction on the main database.
  bool InTransaction() const;
  // True inside a write transaction (SQLite: one that has written or BEGIN IMMEDIATE;
  // PostgreSQL: a Transaction begun to write).
  bool InWriteTransaction() const;

 private:
  Connection(sqlite3* db, bool borrowed);
  explicit Connection(std::unique_ptr<pg::Connection> pg);
  sqlite3* db_;
  bool borrowed_ = false;
  std::unique_ptr<pg::Connection> pg_;
  std::string pg_schema_;
  std::string table_prefix_;
  bool pg_writing_ = false;  // inside a Transaction begun to write (PostgreSQL)
  friend class Transaction;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
  // The last statements Cached returned, checked before the map: a read runs the same few
  // (BEGIN, its query, COMMIT) call after call, and comparing a query's text costs less
  // than hashing it.
  struct Recent {
    std::string_view sql;  // the map's key
    Statement* stmt = nullptr;
  };
  std::array<Recent, 4> recent_{};
  size_t recent_next_ = 0;
};

// Transaction guard: Begin starts it, the destructor rolls it back unless committed.
//
// On PostgreSQL, Begin(false) is BEGIN ISOLATION LEVEL REPEATABLE READ (one snapshot for
// every statement of the read) and Begin(true) is BEGIN plus a transaction-level advisory
// lock that serializes the store's writers without blocking its readers (`WriterLockKey`).
// A writer's BEGIN and lock wait (Statement::RunLater) and go out with its first statement
// that needs an answer: that statement is the one that waits for the lock, and every
// statement of the transaction runs after it is held.
//
// On a connection in autocommit mode, Begin is BEGIN [IMMEDIATE] and Commit is COMMIT.
// On a connection that is already inside a transaction (a borrowed host connection
// inside the host's BEGIN), it nests: SAVEPOINT, RELEASE, and ROLLBACK TO + RELEASE, so
// the work commits or rolls back with the host's transaction. On a borrowed connection
// whose host is running a statement that writes (INSERT ... SELECT edn_q(...)), SQLite
// allows no SAVEPOINT, BEGIN or RELEASE: a read joins the host's transaction as is, and a
// write (immediate) is refused with kUnsupported.
class Transaction {
 public:
  explicit Transaction(Connection* c) : c_(c) {}
  ~Transaction();
  Status Begin(bool immediate);
  Status Commit();
  Status Rollback();
  bool active() const { return active_; }
  // True when Begin nested in an enclosing transaction (SAVEPOINT or joined): Commit
  // then does not make the work durable; the enclosing transaction decides.
  bool nested() const { return mode_ == Mode::kSavepoint || mode_ == Mode::kJoined; }

  // The advisory lock key PostgreSQL writers take (a constant: one writer per database at a
  // time; a schema-per-store layout would hash the schema's name into it).
  static constexpr int64_t kWriterLockKey = 0x6d656e746174;  // "mentat"

 private:
  enum class Mode { kBegin, kSavepoint, kJoined };
  Connection* c_;
  bool active_ = false;
  Mode mode_ = Mode::kBegin;
};

}  // namespace mentat::storage
