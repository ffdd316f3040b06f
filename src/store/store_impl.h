// StoreImpl: connections, the schema cache, and the glue between the public Store API
// and the subsystems (tx, query, pull).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mentat/sqlite_host.h"
#include "mentat/store.h"
#include "storage/format.h"
#include "storage/sqlite.h"
#include "store/attr_cache.h"
#include "store/index_advisor.h"
#include "store/value_counts.h"

namespace mentat {

namespace pull {
struct Pattern;
}  // namespace pull

class Listeners;
struct ResolvedView;

// The Store open() returns is a StoreImpl: internal code reaches it with ImplOf.
class StoreImpl final : public Store {
 public:
  class PgReadEnvelope;
  // One SQLite connection and what it knows about its snapshot.
  struct Conn {
    std::unique_ptr<storage::Connection> db;
    int64_t data_version = -1;
    // SQLite's pager data version at the snapshot `schema` was synced in, when known
    // (owned file connections; see Read).
    bool pager_version_known = false;
    uint32_t pager_version = 0;
    int64_t schema_gen = -1;
    std::shared_ptr<const Schema> schema;
    int64_t wal_autocheckpoint = storage::kWalAutocheckpoint;  // as set on `db`
    // Pull patterns parsed against `pull_schema` (query_glue.cc), most recent last. The
    // schema is held so that its address cannot be reused by another one.
    std::shared_ptr<const Schema> pull_schema;
    std::vector<std::pair<edn::Value, std::shared_ptr<const pull::Pattern>>> pull_patterns;
    // This connection's attribute caches (Store::cache), created and registered on `db` at
    // first use; declared after `db`, so destroyed before it.
    std::unique_ptr<AttrCache> attr_cache;
    // The last transaction of the snapshot whose pager version is `last_tx_version`, as
    // the attribute caches last read it (query_glue.cc, UseAttributeCaches).
    bool last_tx_known = false;
    uint32_t last_tx_version = 0;
    Entid last_tx = 0;
    // PostgreSQL: the read replica (Options::replicas) this connection is to, or -1 for the
    // primary.
    int replica = -1;
    // PostgreSQL: the envelope armed on this connection while Read's work runs in it, and
    // the last transaction the schema probe read last (kPgSchemaProbe), when one has.
    PgReadEnvelope* envelope = nullptr;
    std::optional<Entid> probed_last_tx;
  };

  // A connection borrowed from the pool; returned on destruction.
  class Lease {
   public:
    Lease(StoreImpl* s, std::unique_ptr<Conn> c) : s_(s), c_(std::move(c)) {}
    Lease(Lease&& o) noexcept : s_(o.s_), c_(std::move(o.c_)) {}
    Lease(const Lease&) = delete;
    ~Lease();
    Conn* operator->() const { return c_.get(); }
    Conn* get() const { return c_.get(); }

   private:
    StoreImpl* s_;
    std::unique_ptr<Conn> c_;
  };

  static Result<std::unique_ptr<StoreImpl>> Open(const std::string& path, const Options& options);
  // Opens a store inside `db`'s main database, a connection owned by the caller (the SQLite
  // extension's host connection): mentat's tables sit beside the host's tables, every read
  // and write runs on `db` itself, inside the host's transaction when there is one, and the
  // host's pragmas are left alone. With `options.create` false, a database without a store
  // gives kNotFound instead of getting one. One call at a time (a second concurrent call
  // gets kBusy instead of waiting). Prepared statements are cached until
  // ReleaseStatements(), which the caller must call before `db` is closed.
  // REQUIRES: `db` outlives the store.
  static Result<std::unique_ptr<StoreImpl>> OpenBorrowed(sqlite3* db, const Options& options);
  // A store in PostgreSQL (`name`: storage::Connection::OpenPostgres).
  static Result<std::unique_ptr<StoreImpl>> OpenPostgres(const std::string& name,
                                                         const Options& options);

  Result<Lease> Acquire();
  // PostgreSQL with Options::replicas: a connection to the next standby that has replayed
  // basis_lsn_ (waiting up to replica_wait_ms), or an empty lease when none has.
  Result<Lease> AcquireReplica();
  // After a commit of this store (PostgreSQL with replicas): the primary's WAL position,
  // which reads wait for a standby to replay.
  void NoteCommit(storage::Connection* c);
  // Open's last steps: under a write transaction, creates and bootstraps an empty store or
  // upgrades an old one (Inspect looks again first); then `first` becomes the pool's first
  // connection, synced.
  Status CreateOrUpgrade(storage::Connection* c, bool beside_other_tables);
  Status Adopt(std::unique_ptr<storage::Connection> first);
  // Brings `c`'s schema in line with its current snapshot (PRAGMA data_version, then the
  // schema generation). REQUIRES: inside a transaction on `c`.
  Status Sync(Conn* c);
  Status SyncPostgres(Conn* c);
  // The statement SyncPostgres reads the format, the schema generation and the last
  // transaction with.
  static constexpr const char* kPgSchemaProbe =
      "SELECT key, value FROM meta WHERE key IN ('format_version', 'schema_gen', 'last_tx')";
  // ResolveView for work on `c`: in an armed PgReadEnvelope a Db's basis is compared with
  // the last transaction the envelope assumes (PgReadEnvelope::AssumeLastTx) instead of
  // one read by a statement of its own, which would make the envelope's work two
  // statements (so run twice).
  static Result<ResolvedView> ResolveViewOn(Conn* c, const Db& db);
  // Read's one-round-trip path on PostgreSQL: armed on `c` (outside a transaction), the
  // work's first statement goes out in one pipeline after BEGIN and kPgSchemaProbe
  // (pg::Connection::ArmEnvelope), the rest runs in that transaction. Stands() after the
  // work: whether the probe found `c`'s schema current; it then commits without waiting
  // (pg::Connection::CommitAsync), else rolls back. Never armed in a build without
  // PostgreSQL.
  class PgReadEnvelope {
   public:
    // `one_statement`: the work is expected to run one statement, whose COMMIT then goes
    // in the same pipeline (a second statement would read another snapshot: Stands() is
    // false then); else the transaction stays open for the work's other statements.
    PgReadEnvelope(Conn* c, bool one_statement);
    ~PgReadEnvelope();
    PgReadEnvelope(const PgReadEnvelope&) = delete;
    PgReadEnvelope& operator=(const PgReadEnvelope&) = delete;
    bool armed() const { return armed_; }
    bool Stands();
    // The snapshot's last transaction as the work assumes it, for a Db of basis `basis`
    // (ResolveViewOn): past the basis when this connection's probe has seen it so (it only
    // grows), else the basis itself (the store has not moved since the Db was taken).
    // Stands() is false when the probe's value contradicts an assumption made.
    Entid AssumeLastTx(Entid basis);

   private:
    Conn* c_;
    bool armed_ = false;
    bool one_statement_ = false;
    uint64_t before_ = 0;
    // The assumptions made: last transaction <= at_most_, and > above_.
    std::optional<Entid> at_most_, above_;
  };

  Result<TxReport> Transact(const edn::Value& data, bool speculative);
  // Store::vacuum.
  Status Vacuum();

  // How Read brackets its work.
  enum class ReadKind : uint8_t {
    kTransaction,  // BEGIN ... COMMIT: one snapshot for every statement of `fn`
    kAutocommit,   // no BEGIN/COMMIT when the snapshot is known not to have moved
  };

  // Runs `fn(conn)` on one snapshot of the store with that snapshot's schema.
  //
  // Optimistically first, without Sync's statements: `fn` runs with the schema of the
  // connection's last synced snapshot, and its result stands when it ran at least one
  // statement and SQLite's pager data version is still that snapshot's. The version moves
  // when a read transaction begins on a store that changed since the connection's last one
  // (and at its own commits), so an unchanged version means every read transaction of `fn`
  // saw the synced snapshot. kAutocommit also leaves out BEGIN and COMMIT: each statement
  // of `fn` then begins its own read transaction, all checked by the version (for work of
  // one statement, where the bracket is pure cost). Otherwise, or when the version moved,
  // `fn` runs (again) inside a transaction after Sync. `fn` may therefore run twice; its
  // side effects must allow that.
  template <typename Fn>
  auto Read(Fn&& fn, ReadKind kind = ReadKind::kTransaction)
      -> decltype(fn(static_cast<Conn*>(nullptr))) {
    if (Conn* w = writer_scope()) return fn(w);
    if (!replicas_.empty()) {
      // A standby that has replayed this store's basis, else the primary (below).
      auto replica = AcquireReplica();
      if (replica.ok() && replica->get()) {
        Conn* c = replica->get();
        storage::Transaction txn(c->db.get());
        Status st = txn.Begin(false);
        if (st.ok()) st = Sync(c);
        if (st.ok()) {
          auto result = fn(c);
          // A standby cancels a read that conflicts with its replay (SQLSTATE 40001,
          // kBusy): the primary answers instead. Other outcomes stand.
          if (result.ok() || result.status().code() != Code::kBusy) {
            (void)txn.Commit();
            return result;
          }
        }
      }
    }
    MENTAT_ASSIGN_OR_RETURN(Lease lease, Acquire());
    Conn* c = lease.get();
    // PostgreSQL: the work's first statement goes out in one round trip with BEGIN and the
    // schema generation, the rest in that transaction, and COMMIT without waiting
    // (PgReadEnvelope); the result stands when the snapshot's schema is the connection's.
    if (pg_ && c->schema && !c->db->InTransaction()) {
      PgReadEnvelope envelope(c, kind == ReadKind::kAutocommit);
      if (envelope.armed()) {
        auto result = fn(c);
        // An interrupted read is not run again (its interrupt would be lost).
        if (envelope.Stands() || (!result.ok() && result.status().code() == Code::kInterrupted))
          return result;
      }
    }
    const bool known = c->pager_version_known;
    if (known && kind == ReadKind::kAutocommit && !c->db->InTransaction()) {
      uint64_t steps = storage::ThreadSteps();
      auto result = fn(c);
      if (storage::ThreadSteps() != steps && !c->db->InTransaction() &&
          c->db->PagerDataVersion() == c->pager_version)
        return result;
    }
    storage::Transaction txn(c->db.get());
    MENTAT_RETURN_IF_ERROR(txn.Begin(false));
    if (known) {
      auto result = fn(c);
      if (c->db->InTransaction() && c->db->PagerDataVersion() == c->pager_version) {
        (void)txn.Commit();
        return result;
      }
    }
    MENTAT_RETURN_IF_ERROR(Sync(c));
    auto result = fn(c);
    (void)txn.Commit();
    return result;
  }

  // Finalizes every cached prepared statement (on a borrowed connection, before the host
  // closes it). The store stays usable; statements are prepared again when needed.
  void ReleaseStatements();
  bool borrowed() const { return borrowed_; }

  std::shared_ptr<const Schema> CurrentSchema();
  const std::string& path() const { return path_; }
  const Options& options() const { return options_; }
  std::atomic<uint64_t>& interrupt_gen() { return interrupt_gen_; }
  // Store::interrupt(): running queries stop. They notice the generation themselves; on a
  // borrowed connection, where mentat sets no progress handler, a call in progress is also
  // interrupted through sqlite3_interrupt(). Any thread.
  void Interrupt();
  bool in_memory() const { return in_memory_; }
  bool is_pg() const { return pg_; }
  ValueCounts& value_counts() { return value_counts_; }
  IndexAdvisor& advisor() { return advisor_; }

  // The attributes Store::cache registered (sorted entity ids; null for none) and a
  // generation that changes with them.
  std::pair<std::shared_ptr<const std::vector<Entid>>, uint64_t> CachedAttrs();
  // Adds (`add`) or removes attribute `a`; false when that changed nothing.
  bool SetCached(Entid a, bool add);

  // One value-index tuning pass (Store::tune_indexes). With `only_if_idle`, a pass that
  // would wait for this process's writer lock is skipped (returns no actions): the
  // automatic pass after a query never waits on, or deadlocks with, a writer.
  Result<std::vector<IndexAction>> TuneIndexes(bool dry_run, bool only_if_idle = false);

  // While this thread runs a transaction on this store (its functions and predicates,
  // tx/functions.h, read the store): the writer's connection, inside the write
  // transaction, on which Read then runs its work, so that they see the transaction's own
  // writes and never wait for a connection the writer holds; else null. Writes from such a
  // read (Transact, TuneIndexes, Vacuum) are refused rather than deadlock.
  Conn* writer_scope() const { return tl_writer_store_ == this ? tl_writer_conn_ : nullptr; }
  // The public Store over this one (for the database values functions get).
  void set_owner(Store* owner) { owner_ = owner; }

  // Store::listen's registry (listeners.h), created at the first listener.
  std::shared_ptr<Listeners> listeners();
  ~StoreImpl();

 private:
  StoreImpl() = default;
  Result<std::unique_ptr<Conn>> NewConn();
  void Release(std::unique_ptr<Conn> c);
  Status Bootstrap(storage::Connection* c);
  // Installs the system entities formats after `from_format` added (an upgrade's datoms).
  static Status InstallSystemEntities(storage::Connection* c, int from_format);
  // Sets the advisor's mode from options_ (or MENTAT_AUTO_INDEX).
  Status InitAdvisor();
  void Publish(std::shared_ptr<const Schema> schema, int64_t gen);

  // Sets writer_scope() for this thread while it lives.
  class WriterScope {
   public:
    WriterScope(const StoreImpl* s, Conn* c) {
      tl_writer_store_ = s;
      tl_writer_conn_ = c;
    }
    ~WriterScope() {
      tl_writer_store_ = nullptr;
      tl_writer_conn_ = nullptr;
    }
    WriterScope(const WriterScope&) = delete;
    WriterScope& operator=(const WriterScope&) = delete;
  };
  inline static thread_local const StoreImpl* tl_writer_store_ = nullptr;
  inline static thread_local Conn* tl_writer_conn_ = nullptr;

  Store* owner_ = nullptr;
  std::string path_;
  std::string uri_;
  // The prefix of the store's table names (storage/table_prefix.h): host mode's layout,
  // found or chosen by Inspect on the first connection and given to every other one.
  std::string table_prefix_;
  bool in_memory_ = false;
  bool pg_ = false;  // a PostgreSQL store (uri_ is its connection string)
  bool borrowed_ = false;
  // The borrowed connection (OpenBorrowed), and whether it is leased out: guarded by
  // pool_mu_, so that Interrupt() never interrupts the host's own statements between calls.
  sqlite3* borrowed_db_ = nullptr;
  bool borrowed_busy_ = false;
  Options options_;
  storage::ConnectionSettings settings_;

  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<Conn>> idle_;
  // Read replicas (Options::replicas): their names, idle connections, the next to try,
  // and the primary's WAL position (bytes) a standby must have replayed.
  std::vector<std::string> replicas_;
  std::vector<std::vector<std::unique_ptr<Conn>>> replica_idle_;
  std::atomic<size_t> next_replica_{0};
  std::atomic<int64_t> basis_lsn_{0};
  std::set<Conn*> leased_;  // PostgreSQL: the connections leased out (Interrupt cancels)
  int open_conns_ = 0;
  int max_conns_ = 64;

  std::mutex schema_mu_;
  std::shared_ptr<const Schema> schema_;
  int64_t schema_gen_ = -1;

  std::mutex write_mu_;  // serializes this process's writers before SQLite's lock
  std::atomic<uint64_t> interrupt_gen_{0};
  std::mutex cache_mu_;
  std::shared_ptr<const std::vector<Entid>> cached_attrs_;
  uint64_t cache_gen_ = 0;
  std::atomic<bool> ever_cached_{false};  // lets queries of a store without caches skip the lock
  ValueCounts value_counts_;
  IndexAdvisor advisor_{AutoIndex::kSchema};
  std::mutex listeners_mu_;
  std::shared_ptr<Listeners> listeners_;
};

// Wall clock in microseconds since the epoch.
int64_t NowMicros();

// The implementation of `s` (every Store is a StoreImpl).
inline StoreImpl* ImplOf(Store* s) { return static_cast<StoreImpl*>(s); }
inline const StoreImpl* ImplOf(const Store* s) { return static_cast<const StoreImpl*>(s); }
inline StoreImpl* ImplOf(const std::unique_ptr<Store>& s) { return ImplOf(s.get()); }
inline StoreImpl* ImplOf(const std::shared_ptr<Store>& s) { return ImplOf(s.get()); }

// Debug builds (no NDEBUG): aborts with a message naming `call` when `store` is not a live
// Store (a Db, prepared query or entity used after its Store was destroyed). Release
// builds: nothing.
void CheckStoreAlive(const Store* store, const char* call);

}  // namespace mentat
