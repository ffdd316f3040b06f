// RAII wrappers over SQLite connections and statements.
//
// A Connection owns one sqlite3* and a cache of prepared statements keyed by SQL text.
// A Connection is used by one thread at a time (callers lease it from the store's pool).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mentat/status.h"
#include "storage/sqlite_api.h"

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
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  sqlite3_stmt* get() const { return stmt_; }
  explicit operator bool() const { return stmt_ != nullptr; }

  // Bind helpers; `i` is 1-based.
  void BindInt(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void BindDouble(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void BindText(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindBlob(int i, std::string_view v) {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }

  // Steps once: true when a row is available, false when done; errors as Status.
  Result<bool> Step();
  // Steps to completion, discarding rows.
  Status Run();
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t ColumnInt(int i) const { return sqlite3_column_int64(stmt_, i); }
  double ColumnDouble(int i) const { return sqlite3_column_double(stmt_, i); }
  int ColumnType(int i) const { return sqlite3_column_type(stmt_, i); }
  std::string_view ColumnText(int i) const {
    const unsigned char* p = sqlite3_column_text(stmt_, i);
    return std::string_view(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, i));
  }
  std::string_view ColumnBlob(int i) const {
    const void* p = sqlite3_column_blob(stmt_, i);
    return std::string_view(static_cast<const char*>(p), sqlite3_column_bytes(stmt_, i));
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
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
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* raw() const { return db_; }
  bool borrowed() const { return borrowed_; }

  // Runs one or more statements without results.
  Status Exec(std::string_view sql);
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

  // SQLite's data version of the main database (SQLITE_FCNTL_DATA_VERSION): it changes
  // when a read transaction begins on a store that changed since this connection's last
  // one, and at this connection's own commits. No statement runs.
  uint32_t PagerDataVersion() const;
  // True inside a read or write transaction on the main database.
  bool InTransaction() const { return sqlite3_txn_state(db_, "main") != SQLITE_TXN_NONE; }

 private:
  Connection(sqlite3* db, bool borrowed) : db_(db), borrowed_(borrowed) {}
  sqlite3* db_;
  bool borrowed_ = false;
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

 private:
  enum class Mode { kBegin, kSavepoint, kJoined };
  Connection* c_;
  bool active_ = false;
  Mode mode_ = Mode::kBegin;
};

}  // namespace mentat::storage
