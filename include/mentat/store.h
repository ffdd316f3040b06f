// mentat::Store: an embedded, Datomic-style database in one SQLite file.
//
//   auto store = mentat::Store::open("my.db");          // "" for in-memory
//   auto report = (*store)->transact(R"([{:db/ident :user/name ...}])");
//   auto rows = (*store)->q("[:find ?n :where [_ :user/name ?n]]");
//
// Thread safety: a Store may be used from many threads at once. Reads run in parallel on
// per-thread connections and never wait for the writer; writes are serialized (a second
// writer, in this or another process, waits up to the busy timeout). Db values are
// immutable and may be shared between threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/edn.h"
#include "mentat/entity.h"
#include "mentat/schema.h"
#include "mentat/status.h"

namespace mentat {

class Store;

// How hard a commit is pushed to disk (PRAGMA synchronous in WAL mode).
//  kOff:    no fsync; an OS crash or power loss may lose recent transactions.
//  kNormal: (default) a process crash loses nothing acknowledged; an OS crash or power
//           loss may roll back the most recent transactions, never corrupts the store.
//  kFull:   every acknowledged transaction survives power loss.
// On PostgreSQL, kOff sets synchronous_commit = off on the store's connections (a server or
// OS crash may lose the latest acknowledged transactions, never corrupts); the other levels
// keep the server's synchronous_commit.
enum class Synchronous { kOff = 0, kNormal = 1, kFull = 2, kExtra = 3 };

// How mentat manages value indexes (the Rust mentat's AutoIndex; doc/performance.md "Value
// indexes"). An attribute's values are indexed when the schema says so (:db/unique,
// :db/index, refs), in every mode.
//  kOff:      nothing more; tune_indexes does nothing.
//  kSchema:   (default) only the schema's value indexes; tune_indexes drops any adaptive
//             index an earlier adaptive run created.
//  kAdaptive: also an adaptive value index for an attribute that queries filter by value
//             often (min_uses queries in one tuning period), dropped again when idle; tuning
//             runs by itself every 1,000 queries and when an attribute reaches min_uses.
enum class AutoIndex { kOff, kSchema, kAdaptive };

// One value-index change that tune_indexes made (or, in a dry run, would make).
struct IndexAction {
  enum class Kind { kCreate, kDrop };
  Kind kind = Kind::kCreate;
  Entid attribute = 0;
  std::string ident;   // without the leading ':'
  int64_t uses = 0;    // kCreate: value-filtered queries on the attribute in this period
  std::string reason;  // kDrop: "idle", "mode schema", "in the schema", "no such attribute"
  // "create value index on :a/b (20 value-filtered queries)", "drop value index on :a/b (idle)"
  std::string ToString() const;
  friend bool operator==(const IndexAction&, const IndexAction&) = default;
};

// Which way an attribute cache maps (Store::cache; the Rust mentat's CacheDirection).
// kForward: entity -> value, what queries and this store use. The value index (AVET)
// already serves value -> entity lookups, so kReverse and kBoth are refused.
enum class CacheDirection { kForward, kReverse, kBoth };

struct Options {
  Synchronous synchronous = Synchronous::kNormal;
  int busy_timeout_ms = 10000;  // how long a writer waits for another writer
  bool read_only = false;
  bool create = true;  // create the file when missing
  // Defaults come from MENTAT_MMAP_SIZE (1 GiB) and MENTAT_TEMP_STORE (1) when left
  // unset (-1).
  int64_t mmap_size = -1;
  int temp_store = -1;
  // The value-index mode; unset: MENTAT_AUTO_INDEX (off, schema or adaptive), else
  // kSchema. Another MENTAT_AUTO_INDEX value makes open fail with kInvalidArgument.
  std::optional<AutoIndex> auto_index;
  // PostgreSQL: read-only standbys of the store's database (streaming replicas, named as
  // Store::open takes names; the primary's schema when they name none). Queries, pulls and
  // entity reads go to them in turn, each to a standby that has replayed everything this
  // Store committed and everything committed before it opened, waiting up to
  // `replica_wait_ms` for that, else to the primary; a read the standby cancels (a replay
  // conflict) runs again on the primary. Writes always go to the primary.
  std::vector<std::string> replicas;
  int replica_wait_ms = 1000;
};

// One datom [e a v tx added].
struct Datom {
  Entid e = 0;
  Entid a = 0;
  edn::Value v;
  Entid tx = 0;
  bool added = true;
  friend bool operator==(const Datom&, const Datom&) = default;
};

struct TxReport {
  Entid tx_id = 0;
  int64_t tx_instant = 0;                // microseconds since the epoch
  std::map<std::string, Entid> tempids;  // user tempid string -> entity id
  std::vector<Datom> tx_data;            // every datom asserted or retracted, with the tx's
                                         // own :db/txInstant
  // {:tx-id N :tx-instant #inst ... :tempids {"a" 65536} :tx-data [[e a v tx added] ...]}
  // Attributes print as idents when `schema` is given.
  edn::Value ToEdn(const Schema* schema = nullptr) const;
};

// A point in time: a transaction id, or an instant (the last transaction at or before it).
struct TxPoint {
  std::optional<Entid> tx;
  std::optional<int64_t> instant_micros;
  static TxPoint Tx(Entid t) { return TxPoint{t, std::nullopt}; }
  static TxPoint Instant(int64_t micros) { return TxPoint{std::nullopt, micros}; }
};

// Datomic's t of a transaction, and back: t counts from the start of the transaction
// partition (the first transaction is t 1). A TxPoint below kTxStart passed to
// Store::tx_range is a t.
inline int64_t tx_to_t(Entid tx) { return tx - ids::kTxStart; }
inline Entid t_to_tx(int64_t t) { return t + ids::kTxStart; }

// Receives committed transactions (Store::listen). Called on the store's listener thread,
// one report at a time in commit order; it may read from and transact to the store.
using TxListener = std::function<void(const TxReport&)>;

// Stops its listener when stopped or destroyed (movable, not copyable). After stop()
// returns the callback is not running and is never called again.
class ListenerHandle {
 public:
  ListenerHandle() = default;
  ListenerHandle(std::shared_ptr<void> registry, uint64_t id)
      : registry_(std::move(registry)), id_(id) {}
  ListenerHandle(ListenerHandle&& o) noexcept;
  ListenerHandle& operator=(ListenerHandle&& o) noexcept;
  ListenerHandle(const ListenerHandle&) = delete;
  ListenerHandle& operator=(const ListenerHandle&) = delete;
  ~ListenerHandle();
  void stop();
  bool active() const { return registry_ != nullptr; }

 private:
  std::shared_ptr<void> registry_;
  uint64_t id_ = 0;
};

// Datomic's tx-report queue (Store::tx_report_queue): every committed transaction's report,
// in commit order, until the queue is destroyed.
class TxReportQueue {
 public:
  virtual ~TxReportQueue() = default;
  // The next report, waiting at most `timeout`; std::nullopt when none came.
  virtual std::optional<TxReport> poll(std::chrono::milliseconds timeout) = 0;
  // Reports waiting now.
  virtual size_t size() const = 0;
};

// The result of a query. `columns` names the find elements ("?e", "(count ?i)").
struct QueryResult {
  enum class Shape { kRelation, kCollection, kTuple, kScalar };
  Shape shape = Shape::kRelation;
  std::vector<std::string> columns;
  // Relation: every row. Collection: one value per row (rows of one column).
  // Tuple and scalar: zero rows (no result) or one row.
  std::vector<std::vector<edn::Value>> rows;
  // Return-map keys (:keys/:strs/:syms) when the query asked for maps; each row then
  // prints as a map.
  std::vector<edn::Value> map_keys;

  // Relation -> [[...] ...], collection -> [...], tuple -> [...] or nil,
  // scalar -> value or nil; with map keys, rows become maps.
  edn::Value ToEdn() const;
};

// What Store::check found.
struct CheckReport {
  // Each problem found: its kind, then what and where ("uniqueness: 2 values of :user/email
  // are held by more than one entity (:db/unique)"); the first few of each kind, then a
  // count of the rest. Empty when the store is sound.
  std::vector<std::string> problems;
  // What was examined, with counts ("datoms" 985480, "attributes" 40, ...).
  std::vector<std::pair<std::string, int64_t>> checked;
  bool ok() const { return problems.empty(); }
  // {:ok BOOL :checked {"datoms" N ...} :problems ["..." ...]}
  edn::Value ToEdn() const;
};

class Db;
class PreparedQuery;
namespace query {
class Prepared;  // internal (src/query)
}

// A query input: a value bound to an :in variable, or a database for a `$name` source.
struct Input {
  Input(edn::Value v) : value(std::move(v)) {}              // NOLINT: implicit by design
  Input(std::shared_ptr<const Db> d) : db(std::move(d)) {}  // NOLINT
  edn::Value value;
  std::shared_ptr<const Db> db;
};

// Per-call query options.
struct QueryOptions {
  std::vector<Input> inputs;  // positional, for the :in variables other than `$`
  std::optional<TxPoint> as_of;
  std::optional<TxPoint> since;
  bool history = false;
  std::optional<int64_t> timeout_ms;
  bool use_planner = true;  // false: keep the written clause order
  // Optimizer passes to leave out, by name: value_counts, seed_recursion, pass_through,
  // agg_pushdown, or_joins, join_order, recursive_cte, as_of_probes, attribute_cache,
  // entity_sets (src/query/README.md "Optimizer passes"; use_planner =
  // false leaves out all but attribute_cache). Results are the same with any of them off;
  // for measurements side by side and differential tests. An unknown name is a
  // kInvalidArgument error of the query that lists the passes.
  std::vector<std::string> disabled_passes;
  // q_explain only: also run the query and show, per step of the join order, the
  // estimated and the actual rows after it and the time to reach it, and the time of the
  // rules and of the whole query ("explain analyze"). Options JSON "analyze": true.
  bool analyze = false;
  // A stop check of the caller's: polled on the calling thread while the query runs
  // (between SQLite steps, about every thousand of its instructions, and in the engine's
  // own loops). Returning true stops the query with kInterrupted, as interrupt() does; the
  // store stays usable. The SQLite extension passes its host connection's interrupt
  // (sqlite3_interrupt, Ctrl-C in the sqlite3 shell) this way. Must be cheap.
  std::function<bool()> interrupted;
};

// Parses {"inputs": [...], "asOf": t, "since": t, "history": bool, "timeout": ms,
// "planner": bool, "disabledPasses": ["entity_sets", ...], "analyze": bool} for the CLI and both
// extensions. Unknown keys and wrong shapes are kInvalidArgument errors that say what is
// wrong. `query` gives the :in spec so JSON values bind with the right shape.
Result<QueryOptions> options_from_json(std::string_view query, std::string_view json);

// What a query's results will look like, without running it: a QueryResult with no rows
// whose shape, columns and map_keys are those Store::q gives. Errors: the parse errors of
// Store::q (kParse with line:column, kInvalidArgument for a malformed query).
Result<QueryResult> describe_query(std::string_view query);

// A database value: the store as of a basis, optionally filtered (as-of, since, history).
class Db {
 public:
  Db as_of(TxPoint t) const;
  Db since(TxPoint t) const;
  Db history() const;

  Result<QueryResult> q(std::string_view query, std::vector<Input> inputs = {}) const;
  Result<QueryResult> q(std::string_view query, const QueryOptions& options) const;
  Result<std::string> q_explain(std::string_view query, const QueryOptions& options = {}) const;
  // Parses `query` once (errors: the parse errors of q); run() then executes it on this
  // database value any number of times, with new inputs, skipping parsing and reusing
  // cached plans.
  Result<PreparedQuery> q_prepare(std::string_view query) const;

  Result<edn::Value> pull(std::string_view pattern, const edn::Value& eid) const;
  Result<std::vector<edn::Value>> pull_many(std::string_view pattern,
                                            const std::vector<edn::Value>& eids) const;
  // Datoms of `index` (:eavt :aevt :avet :vaet) whose leading components equal
  // `components` (entity ids, idents, lookup refs, values).
  Result<std::vector<Datom>> datoms(std::string_view index,
                                    const std::vector<edn::Value>& components = {}) const;
  // Datoms of `index` in index order, from the first datom >= `components` (a prefix, as
  // for datoms(); empty: the start of the index) to the end of the index, at most `limit`
  // of them. Refs, idents and lookup refs are resolved as for datoms().
  Result<std::vector<Datom>> seek_datoms(std::string_view index,
                                         const std::vector<edn::Value>& components = {},
                                         std::optional<size_t> limit = std::nullopt) const;
  // AVET datoms of `attr` (an ident keyword or id) with start <= v < end, in (v, e) order;
  // a nil bound is open. Bounds are values of the attribute's type (entity identifiers
  // for refs). At most `limit` datoms.
  Result<std::vector<Datom>> index_range(const edn::Value& attr, const edn::Value& start,
                                         const edn::Value& end,
                                         std::optional<size_t> limit = std::nullopt) const;
  // The entity `eid` (an id, ident or lookup ref) of this database value, read lazily
  // (include/mentat/entity.h). Errors: kNotFound when an ident or lookup ref names
  // nothing; kUnsupported on a history database.
  Result<Entity> entity(const edn::Value& eid) const;

  Store* store() const { return store_; }
  std::optional<Entid> basis() const { return basis_; }
  // Datomic's basis-t: the t of the basis (0 before any transaction).
  int64_t basis_t() const { return basis_ && *basis_ >= ids::kTxStart ? tx_to_t(*basis_) : 0; }
  const std::optional<TxPoint>& as_of_point() const { return as_of_; }
  const std::optional<TxPoint>& since_point() const { return since_; }
  bool is_history() const { return history_; }

 private:
  friend class Store;
  Store* store_ = nullptr;
  std::optional<Entid> basis_;  // the last tx when this value was taken
  std::optional<TxPoint> as_of_;
  std::optional<TxPoint> since_;
  bool history_ = false;
};

// A parsed query bound to a database value (Db::q_prepare, Store::q_prepare). Cheap to
// copy; run() may be called from many threads at once.
class PreparedQuery {
 public:
  Result<QueryResult> run(std::vector<Input> inputs = {}) const;
  Result<QueryResult> run(const QueryOptions& options) const;
  Result<std::string> explain(const QueryOptions& options = {}) const;

 private:
  friend class Db;
  PreparedQuery(Db db, std::shared_ptr<const query::Prepared> p);
  std::shared_ptr<const Db> db_;
  std::shared_ptr<const query::Prepared> prepared_;
};

// What migrate copied and verified.
struct MigrateReport {
  int64_t datoms = 0;      // current datoms copied
  int64_t history = 0;     // history rows copied
  int64_t attributes = 0;  // attributes whose datoms and history were compared
  // {:datoms N :history N :attributes N :verified true}
  edn::Value ToEdn() const;
};

// Copies the store at `src` (a file or a PostgreSQL name, as Store::open takes them) into
// a new store at `dst` (either kind): every datom and the whole history with the same
// entity and transaction ids, the partitions, the planner's statistics and the fulltext
// documents; then verifies, reading both back, that each attribute has the same number of
// current datoms and of history rows and the same order-independent hash of them. `dst`
// must hold no store yet (kConflict otherwise). The copy is one transaction of `dst`: on an
// error (verification included) nothing of it is committed and `dst` is an empty new store.
// `progress(done, total)` is called as rows are copied. Reads `src` in one snapshot:
// writers may go on meanwhile.
Result<MigrateReport> migrate(const std::string& src, const std::string& dst,
                              const std::function<void(int64_t, int64_t)>& progress = {});

// A store. Its implementation derives from it (src/store); a Store exists only as what
// open() returns. Database values (Db), prepared queries and entities taken from a Store
// refer to it and must not outlive it: debug builds (without NDEBUG) check this and abort
// with a message naming the call.
class Store {
 public:
  // Opens (creating and bootstrapping if needed) the store at `path`; "" is in-memory.
  // A file of an older format is upgraded in place; a newer or foreign file is refused.
  // Open reads only the schema and partition marks: O(1) in the size of history.
  static Result<std::unique_ptr<Store>> open(const std::string& path, const Options& options = {});
  virtual ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Transacts EDN transaction data (a vector of list forms and entity maps).
  // A failed transaction writes nothing.
  Result<TxReport> transact(std::string_view edn);
  Result<TxReport> transact(const edn::Value& tx_data);
  // Speculative: computes the report as if transacted, then rolls back.
  Result<TxReport> with(std::string_view edn);
  Result<TxReport> with(const edn::Value& tx_data);

  // The current database value.
  Db db();
  Result<QueryResult> q(std::string_view query, std::vector<Input> inputs = {});
  Result<QueryResult> q(std::string_view query, const QueryOptions& options);
  Result<std::string> q_explain(std::string_view query, const QueryOptions& options = {});
  // A prepared query on the current database: each run() sees the latest transactions.
  Result<PreparedQuery> q_prepare(std::string_view query);
  Result<edn::Value> pull(std::string_view pattern, const edn::Value& eid);
  Result<std::vector<edn::Value>> pull_many(std::string_view pattern,
                                            const std::vector<edn::Value>& eids);
  Result<std::vector<Datom>> datoms(std::string_view index,
                                    const std::vector<edn::Value>& components = {});
  // The same as Db::seek_datoms, Db::index_range and Db::entity on db().
  Result<std::vector<Datom>> seek_datoms(std::string_view index,
                                         const std::vector<edn::Value>& components = {},
                                         std::optional<size_t> limit = std::nullopt);
  Result<std::vector<Datom>> index_range(const edn::Value& attr, const edn::Value& start,
                                         const edn::Value& end,
                                         std::optional<size_t> limit = std::nullopt);
  Result<Entity> entity(const edn::Value& eid);

  // Makes every query running on this store fail with kInterrupted; the store stays
  // usable. Callable from any thread.
  void interrupt();

  // Value indexes (AutoIndex above). tune_indexes runs one tuning pass now and returns its
  // actions; with `dry_run` it only plans them. Applying is one write transaction (an
  // attribute's datoms move between the attribute indexes: O(its datoms)); kUnsupported on a
  // read-only store. Uses are counted per Store and reset by every non-dry pass.
  void set_auto_index(AutoIndex mode);
  AutoIndex auto_index() const;
  // Adaptive thresholds: queries within one period that earn an index (default 16), and how
  // long an adaptive index may go unused before it is dropped (default 24 hours).
  void set_index_tuning(int min_uses, std::chrono::seconds idle);
  Result<std::vector<IndexAction>> tune_indexes(bool dry_run = false);

  // Attribute caches (doc/performance.md "Attribute caches"): every current value of a
  // cardinality-one attribute held in memory by each connection of this Store, so that a
  // query that has found its entities reads their values of the attribute without an
  // index probe per entity. Queries on the current database use it where a pattern's
  // entity is found by an earlier pattern; results are the same as without it (the cache
  // follows every transaction, of this process or another, before a query reads it).
  // `attribute` is an ident (":ns/name" or "ns/name"). Errors: kSchema for an unknown
  // attribute or a cardinality-many one; kUnsupported for kReverse or kBoth. Registrations
  // belong to this Store object (not the file) and cost memory per connection: about 100
  // bytes per value.
  Status cache(std::string_view attribute, CacheDirection direction = CacheDirection::kForward);
  // Stops caching `attribute` (kNotFound when it was not cached).
  Status uncache(std::string_view attribute);
  // The cached attributes' idents, without the leading ':', sorted.
  std::vector<std::string> cached_attributes();

  // Checks the store (`mentat check STORE`, `.check`): SQLite's integrity check, then
  // mentat's own invariants: every datom's attribute exists and its value has the
  // attribute's type (strings UTF-8); each current datom is in the attribute index its
  // attribute's flags name; partition marks lie above every id in use and transactions up
  // to the last one recorded; history intervals are ordered, disjoint, and end before the
  // datom is current again; cardinality-one and unique attributes hold; the maintained
  // statistics and fulltext rows match the datoms. Reads one snapshot, in time linear in
  // the size of the store. Problems found are in the report; an error means the check
  // could not run (for instance, an I/O error).
  Result<CheckReport> check();

  // Rewrites the store file without free pages (SQLite's VACUUM), with the WAL checkpointed
  // into it and truncated before and after: once it returns, the bytes of excised datoms
  // ({:db/excise e}) are gone from the file and its -wal. Waits for this process's writer;
  // fails (kBusy) while another connection or process is reading or writing. Errors
  // (kUnsupported) for a read-only store and for the SQLite extension's host mode, where
  // the host's own VACUUM does it. On PostgreSQL: VACUUM (ANALYZE) of the store's tables,
  // which makes the dead rows' space reusable (the bytes stay until PostgreSQL overwrites
  // them; VACUUM FULL, run by the database's owner, rewrites the tables).
  Status vacuum();

  // The log (Datomic's tx-range): the transactions with from <= tx < to, in commit order
  // (a bound std::nullopt is open; a point is a tx id, a t below kTxStart, or an instant),
  // each a TxReport of the datoms it asserted and retracted (no tempids), at most `limit`.
  // Retractions of :db/noHistory attributes are not kept, so not listed.
  Result<std::vector<TxReport>> tx_range(std::optional<TxPoint> from, std::optional<TxPoint> to,
                                         std::optional<size_t> limit = std::nullopt);

  // Calls `callback` with every transaction committed after this call: this process's
  // (with their tempids) as they commit, and other processes' (from the log, no tempids)
  // once the file shows them (checked every few tens of milliseconds while any listener
  // is registered). With `attributes` (idents, as the Rust mentat's register_observer),
  // only transactions that assert or retract one of them. Errors: kSchema for an unknown
  // attribute; kUnsupported on a store borrowed from a host connection.
  Result<ListenerHandle> listen(TxListener callback, std::vector<std::string> attributes = {});
  // A queue receiving every transaction committed after this call, as listen() does.
  Result<std::shared_ptr<TxReportQueue>> tx_report_queue();

  // The current schema (refreshed when another connection changed it).
  std::shared_ptr<const Schema> schema();
  // The last committed transaction id.
  Result<Entid> last_tx();
  const std::string& path() const;

 protected:
  Store();
};

}  // namespace mentat
