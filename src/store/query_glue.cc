// Store::q and friends: the glue between the public API and the query engine.
//
// Parsed queries are cached per thread (keyed by the query text), so repeated queries
// skip parsing; plans are cached inside each Prepared, and statements by the connection.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "mentat/store.h"
#include "pull/pull.h"
#include "query/ast.h"
#include "query/dialect.h"
#include "query/passes.h"
#include "query/query.h"
#include "store/store_impl.h"
#include "views/views.h"

namespace mentat {

namespace {

constexpr size_t kPreparedCacheSize = 512;

// Hashes std::string and std::string_view alike, so that a lookup by the caller's
// string_view allocates nothing.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

Result<std::shared_ptr<const query::Prepared>> Prepare(std::string_view text) {
  thread_local std::unordered_map<std::string, std::shared_ptr<const query::Prepared>, TextHash,
                                  std::equal_to<>>
      cache;
  auto it = cache.find(text);
  if (it != cache.end()) return it->second;
  MENTAT_ASSIGN_OR_RETURN(auto p, query::Prepared::Parse(text));
  if (cache.size() >= kPreparedCacheSize) cache.clear();
  cache.emplace(std::string(text), p);
  return p;
}

query::DbView ToQueryView(const ResolvedView& v) {
  query::DbView q;
  q.as_of = v.as_of;
  q.since = v.since;
  q.history = v.history;
  return q;
}

// The db with the per-call options (asOf, since, history) applied on top.
Db WithOptions(const Db& db, const QueryOptions& o) {
  Db d = db;
  if (o.as_of) d = d.as_of(*o.as_of);
  if (o.since) d = d.since(*o.since);
  if (o.history) d = d.history();
  return d;
}

// The parsed form of a pull pattern against `c`'s schema: kept on the connection for the
// patterns of recent queries, so that a repeated query does not parse its pattern again.
Result<std::shared_ptr<const pull::Pattern>> PullPattern(StoreImpl::Conn* c,
                                                         const edn::Value& pattern) {
  constexpr size_t kKept = 16;
  auto& kept = c->pull_patterns;
  if (c->pull_schema != c->schema) {
    kept.clear();
    c->pull_schema = c->schema;
  }
  for (const auto& [form, parsed] : kept)
    if (form == pattern) return parsed;
  MENTAT_ASSIGN_OR_RETURN(auto parsed, pull::ParsePattern(*c->schema, pattern));
  if (kept.size() == kKept) kept.erase(kept.begin());
  kept.emplace_back(pattern, parsed);
  return parsed;
}

// The pull hook of an ExecContext, for queries with (pull ?e pattern) in :find.
void MakePullHook(StoreImpl::Conn* c, query::ExecContext* ctx) {
  ctx->pull_many =
      [c](const query::DbView& v, const edn::Value& pattern, const std::vector<Entid>& eids,
          const std::function<Status()>& check,
          const std::vector<query::PulledDatom>* datoms) -> Result<std::vector<edn::Value>> {
    MENTAT_ASSIGN_OR_RETURN(auto parsed, PullPattern(c, pattern));
    ResolvedView rv;
    rv.as_of = v.as_of;
    rv.since = v.since;
    rv.history = false;  // pull reads the entity as of the view's time bounds
    if (!datoms) return pull::PullMany(c->db.get(), *c->schema, rv, *parsed, eids, check);
    std::vector<pull::ForwardDatom> first;
    first.reserve(datoms->size());
    for (const query::PulledDatom& d : *datoms) first.push_back({d.e, d.a, d.v});
    return pull::PullMany(c->db.get(), *c->schema, rv, *parsed, eids, check, &first);
  };
}

// The attribute caches (Store::cache) for a query on `c`: none on a borrowed connection
// (the host owns it and may outlive the store) or inside a write transaction (uncommitted
// data must not reach a cache that outlives it).
Status UseAttributeCaches(StoreImpl* impl, StoreImpl::Conn* c, query::ExecContext* ctx) {
  auto [attrs, gen] = impl->CachedAttrs();
  if (!attrs && !c->attr_cache) return Status::OK();
  if (c->attr_cache) c->attr_cache->Retain(attrs ? *attrs : std::vector<Entid>());
  // (On PostgreSQL a cache would be read through a function of the client: not there.)
  if (!attrs || impl->borrowed() || c->db->is_pg() || c->db->InWriteTransaction())
    return Status::OK();
  if (!c->attr_cache) {
    auto cache = std::make_unique<AttrCache>();
    MENTAT_RETURN_IF_ERROR(cache->Register(c->db->raw()));
    c->attr_cache = std::move(cache);
  }
  ctx->cached_attrs = std::move(attrs);
  ctx->cache_gen = gen;
  ctx->prepare_cache = [c](const std::vector<Entid>& used) -> Status {
    // The snapshot's last transaction, read before any cached value (attr_cache.h). A read
    // whose result stands saw the snapshot of the connection's pager version
    // (StoreImpl::Read), so the transaction read at that version is the one to use while
    // the version stays; a read that did not stand left its version behind for good (the
    // pager's version only grows), so a wrong pairing is never used.
    Entid tx;
    if (c->pager_version_known && c->last_tx_known && c->last_tx_version == c->pager_version) {
      tx = c->last_tx;
    } else {
      MENTAT_ASSIGN_OR_RETURN(tx,
                              c->db->QueryInt("SELECT value FROM meta WHERE key = 'last_tx'", 0));
      c->last_tx_known = c->pager_version_known;
      c->last_tx_version = c->pager_version;
      c->last_tx = tx;
    }
    return c->attr_cache->Refresh(c->db.get(), *c->schema, c->schema_gen, tx, used);
  };
  return Status::OK();
}

// Fills an ExecContext.
Status MakeContext(StoreImpl* impl, StoreImpl::Conn* c, const Db& db, const QueryOptions& o,
                   const query::Prepared& prepared, query::ExecContext* ctx) {
  ctx->conn = c->db.get();
  if (ctx->conn->is_pg()) ctx->dialect = &query::PgDialect();
  ctx->schema = c->schema.get();
  ctx->schema_gen = static_cast<uint64_t>(c->schema_gen);
  MENTAT_ASSIGN_OR_RETURN(ResolvedView view, StoreImpl::ResolveViewOn(c, WithOptions(db, o)));
  ctx->view = ToQueryView(view);
  // Db inputs are named sources: the :in symbol at the same position.
  const auto& in = prepared.parsed().in;
  size_t first =
      query::ImplicitSources(prepared.parsed(), !o.inputs.empty() && o.inputs[0].db != nullptr);
  if (first == 1 && in[0].name != "$") ctx->sources[in[0].name] = ctx->view;
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    if (!o.inputs[i].db) continue;
    size_t pos = first + i;
    if (pos >= in.size() || in[pos].kind != query::InSpec::Kind::kSrc)
      return Status::InvalidArgument("input " + std::to_string(i + 1) +
                                     " is a database, but the matching :in element is not a "
                                     "source ($name)");
    const Db& src = *o.inputs[i].db;
    if (src.store() != db.store())
      return Status::Unsupported("a query can join databases of the same store only");
    MENTAT_ASSIGN_OR_RETURN(ResolvedView sv, StoreImpl::ResolveViewOn(c, src));
    ctx->sources[in[pos].name] = ToQueryView(sv);
  }
  // (pull ?e pattern) in :find: patterns parsed once per query run, and every entity of
  // the result pulled in one batch (pull::PullMany runs a bounded number of statements per
  // pattern level, not one per entity). Queries without pull skip building the hook.
  bool pulls = false;
  for (const auto& f : prepared.parsed().find) pulls |= f.kind == query::FindElem::Kind::kPull;
  if (pulls) MakePullHook(c, ctx);
  MENTAT_RETURN_IF_ERROR(UseAttributeCaches(impl, c, ctx));
  ctx->interrupt_gen = &impl->interrupt_gen();
  ctx->start_gen = impl->interrupt_gen().load();
  ctx->timeout_ms = o.timeout_ms;
  ctx->stop = o.interrupted;
  ctx->use_planner = o.use_planner;
  ctx->analyze = o.analyze;
  MENTAT_RETURN_IF_ERROR(query::CheckPassNames(o.disabled_passes));
  ctx->disabled_passes = o.disabled_passes;
  std::sort(ctx->disabled_passes.begin(), ctx->disabled_passes.end());
  ctx->disabled_passes.erase(std::unique(ctx->disabled_passes.begin(), ctx->disabled_passes.end()),
                             ctx->disabled_passes.end());
  return Status::OK();
}

}  // namespace

Result<QueryResult> Store::q(std::string_view query, std::vector<Input> inputs) {
  QueryOptions o;
  o.inputs = std::move(inputs);
  return q(query, o);
}
Result<QueryResult> Store::q(std::string_view query, const QueryOptions& options) {
  Db d;
  d.store_ = this;  // the current database, without a pinned basis
  return d.q(query, options);
}
Result<std::string> Store::q_explain(std::string_view query, const QueryOptions& options) {
  Db d;
  d.store_ = this;
  return d.q_explain(query, options);
}

Result<QueryResult> Db::q(std::string_view query, std::vector<Input> inputs) const {
  CheckStoreAlive(store_, "Db::q");
  QueryOptions o;
  o.inputs = std::move(inputs);
  return q(query, o);
}

namespace {

Result<QueryResult> RunOn(const Db& db, const query::Prepared& prepared,
                          const QueryOptions& options) {
  StoreImpl* impl = ImplOf(db.store());
  bool tune = false, recorded = false;
  // A query without pull runs one statement (rules and lookup refs add a few): no
  // BEGIN/COMMIT around it while the store has not changed (StoreImpl::Read). Nor around a
  // scalar or tuple find that pulls: its statement stays active through the pulls
  // (Execution::Run), which so read in its transaction. A pull of many rows runs after
  // its statement has finished, in a transaction of its own.
  const query::ParsedQuery& parsed = prepared.parsed();
  bool pulls = false, aggregates = false;
  for (const auto& f : parsed.find) {
    pulls |= f.kind == query::FindElem::Kind::kPull;
    aggregates |= f.kind == query::FindElem::Kind::kAgg;
  }
  bool single = parsed.find_kind == query::ParsedQuery::FindKind::kScalar ||
                parsed.find_kind == query::ParsedQuery::FindKind::kTuple;
  auto kind = !pulls || (single && !aggregates) ? StoreImpl::ReadKind::kAutocommit
                                                : StoreImpl::ReadKind::kTransaction;
  // On PostgreSQL no statement stays active through the pulls, and rules run a statement
  // per stratum: work of several statements, read in one transaction (StoreImpl::Read).
  bool rules = false;
  for (const auto& in : parsed.in) rules |= in.kind == query::InSpec::Kind::kRules;
  if (impl->is_pg() && (pulls || rules)) kind = StoreImpl::ReadKind::kTransaction;
  auto result = impl->Read(
      [&](StoreImpl::Conn* c) -> Result<QueryResult> {
        query::ExecContext ctx;
        MENTAT_RETURN_IF_ERROR(MakeContext(impl, c, db, options, prepared, &ctx));
        if (impl->advisor().mode() == AutoIndex::kAdaptive && !std::exchange(recorded, true))
          tune = impl->advisor().Record(ValueFilteredAttributes(parsed, *ctx.schema), *ctx.schema);
        // Not inside a transaction's functions: the counts know committed data only.
        if (!impl->writer_scope() &&
            query::PassEnabled("value_counts", ctx.use_planner, ctx.disabled_passes)) {
          // [:find ?v (count ?e) :where [?e :attr ?v]] from maintained counts (value_counts.h).
          MENTAT_ASSIGN_OR_RETURN(
              auto counted, TryCountQuery(impl->value_counts(), ctx.conn, *ctx.schema,
                                          c->schema_gen, parsed, ctx.view, options.inputs.size()));
          if (counted) return std::move(*counted);
        }
        return prepared.Execute(ctx, options.inputs);
      },
      kind);
  // An adaptive tuning pass that is due runs after the read, on this thread. It is skipped
  // while a writer of this process is busy (the next pass then comes at the end of the
  // period), and its errors (a busy store) leave the query's result alone.
  if (tune && !impl->options().read_only && !impl->writer_scope())
    (void)impl->TuneIndexes(false, true);
  return result;
}

Result<std::string> ExplainOn(const Db& db, const query::Prepared& prepared,
                              const QueryOptions& options) {
  StoreImpl* impl = ImplOf(db.store());
  return impl->Read([&](StoreImpl::Conn* c) -> Result<std::string> {
    query::ExecContext ctx;
    MENTAT_RETURN_IF_ERROR(MakeContext(impl, c, db, options, prepared, &ctx));
    MENTAT_ASSIGN_OR_RETURN(std::string text, prepared.Explain(ctx, options.inputs));
    const Attribute* counted =
        query::PassEnabled("value_counts", ctx.use_planner, ctx.disabled_passes)
            ? CountQueryAttribute(prepared.parsed(), *ctx.schema, ctx.view, options.inputs.size())
            : nullptr;
    if (counted)
      text = "plan (optimizer pass value_counts):\n  maintained per-value counts of :" +
             counted->ident +
             " (src/store/value_counts.h), brought up to date from the transactions since "
             "they were last read; the SQL below is what they replace\n" +
             text;
    return text;
  });
}

}  // namespace

Result<QueryResult> Db::q(std::string_view query, const QueryOptions& options) const {
  CheckStoreAlive(store_, "Db::q");
  MENTAT_ASSIGN_OR_RETURN(auto prepared, Prepare(query));
  return RunOn(*this, *prepared, options);
}

Result<std::string> Db::q_explain(std::string_view query, const QueryOptions& options) const {
  CheckStoreAlive(store_, "Db::q_explain");
  MENTAT_ASSIGN_OR_RETURN(auto prepared, Prepare(query));
  return ExplainOn(*this, *prepared, options);
}

Result<PreparedQuery> Db::q_prepare(std::string_view query) const {
  CheckStoreAlive(store_, "Db::q_prepare");
  MENTAT_ASSIGN_OR_RETURN(auto prepared, query::Prepared::Parse(query));
  return PreparedQuery(*this, std::move(prepared));
}

Result<PreparedQuery> Store::q_prepare(std::string_view query) {
  Db d;
  d.store_ = this;  // unpinned: every run reads the latest transactions
  return d.q_prepare(query);
}

PreparedQuery::PreparedQuery(Db db, std::shared_ptr<const query::Prepared> p)
    : db_(std::make_shared<const Db>(std::move(db))), prepared_(std::move(p)) {}

Result<QueryResult> PreparedQuery::run(std::vector<Input> inputs) const {
  CheckStoreAlive(db_->store(), "PreparedQuery::run");
  QueryOptions o;
  o.inputs = std::move(inputs);
  return run(o);
}

Result<QueryResult> PreparedQuery::run(const QueryOptions& options) const {
  CheckStoreAlive(db_->store(), "PreparedQuery::run");
  return RunOn(*db_, *prepared_, options);
}

Result<std::string> PreparedQuery::explain(const QueryOptions& options) const {
  CheckStoreAlive(db_->store(), "PreparedQuery::explain");
  return ExplainOn(*db_, *prepared_, options);
}

}  // namespace mentat
