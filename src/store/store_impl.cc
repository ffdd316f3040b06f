#include "store/store_impl.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

#include "schema/bootstrap.h"
#ifdef MENTAT_WITH_PG
#include "pg/connection.h"
#endif
#include "store/listeners.h"
#include "store/tx_functions.h"
#include "tx/tx.h"
#include "tx/write.h"
#include "views/views.h"

namespace mentat {

int64_t NowMicros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

namespace {

void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifndef MENTAT_SQLITE_EXTENSION
    // Memory statistics take a process-wide mutex on every allocation; readers must not
    // serialize on it. Fails harmlessly when SQLite is already initialized. (Inside a
    // host's SQLite, as an extension, the host owns this configuration.)
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_initialize();
#endif
  });
}

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end && *end == '\0') ? x : fallback;
}

// Set by OpenStoreOnConnection for the Store::open call it makes on this thread: the
// public Store's constructor is private to Store::open.
thread_local sqlite3* tls_borrow = nullptr;

}  // namespace

Result<std::unique_ptr<Store>> OpenStoreOnConnection(sqlite3* db, const Options& options) {
  if (!db) return Status::InvalidArgument("no connection to open a store on");
  tls_borrow = db;
  auto store = Store::open("", options);
  tls_borrow = nullptr;
  return store;
}

void ReleaseHostStatements(Store* store) { ImplOf(store)->ReleaseStatements(); }

StoreImpl::Lease::~Lease() {
  if (c_) s_->Release(std::move(c_));
}

Result<std::unique_ptr<StoreImpl>> StoreImpl::Open(const std::string& path,
                                                   const Options& options) {
  if (tls_borrow) return OpenBorrowed(std::exchange(tls_borrow, nullptr), options);
  if (storage::Connection::IsPostgresName(path)) return OpenPostgres(path, options);
  ConfigureSqliteOnce();
  std::unique_ptr<StoreImpl> s(new StoreImpl());
  s->path_ = path;
  s->options_ = options;
  MENTAT_RETURN_IF_ERROR(s->InitAdvisor());
  s->in_memory_ = path.empty() || path == ":memory:";
  if (s->in_memory_) {
    // A private in-memory database, reached by a single connection.
    s->uri_ = ":memory:";
    s->max_conns_ = 1;
  } else {
    s->uri_ = path;
  }
  auto& st = s->settings_;
  st.in_memory = s->in_memory_;
  st.read_only = options.read_only;
  st.synchronous = static_cast<int>(options.synchronous);
  st.busy_timeout_ms = options.busy_timeout_ms;
  st.mmap_size =
      options.mmap_size >= 0 ? options.mmap_size : EnvInt("MENTAT_MMAP_SIZE", int64_t{1} << 30);
  st.temp_store = options.temp_store >= 0 ? options.temp_store
                                          : static_cast<int>(EnvInt("MENTAT_TEMP_STORE", 1));

  int flags = SQLITE_OPEN_NOMUTEX;
  flags |= options.read_only ? SQLITE_OPEN_READONLY
                             : (SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0));
  MENTAT_ASSIGN_OR_RETURN(auto first, storage::Connection::Open(s->uri_, flags));
  MENTAT_RETURN_IF_ERROR(
      first->Exec("PRAGMA busy_timeout = " + std::to_string(st.busy_timeout_ms)));

  int version = 0;
  storage::FileState state;
  {
    // One snapshot for Inspect's reads (user_version, then the tables): another process
    // creating the store between them would otherwise look like a foreign file.
    storage::Transaction txn(first.get());
    MENTAT_RETURN_IF_ERROR(txn.Begin(false));
    MENTAT_ASSIGN_OR_RETURN(state, storage::Inspect(first.get(), &version));
    MENTAT_RETURN_IF_ERROR(txn.Commit());
  }
  if (state != storage::FileState::kCurrent && options.read_only)
    return Status::Unsupported(state == storage::FileState::kEmpty
                                   ? "cannot create a store in read-only mode"
                                   : "the store needs an upgrade; open it read-write once");
  MENTAT_RETURN_IF_ERROR(storage::ApplySettings(first.get(), st));
  if (state != storage::FileState::kCurrent)
    MENTAT_RETURN_IF_ERROR(s->CreateOrUpgrade(first.get(), /*beside_other_tables=*/false));
  s->table_prefix_ = first->table_prefix();
  MENTAT_RETURN_IF_ERROR(s->Adopt(std::move(first)));
  return s;
}

namespace {

// The Options a PostgreSQL connection of the store takes as session settings: kOff is
// synchronous_commit = off (a commit returns before its WAL reaches the disk; a server or
// OS crash may lose the latest transactions, never corrupts); the other levels keep the
// server's setting (on, unless configured otherwise).
Status PgSessionSettings(storage::Connection* c, const Options& o) {
  if (o.synchronous != Synchronous::kOff) return Status::OK();
  return c->Exec("SET synchronous_commit = off");
}

}  // namespace

Result<std::unique_ptr<StoreImpl>> StoreImpl::OpenPostgres(const std::string& name,
                                                           const Options& options) {
  std::unique_ptr<StoreImpl> s(new StoreImpl());
  s->path_ = name;
  s->uri_ = name;
  s->pg_ = true;
  s->options_ = options;
  MENTAT_RETURN_IF_ERROR(s->InitAdvisor());
  MENTAT_ASSIGN_OR_RETURN(auto first, storage::Connection::OpenPostgres(name));
  MENTAT_RETURN_IF_ERROR(PgSessionSettings(first.get(), options));
  int version = 0;
  storage::FileState state;
  {
    storage::Transaction txn(first.get());
    MENTAT_RETURN_IF_ERROR(txn.Begin(false));
    MENTAT_ASSIGN_OR_RETURN(state, storage::Inspect(first.get(), &version));
    MENTAT_RETURN_IF_ERROR(txn.Commit());
  }
  if (state != storage::FileState::kCurrent && options.read_only)
    return Status::Unsupported(state == storage::FileState::kEmpty
                                   ? "cannot create a store in read-only mode"
                                   : "the store needs an upgrade; open it read-write once");
  if (state == storage::FileState::kEmpty && !options.create)
    return Status::NotFound("schema '" + first->pg_schema() + "' holds no mentat store");
  // (Under the writers' lock: another process creating the same store waits, then finds it
  // made.)
  if (state != storage::FileState::kCurrent)
    MENTAT_RETURN_IF_ERROR(s->CreateOrUpgrade(first.get(), /*beside_other_tables=*/false));
  if (!options.replicas.empty()) {
    // Each standby reads the primary's schema unless its name says another.
    const std::string& schema = first->pg_schema();
    for (std::string r : options.replicas) {
      if (r.find("schema=") == std::string::npos) {
        const bool uri = r.rfind("postgres", 0) == 0 && r.find("://") != std::string::npos;
        r += uri ? (r.find('?') == std::string::npos ? "?schema=" : "&schema=") + schema
                 : " schema=" + schema;
      }
      s->replicas_.push_back(std::move(r));
    }
    s->replica_idle_.resize(s->replicas_.size());
    s->NoteCommit(first.get());  // what exists now, the standbys must have too
  }
  MENTAT_RETURN_IF_ERROR(s->Adopt(std::move(first)));
  return s;
}

Status StoreImpl::CreateOrUpgrade(storage::Connection* c, bool beside_other_tables) {
  storage::Transaction txn(c);
  MENTAT_RETURN_IF_ERROR(txn.Begin(true));
  // Look again under the write lock: another process may have got there first.
  int version = 0;
  MENTAT_ASSIGN_OR_RETURN(storage::FileState state,
                          storage::Inspect(c, &version, beside_other_tables));
  if (state == storage::FileState::kEmpty) {
    MENTAT_RETURN_IF_ERROR(storage::CreateTables(c));
    MENTAT_RETURN_IF_ERROR(Bootstrap(c));
  } else if (state == storage::FileState::kOld) {
    MENTAT_RETURN_IF_ERROR(storage::Upgrade(c, version));
    MENTAT_RETURN_IF_ERROR(InstallSystemEntities(c, version));
  }
  return txn.Commit();
}

Status StoreImpl::Adopt(std::unique_ptr<storage::Connection> first) {
  auto conn = std::make_unique<Conn>();
  conn->db = std::move(first);
  {
    storage::Transaction txn(conn->db.get());
    MENTAT_RETURN_IF_ERROR(txn.Begin(false));
    MENTAT_RETURN_IF_ERROR(Sync(conn.get()));
    MENTAT_RETURN_IF_ERROR(txn.Commit());
  }
  open_conns_ = 1;
  Release(std::move(conn));
  return Status::OK();
}

void StoreImpl::NoteCommit(storage::Connection* c) {
  if (replicas_.empty()) return;
  auto lsn = c->QueryInt("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint", 0);
  if (!lsn.ok()) return;  // the next reads go to the primary
  int64_t seen = basis_lsn_.load();
  while (*lsn > seen && !basis_lsn_.compare_exchange_weak(seen, *lsn)) {
  }
}

Result<StoreImpl::Lease> StoreImpl::AcquireReplica() {
  const size_t n = replicas_.size();
  const int64_t basis = basis_lsn_.load();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.replica_wait_ms);
  for (size_t tried = 0; tried < n; ++tried) {
    const size_t r = next_replica_.fetch_add(1) % n;
    std::unique_ptr<Conn> c;
    {
      std::lock_guard<std::mutex> lock(pool_mu_);
      if (!replica_idle_[r].empty()) {
        c = std::move(replica_idle_[r].back());
        replica_idle_[r].pop_back();
      }
    }
    if (!c) {
      auto db = storage::Connection::OpenPostgres(replicas_[r]);
      if (!db.ok()) continue;  // a standby that is down: the next one, or the primary
      c = std::make_unique<Conn>();
      c->db = std::move(*db);
      c->replica = static_cast<int>(r);
    }
    // Replayed far enough? NULL: not in recovery (a primary), which has everything.
    for (;;) {
      auto st = c->db->Cached(
          "SELECT COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, "
          "9223372036854775807)");
      if (!st.ok()) break;
      auto row = (*st)->Step();
      if (!row.ok() || !*row) break;
      const int64_t replayed = (*st)->ColumnInt(0);
      if (replayed >= basis) {
        std::lock_guard<std::mutex> lock(pool_mu_);
        leased_.insert(c.get());
        return Lease(this, std::move(c));
      }
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::lock_guard<std::mutex> lock(pool_mu_);
    replica_idle_[r].push_back(std::move(c));
  }
  return Lease(this, nullptr);
}

Result<std::unique_ptr<StoreImpl>> StoreImpl::OpenBorrowed(sqlite3* db, const Options& options) {
  std::unique_ptr<StoreImpl> s(new StoreImpl());
  const char* file = sqlite3_db_filename(db, "main");
  s->path_ = file ? file : "";
  s->uri_ = s->path_;
  s->borrowed_ = true;
  s->borrowed_db_ = db;
  s->max_conns_ = 1;
  s->options_ = options;
  MENTAT_RETURN_IF_ERROR(s->InitAdvisor());
  if (sqlite3_db_readonly(db, "main") == 1) s->options_.read_only = true;
  auto first = storage::Connection::Borrow(db);

  int version = 0;
  MENTAT_ASSIGN_OR_RETURN(storage::FileState state,
                          storage::Inspect(first.get(), &version, /*beside_other_tables=*/true));
  if (state == storage::FileState::kEmpty && !options.create)
    return Status::NotFound("the database holds no mentat store");
  if (state != storage::FileState::kCurrent && s->options_.read_only)
    return Status::Unsupported(state == storage::FileState::kEmpty
                                   ? "cannot create a store in a read-only database"
                                   : "the store needs an upgrade; open it read-write once");
  // Inside the host's transaction this is a savepoint: a host ROLLBACK removes the tables
  // again.
  if (state != storage::FileState::kCurrent)
    MENTAT_RETURN_IF_ERROR(s->CreateOrUpgrade(first.get(), /*beside_other_tables=*/true));
  s->table_prefix_ = first->table_prefix();
  MENTAT_RETURN_IF_ERROR(s->Adopt(std::move(first)));
  return s;
}

void StoreImpl::Interrupt() {
  interrupt_gen_.fetch_add(1);
  if (pg_) {
    // The statements running on leased connections stop now; the queries see the new
    // generation before their next statement.
    std::lock_guard<std::mutex> lock(pool_mu_);
    for (Conn* c : leased_) c->db->Cancel();
    return;
  }
  if (!borrowed_) return;
  std::lock_guard<std::mutex> lock(pool_mu_);
  if (borrowed_busy_) sqlite3_interrupt(borrowed_db_);
}

void StoreImpl::ReleaseStatements() {
  std::lock_guard<std::mutex> lock(pool_mu_);
  for (auto& c : idle_) c->db->ClearCache();
}

namespace {

// Writes bootstrap datoms as asserted by the bootstrap transaction.
Status InsertBootDatoms(storage::Connection* c, const std::vector<schema::BootDatom>& datoms) {
  MENTAT_ASSIGN_OR_RETURN(
      auto ins, c->Prepare("INSERT INTO datoms (e, a, v, tx, ix) VALUES (?1, ?2, ?3, ?4, ?5)"));
  const Schema boot = schema::BuildSchema(schema::BootstrapDatoms());
  for (const auto& d : datoms) {
    const Attribute* attr = boot.attribute(d.a);
    ins.BindInt(1, d.e);
    ins.BindInt(2, d.a);
    schema::Bind(ins, 3, d.v);
    ins.BindInt(4, ids::kBootstrapTx);
    ins.BindInt(5, attr && attr->value_indexed() ? 1 : 0);
    MENTAT_RETURN_IF_ERROR(ins.Run());
    ins.Reset();
  }
  return Status::OK();
}

}  // namespace

Status StoreImpl::InstallSystemEntities(storage::Connection* c, int from_format) {
  auto datoms = schema::BootstrapDatoms(from_format);
  if (datoms.empty()) return Status::OK();
  MENTAT_RETURN_IF_ERROR(InsertBootDatoms(c, datoms));
  // The new idents are a schema change every connection must see.
  return c->Exec(
      "UPDATE meta SET value = value + 1 WHERE key = 'schema_gen';"
      "INSERT OR REPLACE INTO attr_stats (a, datoms, distinct_values, distinct_at, "
      "distinct_entities) SELECT a, count(*), count(DISTINCT v), count(*), count(DISTINCT e) "
      "FROM datoms WHERE a IN (SELECT DISTINCT "
      "a FROM datoms WHERE tx = " +
      std::to_string(ids::kBootstrapTx) + ") GROUP BY a;");
}

Status StoreImpl::Bootstrap(storage::Connection* c) {
  auto datoms = schema::BootstrapDatoms();
  datoms.push_back({ids::kBootstrapTx, ids::kTxInstant, schema::DbVal::Int(NowMicros())});
  MENTAT_RETURN_IF_ERROR(InsertBootDatoms(c, datoms));
  std::string sql =
      "INSERT INTO parts (part, start, \"end\", next) VALUES "
      "(0, 0, " +
      std::to_string(ids::kSystemStart) +
      ", 26), "
      "(2, " +
      std::to_string(ids::kUserStart) + ", " + std::to_string(ids::kTxStart) + ", " +
      std::to_string(ids::kUserStart) +
      "), "
      "(3, " +
      std::to_string(ids::kTxStart) + ", 9223372036854775807, " +
      std::to_string(ids::kTxStart + 1) +
      ");"
      "INSERT INTO meta (key, value) VALUES ('last_tx', " +
      std::to_string(ids::kBootstrapTx) + "), ('last_tx_instant', " +
      std::to_string(datoms.back().v.i) + "), ('schema_gen', 1);";
  MENTAT_RETURN_IF_ERROR(c->Exec(sql));
  return storage::RecountAllAttrStats(c);
}

Result<std::unique_ptr<StoreImpl::Conn>> StoreImpl::NewConn() {
  if (pg_) {
    MENTAT_ASSIGN_OR_RETURN(auto db, storage::Connection::OpenPostgres(uri_));
    MENTAT_RETURN_IF_ERROR(PgSessionSettings(db.get(), options_));
    auto c = std::make_unique<Conn>();
    c->db = std::move(db);
    return c;
  }
  int flags =
      SQLITE_OPEN_NOMUTEX | (options_.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE);
  MENTAT_ASSIGN_OR_RETURN(auto db, storage::Connection::Open(uri_, flags));
  MENTAT_RETURN_IF_ERROR(storage::ApplySettings(db.get(), settings_));
  db->set_table_prefix(table_prefix_);
  auto c = std::make_unique<Conn>();
  c->db = std::move(db);
  return c;
}

Result<StoreImpl::Lease> StoreImpl::Acquire() {
  {
    std::unique_lock<std::mutex> lock(pool_mu_);
    if (borrowed_ && idle_.empty())
      return Status::Busy("the host connection is already in use by another mentat call");
    pool_cv_.wait(lock, [&] { return !idle_.empty() || open_conns_ < max_conns_; });
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      if (borrowed_) borrowed_busy_ = true;
      if (pg_) leased_.insert(c.get());
      return Lease(this, std::move(c));
    }
    ++open_conns_;
  }
  auto c = NewConn();
  if (!c.ok()) {
    std::lock_guard<std::mutex> lock(pool_mu_);
    --open_conns_;
    pool_cv_.notify_one();
    return c.status();
  }
  if (pg_) {
    std::lock_guard<std::mutex> lock(pool_mu_);
    leased_.insert(c->get());
  }
  return Lease(this, std::move(*c));
}

void StoreImpl::Release(std::unique_ptr<Conn> c) {
  std::lock_guard<std::mutex> lock(pool_mu_);
  leased_.erase(c.get());
  if (c && c->replica >= 0) {
    replica_idle_[static_cast<size_t>(c->replica)].push_back(std::move(c));
    return;
  }
  if (borrowed_) borrowed_busy_ = false;
  if (idle_.size() < 16 || in_memory_) {
    idle_.push_back(std::move(c));
  } else {
    --open_conns_;
  }
  pool_cv_.notify_one();
}

void StoreImpl::Publish(std::shared_ptr<const Schema> schema, int64_t gen) {
  std::lock_guard<std::mutex> lock(schema_mu_);
  if (gen > schema_gen_) {
    schema_ = std::move(schema);
    schema_gen_ = gen;
  }
}

std::shared_ptr<const Schema> StoreImpl::CurrentSchema() {
  std::lock_guard<std::mutex> lock(schema_mu_);
  return schema_;
}

Status StoreImpl::Sync(Conn* c) {
  c->pager_version_known = false;
  if (pg_) return SyncPostgres(c);
  MENTAT_ASSIGN_OR_RETURN(int64_t dv, c->db->QueryInt("PRAGMA data_version", 0));
  // The statement above began the read transaction: the pager's version is this snapshot's,
  // and Read may trust it once the snapshot's schema is in `c`. Borrowed connections run
  // inside the host's transactions, and in-memory stores share one cache: Read's optimistic
  // path is for owned file connections only.
  const uint32_t pager_version = c->db->PagerDataVersion();
  // `dv` is recorded only once `c->schema` is this snapshot's: a failure below must leave
  // the next Sync to look again.
  auto synced = [&] {
    c->data_version = dv;
    c->pager_version_known = !borrowed_ && !in_memory_;
    c->pager_version = pager_version;
    return Status::OK();
  };
  // An unchanged data version means no other connection committed since the snapshot
  // `c->schema` was synced in (our own commits do not move it, and they keep c->schema up
  // to date). A borrowed connection is also written by the host and by other stores on it,
  // which do not move its data version: it always compares the schema generation.
  if (dv == c->data_version && c->schema && !borrowed_) return synced();
  // Another process may have changed the file's format since we opened it (a newer mentat
  // upgrading it): reading or writing it with this format's rules would misread it.
  MENTAT_ASSIGN_OR_RETURN(int64_t format, storage::ReadFormatVersion(c->db.get()));
  if (format != storage::kFormatVersion)
    return Status::Unsupported("the store's format changed to " + std::to_string(format) +
                               " while it was open (this mentat reads format " +
                               std::to_string(storage::kFormatVersion) + ")" +
                               (format > storage::kFormatVersion
                                    ? ": it is newer than this mentat supports; upgrade "
                                      "mentat and open the store again"
                                    : "; open the store again"));
  MENTAT_ASSIGN_OR_RETURN(int64_t gen,
                          c->db->QueryInt("SELECT value FROM meta WHERE key = 'schema_gen'", 0));
  if (gen == c->schema_gen && c->schema) return synced();
  {
    std::lock_guard<std::mutex> lock(schema_mu_);
    if (gen == schema_gen_ && schema_) {
      c->schema = schema_;
      c->schema_gen = gen;
      return synced();
    }
  }
  MENTAT_ASSIGN_OR_RETURN(Schema loaded, schema::LoadSchema(c->db.get()));
  auto shared = std::make_shared<const Schema>(std::move(loaded));
  c->schema = shared;
  c->schema_gen = gen;
  Publish(shared, gen);
  return synced();
}

namespace {

// What kPgSchemaProbe read.
struct ProbeValues {
  int64_t format = 0;
  int64_t gen = -1;
  std::optional<Entid> last_tx;
};

// The probe's rows, from the statement `st` (storage's or pg's) that ran it.
template <typename Statement>
Result<ProbeValues> ReadProbe(Statement& st) {
  ProbeValues v;
  for (;;) {
    MENTAT_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const std::string_view key = st.ColumnText(0);
    const int64_t value = st.ColumnInt(1);
    if (key == "format_version") {
      v.format = value;
    } else if (key == "schema_gen") {
      v.gen = value;
    } else if (key == "last_tx") {
      v.last_tx = value;
    }
  }
  return v;
}

}  // namespace

StoreImpl::PgReadEnvelope::PgReadEnvelope(Conn* c, bool one_statement)
    : c_(c), one_statement_(one_statement) {
#ifdef MENTAT_WITH_PG
  pg::Connection* pc = c->db->pg();
  if (!pc || pc->InTransaction()) return;
  auto probe = pc->Cached(kPgSchemaProbe);
  if (!probe.ok()) return;
  before_ = pc->executions();
  pc->ArmEnvelope(&**probe, one_statement);
  armed_ = true;
  c->envelope = this;
#endif
}

Entid StoreImpl::PgReadEnvelope::AssumeLastTx(Entid basis) {
  if (c_->probed_last_tx && *c_->probed_last_tx > basis) {
    above_ = above_ ? std::max(*above_, basis) : basis;
    return *c_->probed_last_tx;
  }
  at_most_ = at_most_ ? std::min(*at_most_, basis) : basis;
  return basis;
}

Result<ResolvedView> StoreImpl::ResolveViewOn(Conn* c, const Db& db) {
  std::optional<Entid> known;
  if (c->envelope && db.basis()) known = c->envelope->AssumeLastTx(*db.basis());
  return ResolveView(c->db.get(), db, known);
}

StoreImpl::PgReadEnvelope::~PgReadEnvelope() {
#ifdef MENTAT_WITH_PG
  // Work that never asked Stands: its transaction, if the envelope opened one, ends here.
  if (c_->envelope == this) c_->envelope = nullptr;
  pg::Connection* pc = c_->db->pg();
  if (armed_ && pc->DisarmEnvelope() && pc->InTransaction()) (void)pc->Exec("ROLLBACK");
#endif
}

bool StoreImpl::PgReadEnvelope::Stands() {
#ifdef MENTAT_WITH_PG
  if (!armed_) return false;
  armed_ = false;
  c_->envelope = nullptr;
  pg::Connection* pc = c_->db->pg();
  if (!pc->DisarmEnvelope()) return false;
  // One statement expected, more ran: those after the first read snapshots of their own
  // (the planner's statistics, loaded before a query after writes, are such statements).
  if (one_statement_ && pc->executions() != before_ + 1) return false;
  // The probe's rows, as the envelope left them (its cached statement was not reset since;
  // a probe without them would run again, on a snapshot of its own: not current then).
  const uint64_t executed = pc->executions();
  bool current = false;
  if (auto probe = pc->Cached(kPgSchemaProbe); probe.ok()) {
    auto read = ReadProbe(**probe);
    if (read.ok() && read->last_tx) c_->probed_last_tx = read->last_tx;
    // The assumptions about the last transaction hold (AssumeLastTx), a missing one is 0.
    const Entid last = read.ok() ? read->last_tx.value_or(0) : 0;
    current = read.ok() && pc->executions() == executed &&
              read->format == storage::kFormatVersion && read->gen == c_->schema_gen &&
              (!at_most_ || last <= *at_most_) && (!above_ || last > *above_);
  }
  // The read's transaction (open unless its statement failed): a read-only COMMIT the
  // reader need not wait for, or a ROLLBACK before the read runs again.
  if (pc->InTransaction()) {
    if (current) {
      pc->CommitAsync();
    } else {
      (void)pc->Exec("ROLLBACK");
    }
  }
  return current;
#else
  return false;
#endif
}

Status StoreImpl::SyncPostgres(Conn* c) {
  // PostgreSQL has no data version to skip this by: every snapshot reads the format and
  // the schema generation (two index reads of meta), so a schema another process changed
  // is loaded before the read or write that follows.
  MENTAT_ASSIGN_OR_RETURN(auto st, c->db->Cached(kPgSchemaProbe));
  MENTAT_ASSIGN_OR_RETURN(ProbeValues probed, ReadProbe(*st));
  const int64_t format = probed.format, gen = probed.gen == -1 ? 0 : probed.gen;
  if (probed.last_tx) c->probed_last_tx = probed.last_tx;
  if (format != storage::kFormatVersion)
    return Status::Unsupported("the store's format changed to " + std::to_string(format) +
                               " while it was open (this mentat reads format " +
                               std::to_string(storage::kFormatVersion) + ")");
  if (gen == c->schema_gen && c->schema) return Status::OK();
  {
    std::lock_guard<std::mutex> lock(schema_mu_);
    if (gen == schema_gen_ && schema_) {
      c->schema = schema_;
      c->schema_gen = gen;
      return Status::OK();
    }
  }
  MENTAT_ASSIGN_OR_RETURN(Schema loaded, schema::LoadSchema(c->db.get()));
  auto shared = std::make_shared<const Schema>(std::move(loaded));
  c->schema = shared;
  c->schema_gen = gen;
  Publish(shared, gen);
  return Status::OK();
}

std::pair<std::shared_ptr<const std::vector<Entid>>, uint64_t> StoreImpl::CachedAttrs() {
  if (!ever_cached_.load(std::memory_order_acquire)) return {nullptr, 0};
  std::lock_guard<std::mutex> lock(cache_mu_);
  return {cached_attrs_, cache_gen_};
}

bool StoreImpl::SetCached(Entid a, bool add) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  std::vector<Entid> attrs = cached_attrs_ ? *cached_attrs_ : std::vector<Entid>();
  auto it = std::lower_bound(attrs.begin(), attrs.end(), a);
  bool present = it != attrs.end() && *it == a;
  if (present == add) return false;
  if (add) {
    attrs.insert(it, a);
  } else {
    attrs.erase(it);
  }
  cached_attrs_ =
      attrs.empty() ? nullptr : std::make_shared<const std::vector<Entid>>(std::move(attrs));
  // Unique in the process: plans are cached per query text across stores (query_glue.cc),
  // keyed by this generation among other things.
  static std::atomic<uint64_t> next_gen{0};
  cache_gen_ = ++next_gen;
  ever_cached_.store(true, std::memory_order_release);
  return true;
}

Status StoreImpl::InitAdvisor() {
  AutoIndex mode = AutoIndex::kSchema;
  if (options_.auto_index) {
    mode = *options_.auto_index;
  } else {
    MENTAT_ASSIGN_OR_RETURN(mode, AutoIndexFromEnv());
  }
  advisor_.set_mode(mode);
  return Status::OK();
}

Result<std::vector<IndexAction>> StoreImpl::TuneIndexes(bool dry_run, bool only_if_idle) {
  if (advisor_.mode() == AutoIndex::kOff) return std::vector<IndexAction>();
  int64_t now = NowMicros() / 1000000;
  std::map<Entid, int64_t> used;
  if (dry_run)
    return Read([&](Conn* c) { return advisor_.Plan(c->db.get(), *c->schema, now, &used); });
  if (options_.read_only) return Status::Unsupported("the store is open read-only");
  if (writer_scope())
    return Status::Unsupported("cannot tune indexes inside a transaction of the same store");
  std::unique_lock<std::mutex> writer(write_mu_, std::defer_lock);
  if (only_if_idle) {
    if (!writer.try_lock()) return std::vector<IndexAction>();
  } else {
    writer.lock();
  }
  MENTAT_ASSIGN_OR_RETURN(Lease lease, Acquire());
  Conn* c = lease.get();
  storage::Transaction txn(c->db.get());
  MENTAT_RETURN_IF_ERROR(txn.Begin(true));
  MENTAT_RETURN_IF_ERROR(Sync(c));
  MENTAT_ASSIGN_OR_RETURN(auto actions, advisor_.Plan(c->db.get(), *c->schema, now, &used));
  for (const auto& act : actions) {
    const Attribute* attr = c->schema->attribute(act.attribute);
    if (act.kind == IndexAction::Kind::kCreate) {
      MENTAT_ASSIGN_OR_RETURN(auto ins,
                              c->db->Cached("INSERT INTO auto_indexes (a, uses, "
                                            "created, last_used) VALUES (?1, ?2, ?3, ?3)"));
      ins->BindInt(1, act.attribute);
      ins->BindInt(2, act.uses);
      ins->BindInt(3, now);
      MENTAT_RETURN_IF_ERROR(ins->Run());
      MENTAT_RETURN_IF_ERROR(tx::MoveAttributeIndex(c->db.get(), act.attribute, true));
    } else {
      MENTAT_ASSIGN_OR_RETURN(auto del, c->db->Cached("DELETE FROM auto_indexes WHERE a = ?1"));
      del->BindInt(1, act.attribute);
      MENTAT_RETURN_IF_ERROR(del->Run());
      if (attr && !attr->schema_value_indexed())
        MENTAT_RETURN_IF_ERROR(tx::MoveAttributeIndex(c->db.get(), act.attribute, false));
    }
  }
  for (const auto& [a, n] : used) {
    MENTAT_ASSIGN_OR_RETURN(auto upd, c->db->Cached("UPDATE auto_indexes SET last_used = ?2, "
                                                    "uses = uses + ?3 WHERE a = ?1"));
    upd->BindInt(1, a);
    upd->BindInt(2, now);
    upd->BindInt(3, n);
    MENTAT_RETURN_IF_ERROR(upd->Run());
  }
  // Every connection reloads its schema (and with it the attribute indexes) at its next
  // snapshot; this one at once.
  if (!actions.empty())
    MENTAT_RETURN_IF_ERROR(
        c->db->Exec("UPDATE meta SET value = value + 1 WHERE key = 'schema_gen'"));
  MENTAT_RETURN_IF_ERROR(txn.Commit());
  c->data_version = -1;
  c->pager_version_known = false;
  c->schema_gen = -1;
  advisor_.EndPeriod();
  return actions;
}

Result<TxReport> StoreImpl::Transact(const edn::Value& data, bool speculative) {
  if (options_.read_only) return Status::Unsupported("the store is open read-only");
  if (writer_scope())
    return Status::Unsupported(
        "a transaction function or predicate cannot transact on the store it runs in: return "
        "the transaction data instead");
  std::lock_guard<std::mutex> writer(write_mu_);
  MENTAT_ASSIGN_OR_RETURN(Lease lease, Acquire());
  Conn* c = lease.get();
  storage::Transaction txn(c->db.get());
  MENTAT_RETURN_IF_ERROR(txn.Begin(true));
  MENTAT_RETURN_IF_ERROR(Sync(c));
  tx::TxInput in{c->db.get(), c->schema.get(), NowMicros()};
  ScriptFunctions fns(owner_);
  if (owner_) in.fns = &fns;
  Result<tx::TxOutput> out = [&] {
    WriterScope scope(this, c);
    return tx::Transact(in, data);
  }();
  if (!out.ok()) {
    // Statements may hold cached state from the failed work; rolling back is enough.
    return out.status();
  }
  if (speculative) {
    MENTAT_RETURN_IF_ERROR(txn.Rollback());
    return std::move(out->report);
  }
  if (!borrowed_ && !in_memory_ && !pg_) {
    // The checkpoint threshold in force at this commit: higher after a large transaction.
    int64_t want = out->report.tx_data.size() >= storage::kLargeTxDatoms
                       ? storage::kWalAutocheckpointLargeTx
                       : storage::kWalAutocheckpoint;
    if (want != c->wal_autocheckpoint) {
      MENTAT_RETURN_IF_ERROR(c->db->Exec("PRAGMA wal_autocheckpoint = " + std::to_string(want)));
      c->wal_autocheckpoint = want;
    }
  }
  MENTAT_RETURN_IF_ERROR(txn.Commit());
  NoteCommit(c->db.get());
  // Our own commit does not move this connection's data version, so the one Sync read
  // inside the write transaction still describes `c->schema` (plus this commit's change,
  // below). It must not be read again here: that would begin a new read transaction, and a
  // commit of another process in between would count as seen while its schema is not.
  // The next read on this connection syncs again (the commit moved the pager's version).
  c->pager_version_known = false;
  if (out->new_schema) {
    std::shared_ptr<const Schema> s = std::move(out->new_schema);
    c->schema = s;
    c->schema_gen += 1;
    Publish(s, c->schema_gen);
  }
  {
    std::lock_guard<std::mutex> lock(listeners_mu_);
    if (listeners_) listeners_->Committed(out->report);
  }
  return std::move(out->report);
}

Status StoreImpl::Vacuum() {
  if (options_.read_only) return Status::Unsupported("the store is open read-only");
  if (borrowed_)
    return Status::Unsupported(
        "vacuum runs on a store of its own file; in the host's database, run VACUUM there");
  if (writer_scope()) return Status::Unsupported("cannot vacuum inside a transaction of the store");
  std::lock_guard<std::mutex> writer(write_mu_);
  MENTAT_ASSIGN_OR_RETURN(Lease lease, Acquire());
  storage::Connection* db = lease.get()->db.get();
  if (pg_) {
    // PostgreSQL's VACUUM reclaims dead rows (excised datoms among them) for reuse and
    // refreshes the planner's statistics; VACUUM FULL would rewrite the tables under a lock
    // that blocks readers.
    MENTAT_RETURN_IF_ERROR(
        db->Exec("VACUUM (ANALYZE) datoms, history, fulltext_docs, attr_values"));
    return Status::OK();
  }
  const char* checkpoint = in_memory_ ? "" : "PRAGMA wal_checkpoint(TRUNCATE);";
  MENTAT_RETURN_IF_ERROR(db->Exec(std::string(checkpoint) + "VACUUM;" + checkpoint));
  // VACUUM may renumber nothing mentat keeps (WITHOUT ROWID tables and the fulltext
  // content table's explicit ids), but it resets the statements cached on the connection.
  db->ClearCache();
  return Status::OK();
}

std::shared_ptr<Listeners> StoreImpl::listeners() {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  if (!listeners_) listeners_ = std::make_shared<Listeners>(this);
  return listeners_;
}

StoreImpl::~StoreImpl() {
  std::shared_ptr<Listeners> l;
  {
    std::lock_guard<std::mutex> lock(listeners_mu_);
    l = listeners_;
  }
  if (l) l->Shutdown();  // its thread reads through this store
}

}  // namespace mentat
