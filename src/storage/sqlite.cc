#include "storage/sqlite.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "storage/pg_sql.h"
#include "storage/table_prefix.h"
#include "storage/vfs.h"

#ifdef MENTAT_WITH_PG
#include "pg/connection.h"
#else
// The SQLite extension's build has no PostgreSQL: empty types, never instantiated.
namespace mentat::pg {
class Connection {};
class Statement {};
}  // namespace mentat::pg
#endif

namespace mentat::storage {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string msg(what);
  msg += ": ";
  msg += db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  // For errors of the file system, SQLite's message ("disk I/O error", "unable to open
  // database file") hides the cause; the operating system's error names it ("No space left
  // on device", "Permission denied").
  switch (rc & 0xff) {
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      if (int e = db ? sqlite3_system_errno(db) : 0; e != 0) {
        msg += " (";
        msg += std::strerror(e);
        msg += ")";
      }
      break;
    default:
      break;
  }
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Busy(msg);
    case SQLITE_INTERRUPT:
      return Status::Interrupted("interrupted");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corrupt(msg);
    case SQLITE_CONSTRAINT:
      return Status::Conflict(msg);
    default:
      return Status::Io(msg);
  }
}

Statement::Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_), pg_(o.pg_) {
  o.stmt_ = nullptr;
  o.pg_ = nullptr;
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    this->~Statement();
    db_ = o.db_;
    stmt_ = o.stmt_;
    pg_ = o.pg_;
    o.stmt_ = nullptr;
    o.pg_ = nullptr;
  }
  return *this;
}

#ifdef MENTAT_WITH_PG
Statement::Statement(std::unique_ptr<pg::Statement> pg) : pg_(pg.release()) {}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
  delete pg_;
  stmt_ = nullptr;
  pg_ = nullptr;
}

void Statement::PgBindInt(int i, int64_t v) { pg_->BindInt(i, v); }
void Statement::PgBindDouble(int i, double v) { pg_->BindDouble(i, v); }
void Statement::PgBindText(int i, std::string_view v) { pg_->BindText(i, v); }
void Statement::PgBindBlob(int i, std::string_view v) { pg_->BindBlob(i, v); }
void Statement::PgBindNull(int i) { pg_->BindNull(i); }
void Statement::PgReset() { pg_->Reset(); }
int64_t Statement::PgColumnInt(int i) const { return pg_->ColumnInt(i); }
double Statement::PgColumnDouble(int i) const { return pg_->ColumnDouble(i); }
int Statement::PgColumnType(int i) const { return static_cast<int>(pg_->ColumnType(i)); }
std::string_view Statement::PgColumnText(int i) const { return pg_->ColumnText(i); }
#else
// The SQLite extension's build has no PostgreSQL: pg_ is always null.
Statement::Statement(std::unique_ptr<pg::Statement>) {}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
  stmt_ = nullptr;
}

void Statement::PgBindInt(int, int64_t) {}
void Statement::PgBindDouble(int, double) {}
void Statement::PgBindText(int, std::string_view) {}
void Statement::PgBindBlob(int, std::string_view) {}
void Statement::PgBindNull(int) {}
void Statement::PgReset() {}
int64_t Statement::PgColumnInt(int) const { return 0; }
double Statement::PgColumnDouble(int) const { return 0; }
int Statement::PgColumnType(int) const { return SQLITE_NULL; }
std::string_view Statement::PgColumnText(int) const { return {}; }
#endif

namespace {
thread_local uint64_t tls_steps = 0;
}  // namespace

uint64_t ThreadSteps() { return tls_steps; }

Result<bool> Statement::Step() {
  ++tls_steps;
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->Step();
#endif
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, "sqlite step");
}

Status Statement::RunLater() {
#ifdef MENTAT_WITH_PG
  if (pg_) {
    ++tls_steps;
    return pg_->RunLater();
  }
#endif
  return Run();
}

Status Statement::Run() {
  ++tls_steps;
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->Run();
#endif
  for (;;) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_DONE) return Status::OK();
    if (rc != SQLITE_ROW) return SqliteError(db_, rc, "sqlite step");
  }
}

namespace {

// SQLite gives every statement that sorts, removes duplicates or recurses (a DISTINCT, a
// UNION, WITH RECURSIVE) an ephemeral table whose page cache it allocates at once (about
// 100 KiB) and frees when the statement ends. On glibc, with the default trim threshold of
// 128 KiB, the free often hands the top of the heap back to the kernel, so the next
// statement page-faults it in again: tens of microseconds per statement on a virtual
// machine, more than the query itself. Freeing one large block raises glibc's dynamic
// thresholds (to that block's size, the trim threshold to twice it), exactly as a process
// that once used a large buffer has them; nothing else changes. Once per process.
void RaiseAllocatorThresholds() {
#ifdef __GLIBC__
  static std::once_flag once;
  std::call_once(once, [] {
    void* volatile block = std::malloc(size_t{8} << 20);
    std::free(block);
  });
#endif
}

}  // namespace

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& uri, int flags) {
  RaiseAllocatorThresholds();
  sqlite3* db = nullptr;
  // Through mentat's VFS (vfs.h) unless the URI names a VFS.
  int rc = sqlite3_open_v2(uri.c_str(), &db, flags | SQLITE_OPEN_URI, MentatVfs());
  if (rc != SQLITE_OK) {
    Status st = SqliteError(db, rc, "cannot open '" + uri + "'");
    sqlite3_close_v2(db);
    if (st.code() == Code::kBusy) return st;
    return Status::Io(st.message());
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Connection>(new Connection(db, false));
}

std::unique_ptr<Connection> Connection::Borrow(sqlite3* db) {
  return std::unique_ptr<Connection>(new Connection(db, true));
}

Connection::Connection(sqlite3* db, bool borrowed) : db_(db), borrowed_(borrowed) {}

Connection::Connection(std::unique_ptr<pg::Connection> pg) : db_(nullptr), pg_(std::move(pg)) {}

#ifdef MENTAT_WITH_PG
Result<std::unique_ptr<Connection>> Connection::OpenPostgres(const std::string& name) {
  PgName n = SplitPgName(name);
  bool ok = !n.schema.empty() && n.schema.size() < 64 &&
            (std::isalpha(static_cast<unsigned char>(n.schema[0])) || n.schema[0] == '_');
  for (char ch : n.schema) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!ok)
    return Status::InvalidArgument("schema '" + n.schema +
                                   "': a store's schema name is letters, digits and "
                                   "underscores, starting with a letter or underscore");
  MENTAT_ASSIGN_OR_RETURN(auto pg, pg::Connection::Open(n.conninfo));
  // The store's tables are found by their plain names: the schema first on the path.
  // JIT compilation pays for long analytic queries; a store's queries are mostly short,
  // and compiling one took longer than running it (100 ms for a 10 ms anti-join).
  MENTAT_RETURN_IF_ERROR(pg->Exec("SET search_path TO " + n.schema + "; SET jit = off"));
  std::unique_ptr<Connection> c(new Connection(std::move(pg)));
  c->pg_schema_ = n.schema;
  return c;
}
bool Connection::IsPostgresName(std::string_view name) { return pg::IsPostgresName(name); }
#else
bool Connection::IsPostgresName(std::string_view) { return false; }
Result<std::unique_ptr<Connection>> Connection::OpenPostgres(const std::string&) {
  return Status::Unsupported("PostgreSQL stores cannot be opened from the SQLite extension");
}
#endif

Connection::~Connection() {
  recent_ = {};
  cache_.clear();
  if (db_ && !borrowed_) sqlite3_close_v2(db_);
}

bool Connection::InTransaction() const {
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->InTransaction();
#endif
  return sqlite3_txn_state(db_, "main") != SQLITE_TXN_NONE;
}

Result<int64_t> Connection::CopyIn(const std::string& copy_sql, std::string_view data) {
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->CopyIn(copy_sql, data);
#endif
  (void)copy_sql;
  (void)data;
  return Status::Unsupported("COPY is PostgreSQL's");
}

Status Connection::CopyStart(const std::string& copy_sql) {
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->CopyStart(copy_sql);
#endif
  (void)copy_sql;
  return Status::Unsupported("COPY is PostgreSQL's");
}

Status Connection::CopyPut(std::string_view data) {
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->CopyPut(data);
#endif
  (void)data;
  return Status::Unsupported("COPY is PostgreSQL's");
}

Result<int64_t> Connection::CopyFinish(const std::string& abort) {
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->CopyFinish(abort);
#endif
  (void)abort;
  return Status::Unsupported("COPY is PostgreSQL's");
}

void Connection::Cancel() {
#ifdef MENTAT_WITH_PG
  if (pg_) pg_->Cancel();
#endif
}

void Connection::SetStatementTimeout(std::optional<int64_t> ms) {
#ifdef MENTAT_WITH_PG
  if (pg_) pg_->SetStatementTimeout(ms);
#else
  (void)ms;
#endif
}

bool Connection::InWriteTransaction() const {
  if (pg_) return pg_writing_ && InTransaction();
  return sqlite3_txn_state(db_, "main") == SQLITE_TXN_WRITE;
}

Status Connection::Exec(std::string_view sql) {
#ifdef MENTAT_WITH_PG
  if (pg_) return pg_->Exec(PgSql(sql));
#endif
  std::string s = table_prefix_.empty() ? std::string(sql) : PrefixTables(sql, table_prefix_);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string what = err ? err : "";
    sqlite3_free(err);
    return SqliteError(db_, rc, "sqlite exec");
  }
  return Status::OK();
}

Result<Statement> Connection::Prepare(std::string_view sql) {
#ifdef MENTAT_WITH_PG
  if (pg_) return Statement(pg_->Prepare(PgSql(sql)));
#endif
  std::string renamed;
  if (!table_prefix_.empty()) {
    renamed = PrefixTables(sql, table_prefix_);
    sql = renamed;
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "sqlite prepare");
  return Statement(db_, stmt);
}

Result<CachedStatement> Connection::Cached(const std::string& sql) {
  for (const Recent& r : recent_)
    if (r.stmt && r.sql == sql) return CachedStatement(r.stmt);
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    MENTAT_ASSIGN_OR_RETURN(Statement s, Prepare(sql));
    it = cache_.emplace(sql, std::make_unique<Statement>(std::move(s))).first;
  }
  // The map's keys stay put until ClearCache (node-based container).
  recent_[recent_next_] = Recent{it->first, it->second.get()};
  recent_next_ = (recent_next_ + 1) % recent_.size();
  return CachedStatement(it->second.get());
}

Result<int64_t> Connection::QueryInt(const std::string& sql, int64_t fallback) {
  MENTAT_ASSIGN_OR_RETURN(CachedStatement s, Cached(sql));
  MENTAT_ASSIGN_OR_RETURN(bool row, s->Step());
  if (!row || s->ColumnType(0) == SQLITE_NULL) return fallback;
  return s->ColumnInt(0);
}

uint32_t Connection::PagerDataVersion() const {
  if (!db_) return 0;
  unsigned int v = 0;
  if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_DATA_VERSION, &v) != SQLITE_OK) return 0;
  return v;
}

Transaction::~Transaction() {
  if (active_) (void)Rollback();
}

namespace {

// True when a statement that writes is running on `db`: the host called us from inside
// an INSERT, UPDATE, DELETE or CREATE ... AS. SQLite then refuses SAVEPOINT, RELEASE and
// COMMIT ("SQL statements in progress").
bool WriterActive(sqlite3* db) {
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    if (sqlite3_stmt_busy(s) && !sqlite3_stmt_readonly(s)) return true;
  }
  return false;
}

constexpr const char* kSavepoint = "mentat_txn";

// Runs one transaction-control statement from the connection's statement cache: BEGIN
// and COMMIT run on every read, and parsing them each time cost more than the work of a
// point lookup.
Status Control(Connection* c, const std::string& sql) {
  MENTAT_ASSIGN_OR_RETURN(CachedStatement s, c->Cached(sql));
  if (c->is_pg()) return s->Run();
  int rc = sqlite3_step(s->get());
  if (rc == SQLITE_DONE || rc == SQLITE_ROW) return Status::OK();
  return SqliteError(c->raw(), rc, "sqlite exec");
}

// Forgets a PostgreSQL connection's statements that wait (Statement::RunLater).
void DiscardLater(Connection* c) {
#ifdef MENTAT_WITH_PG
  if (c->is_pg()) c->pg()->DiscardLater();
#else
  (void)c;
#endif
}

}  // namespace

Status Transaction::Begin(bool immediate) {
  if (c_->is_pg()) {
    if (c_->InTransaction()) {
      MENTAT_RETURN_IF_ERROR(Control(c_, std::string("SAVEPOINT ") + kSavepoint));
      mode_ = Mode::kSavepoint;
    } else {
      mode_ = Mode::kBegin;
      c_->pg_writing_ = immediate;
      if (immediate) {
        // A writer's BEGIN and lock go out with its first read (Statement::RunLater): its
        // statements then run after the lock is held, and a failure to take it is that
        // read's (the transaction then rolls back).
        MENTAT_ASSIGN_OR_RETURN(CachedStatement b,
                                c_->Cached("BEGIN ISOLATION LEVEL READ COMMITTED"));
        MENTAT_RETURN_IF_ERROR(b->RunLater());
        MENTAT_ASSIGN_OR_RETURN(
            CachedStatement l,
            c_->Cached("SELECT pg_advisory_xact_lock(" + std::to_string(kWriterLockKey) + ")"));
        Status st = l->RunLater();
        if (!st.ok()) {
          DiscardLater(c_);
          if (c_->InTransaction()) (void)Control(c_, "ROLLBACK");
          return st;
        }
      } else {
        MENTAT_RETURN_IF_ERROR(Control(c_, "BEGIN ISOLATION LEVEL REPEATABLE READ"));
      }
    }
    active_ = true;
    return Status::OK();
  }
  if (c_->borrowed() && WriterActive(c_->raw())) {
    if (immediate)
      return Status::Unsupported(
          "cannot transact while the host runs a statement that writes (INSERT, UPDATE, "
          "DELETE, CREATE ... AS); call it from a plain SELECT");
    mode_ = Mode::kJoined;
  } else if (!sqlite3_get_autocommit(c_->raw())) {
    MENTAT_RETURN_IF_ERROR(Control(c_, std::string("SAVEPOINT ") + kSavepoint));
    mode_ = Mode::kSavepoint;
  } else {
    MENTAT_RETURN_IF_ERROR(Control(c_, immediate ? "BEGIN IMMEDIATE" : "BEGIN"));
    mode_ = Mode::kBegin;
  }
  active_ = true;
  return Status::OK();
}

Status Transaction::Commit() {
  Status st;
  if (mode_ == Mode::kSavepoint) {
    st = Control(c_, std::string("RELEASE ") + kSavepoint);
  } else if (mode_ == Mode::kBegin) {
    st = Control(c_, "COMMIT");
  }
  if (st.ok()) active_ = false;
  return st;
}

Status Transaction::Rollback() {
  active_ = false;
  if (mode_ == Mode::kJoined) return Status::OK();  // only reads joined the host's work
  // What waits was written after the BEGIN or SAVEPOINT (which sent what waited before).
  DiscardLater(c_);
  if (mode_ == Mode::kSavepoint) {
    MENTAT_RETURN_IF_ERROR(Control(c_, std::string("ROLLBACK TO ") + kSavepoint));
    return Control(c_, std::string("RELEASE ") + kSavepoint);
  }
  if (c_->is_pg() ? !c_->InTransaction() : sqlite3_get_autocommit(c_->raw()) != 0)
    return Status::OK();
  return Control(c_, "ROLLBACK");
}

}  // namespace mentat::storage
