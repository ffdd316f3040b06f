// RAII wrappers over libpq: a PostgreSQL connection, its prepared statements and COPY.
//
// The shape follows storage::Connection (storage/sqlite.h) so that the layers above can
// drive either engine the same way: statements prepared once per connection and cached by
// their SQL text, parameters bound by 1-based position, rows stepped one at a time, columns
// read by 0-based position. Values travel in libpq's binary format, so no number is printed
// and parsed on the way.
//
// A Connection is used by one thread at a time; Cancel() is the one call any thread may make.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mentat/status.h"
#include "util/copy_rows.h"

struct pg_conn;
struct pg_result;
struct pg_cancel;

namespace mentat::pg {

// True when `name` names a PostgreSQL database rather than a file: a `postgresql://` or
// `postgres://` URI, or a libpq keyword string (`host=... dbname=...`: an `=` before any
// `/`).
bool IsPostgresName(std::string_view name);

// The storage class of a column or parameter, as storage::Statement's ColumnType reports
// SQLite's (SQLITE_INTEGER ... SQLITE_NULL have the same numbers, 1 to 5).
enum class Kind : int { kInt = 1, kReal = 2, kText = 3, kBlob = 4, kNull = 5 };

class Connection;

// A prepared statement of one Connection: bind, step through the rows, reset. The first
// Step (or Run) after binding executes it; the rows are then read from the result.
class Statement {
 public:
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Bind helpers; `i` is 1-based. A parameter keeps its kind from one execution to the
  // next unless bound with another; the statement is prepared again for a new set of kinds.
  void BindInt(int i, int64_t v);
  void BindDouble(int i, double v);
  void BindText(int i, std::string_view v);
  void BindBlob(int i, std::string_view v);
  void BindNull(int i);

  // Executes on the first call; then true while a row is available.
  Result<bool> Step();
  // Executes, discarding rows.
  Status Run();
  // Executes later, discarding rows: the execution waits on the connection and goes out
  // in one pipeline with the next statement that needs an answer (Connection "Writes that
  // wait"); its error, if any, is that statement's. Changes() reads 0.
  Status RunLater();
  // Ends the current execution (keeps the bindings' kinds, clears their values).
  void Reset();

  int ColumnCount() const;
  Kind ColumnType(int i) const;
  int64_t ColumnInt(int i) const;
  double ColumnDouble(int i) const;
  std::string_view ColumnText(int i) const;
  std::string_view ColumnBlob(int i) const;
  // The number of rows a statement without a result (INSERT, UPDATE, DELETE) changed.
  int64_t Changes() const { return changes_; }

 private:
  friend class Connection;
  Statement(Connection* c, std::string sql) : conn_(c), sql_(std::move(sql)) {}
  void Bind(int i, Kind k, std::string bytes);
  // Prepares the text without parameter types and reads the types the server inferred.
  Status Describe();
  Status Execute(bool later = false);
  // A jsonb column's text (after its version byte).
  std::string_view JsonText(int i) const;

  Connection* conn_;
  std::string sql_;
  struct Param {
    Kind kind = Kind::kNull;
    bool null = true;
    std::string bytes;  // binary format
  };
  std::vector<Param> params_;
  // The SQLite parameter number (1-based) of each server parameter, in order; empty for
  // SQL written with $N (server parameter i is bound parameter i).
  std::vector<int> occ_;
  // The statement prepared without parameter types, and the types the server inferred.
  bool described_ = false;
  bool typed_only_ = false;  // the server could not infer the parameters' types
  std::string untyped_;
  std::vector<unsigned int> inferred_;
  // The statement prepared again for each signature of parameter kinds that differs from
  // the inferred types.
  std::unordered_map<std::string, std::string> prepared_;
  // Columns decoded from their binary form (jsonb, numbers as text), by column.
  mutable std::vector<std::string> scratch_;
  pg_result* result_ = nullptr;
  bool executed_ = false;
  int row_ = -1;
  int rows_ = 0;
  int64_t changes_ = 0;
};

// A statement borrowed from a Connection's cache; reset on destruction.
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
  // Connects to `conninfo` (a URI or a keyword string, as libpq takes them). The
  // connection's client encoding is UTF-8 and its time zone UTC.
  static Result<std::unique_ptr<Connection>> Open(const std::string& conninfo);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  pg_conn* raw() const { return conn_; }

  // A statement of its own for `sql` (PgPlaceholders applied), prepared on first execution;
  // its server-side statements are deallocated with it. REQUIRES: it dies before this.
  std::unique_ptr<Statement> Prepare(const std::string& sql);
  // Runs one or more statements without parameters or results.
  Status Exec(std::string_view sql);
  // The cached statement for `sql` ($N or SQLite's ?N parameters: PgPlaceholders),
  // prepared on first execution.
  Result<CachedStatement> Cached(const std::string& sql);
  // The first column of the first row as an integer, or `fallback` when there is no row
  // or it is NULL.
  Result<int64_t> QueryInt(const std::string& sql, int64_t fallback);
  // Drops every cached statement (deallocating them), after a schema change for instance.
  Status ClearCache();

  // COPY `copy_sql` (a `COPY ... FROM STDIN` statement, text format) of `data`, rows of
  // tab-separated fields each ending in a newline (Copy::Field escapes a field). Returns
  // the number of rows copied.
  Result<int64_t> CopyIn(const std::string& copy_sql, std::string_view data);
  // The same in steps, so that the server parses rows while the caller makes the next:
  // CopyStart begins `copy_sql`; CopyPut sends rows (whole ones, in any number of calls);
  // CopyFinish ends the COPY and returns the rows copied, or the first error (a failure
  // to send ends the COPY with an error, reported here); with `abort`, the server drops
  // the COPY with that message. Nothing else may run on the connection between CopyStart
  // and CopyFinish.
  Status CopyStart(const std::string& copy_sql);
  Status CopyPut(std::string_view data);
  Result<int64_t> CopyFinish(const std::string& abort = "");

  // Asks the server to cancel the statement running on this connection. Any thread; a no-op
  // when none is running.
  void Cancel();

  // True inside a transaction block (after BEGIN, before COMMIT or ROLLBACK).
  bool InTransaction() const;

  // An optimistic read in one round trip (StoreImpl::Read): the next statement this
  // connection executes goes out in one pipeline after
  //   BEGIN ISOLATION LEVEL REPEATABLE READ; `probe`
  // so `probe` (a statement without parameters: the store's schema generation) and the
  // statement read one snapshot; with `commit`, COMMIT follows in the same pipeline (work
  // of one statement), else the transaction stays open for the statements after
  // (CommitAsync or ROLLBACK ends it). If the statement fails, the transaction is rolled
  // back. `probe`'s rows are then read from it as after its own execution.
  // REQUIRES: outside a transaction; `probe` outlives the next execution.
  void ArmEnvelope(Statement* probe, bool commit) {
    envelope_ = probe;
    envelope_commit_ = commit;
  }
  // Clears the envelope; true when a statement went out in it since ArmEnvelope.
  bool DisarmEnvelope() {
    envelope_ = nullptr;
    return std::exchange(envelope_sent_, false);
  }
  // Sends COMMIT without waiting for its answer, which the connection reads with its next
  // command (in that command's pipeline when it has one: RunEnveloped, RunAfterLater, else
  // before it): for a read-only transaction, whose COMMIT has nothing to report to the
  // reader, this saves the round trip.
  void CommitAsync();
  // Statements executed on this connection so far (each Execute counts one).
  uint64_t executions() const { return executions_; }

  // Writes that wait. A write transaction's statements whose answer nobody reads (its
  // INSERTs, UPDATEs and DELETEs, BEGIN and the writer lock) are held (Statement::RunLater)
  // and sent in one pipeline ahead of the next statement whose answer is needed (a read,
  // COMMIT): a round trip for the lot instead of one each. At most kLaterBatch wait, so
  // that the server's answers to a pipeline stay far below what a socket buffers.
  // Anything else the connection runs (Exec, COPY, a prepare) sends them first. The first
  // failure among them is the answer of the statement they went out with (or of Flush), and
  // the server's transaction is then aborted, as after that failure run alone.
  static constexpr size_t kLaterBatch = 64;
  // Sends the waiting statements now; their first failure, if any.
  Status Flush();
  // Forgets the waiting statements (before a ROLLBACK: they need not run).
  void DiscardLater();

  // The statement_timeout for the statements sent from now on, in milliseconds; nullopt:
  // the session's default (the server's or the role's setting). Nothing is sent here:
  // when it differs from what the server has, its SET goes out as a waiting statement
  // with the next statement that runs (in the same pipeline), so a run of queries with
  // one timeout sets it once and a query costs no round trip for it. A SET inside a
  // transaction that is rolled back is undone by the server: the connection then sends
  // it again.
  void SetStatementTimeout(std::optional<int64_t> ms) { wanted_timeout_ = ms; }

 private:
  friend class Statement;
  explicit Connection(pg_conn* c);
  std::unique_ptr<Statement> NewStatement(const std::string& sql);
  // Runs prepared statement `name` in the armed envelope (ArmEnvelope); its result, or an
  // error. Leaves the connection outside any transaction and out of pipeline mode.
  Result<pg_result*> RunEnveloped(Statement* probe, const std::string& name, int n,
                                  const char* const* values, const int* lengths,
                                  const int* formats);
  Status Error(std::string_view what, pg_result* r) const;
  // Sends the waiting statements, then prepared statement `name` (when given), in one
  // pipeline; `name`'s result, or the first waiting statement's failure.
  // Ends a pipeline whose statements went out (`sent`: each send and the sync succeeded):
  // reads every result up to the sync, whatever happened (an error aborts the rest: those
  // come as PGRES_PIPELINE_ABORTED), so the connection leaves pipeline mode clean. The
  // statements' results go to `results[0..statements)` (the caller clears them); an error
  // when the pipeline itself failed.
  Status EndPipeline(bool sent, size_t statements, pg_result** results);
  Result<pg_result*> RunAfterLater(const std::string* name, int n, const char* const* values,
                                   const int* lengths, const int* formats);

  pg_conn* conn_;
  std::mutex cancel_mu_;
  pg_cancel* cancel_ = nullptr;
  bool copy_failed_ = false;  // a CopyPut could not send its rows
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
  uint64_t next_name_ = 0;
  // Reads the answer of a CommitAsync still on its way and leaves pipeline mode: every
  // command that does not pipeline starts with it.
  void Drain() const;
  // Enters pipeline mode, or stays in it after a CommitAsync (*after_commit: its answer is
  // then read, ReadPendingCommit, once the pipeline's statements are sent).
  Status EnterPipeline(bool* after_commit);
  // Reads the answer of the COMMIT a CommitAsync left in the pipeline (ahead of what was
  // sent after it); false when the pipeline failed. Stays in pipeline mode.
  bool ReadPendingCommit() const;
  bool closing_ = false;  // in the destructor: statements need not deallocate
  mutable bool commit_pending_ = false;
  Statement* envelope_ = nullptr;
  bool envelope_commit_ = false;
  bool envelope_sent_ = false;
  uint64_t executions_ = 0;
  // A statement that waits: its server-side name and parameters (binary; null when absent),
  // or a statement without parameters as text (`sql`, a SET: not part of a transaction's
  // writes).
  struct Later {
    std::string name;
    std::vector<std::string> values;
    std::vector<bool> null;
    std::string sql;
  };
  std::vector<Later> later_;
  // Sends `batch` in the pipeline the connection is in; false when a send failed.
  bool SendLater(const std::vector<Later>& batch);
  // Queues the SET of wanted_timeout_ when the server may have another (SetStatementTimeout).
  void QueueTimeout();
  // The server's statement_timeout after what was sent (nullopt: the default), when known.
  std::optional<int64_t> wanted_timeout_, server_timeout_;
  mutable bool server_timeout_known_ = true;  // (Drain may roll back)
  // A failure of waiting statements sent where it could not be returned (a statement's
  // destructor); the next execution reports it.
  Status later_error_;
};

// SQL written for SQLite's placeholders, for PostgreSQL's: `?N` becomes `$N` and a bare `?`
// the next number (`$1`, `$2`...), outside string literals, quoted identifiers and comments.
// Cached() applies it, so one text of a statement serves both engines.
// With `occurrences`, every occurrence of a `?` parameter becomes a parameter of its own
// ($1, $2, ... in order of appearance) and `occurrences` receives the SQLite parameter
// number of each, so one value used in two contexts (a jsonb column and a text function)
// is typed by each: Statement binds the same value to all of them.
std::string PgPlaceholders(std::string_view sql, std::vector<int>* occurrences = nullptr);

// Converts a libpq error (its SQLSTATE and message) into a Status: serialization failures
// and deadlocks are kBusy, a cancelled statement kInterrupted, a statement timeout
// kInterrupted with "timeout", integrity violations kConflict, a read-only transaction
// kUnsupported, a lost connection and anything else kIo. Exposed for tests.
Status ErrorStatus(std::string_view sqlstate, std::string_view message);

}  // namespace mentat::pg
