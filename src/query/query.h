// The Datalog query engine: the one header other subsystems include.
//
// A query goes through parse (EDN -> AST), analyze (clauses -> SQL building blocks with
// types and bindings), plan (join order from attribute statistics), sql (text), execute
// (bind, step, interrupt) and project (decode, aggregate, order, pull). See
// src/query/README.md for one paragraph per pass.
//
// Thread safety: Run/Explain may be called from many threads at once, each with its own
// ExecContext (and so its own connection). A Prepared query is immutable apart from an
// internal, mutex-protected plan cache, and may be shared between threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "mentat/status.h"
#include "mentat/store.h"
#include "storage/sqlite.h"

namespace mentat::query {

// A resolved database view (tx points already resolved to tx ids by the Store).
struct DbView {
  std::optional<Entid> as_of;  // include datoms with tx <= as_of (doc/format.md as-of view)
  std::optional<Entid> since;  // only datoms with tx > since
  bool history = false;
};

class Dialect;  // query/dialect.h

// A datom of an entity to pull, decoded, read by the query's statement (ExecContext::
// pull_many).
struct PulledDatom {
  Entid e = 0;
  Entid a = 0;
  edn::Value v;
};

struct ExecContext {
  // Leased to this thread and already inside a read transaction (BEGIN), so every
  // statement of one query sees one snapshot.
  storage::Connection* conn = nullptr;
  const Schema* schema = nullptr;
  // Identifies `schema`: the store's schema_gen (doc/format.md). Cached plans are keyed
  // by it (and by the schema pointer), so a schema change never reuses a stale plan.
  uint64_t schema_gen = 0;
  DbView view;                            // the default source $
  std::map<std::string, DbView> sources;  // named sources "$a" -> view (same store file)
  const std::atomic<uint64_t>* interrupt_gen = nullptr;  // Store::interrupt() increments it
  uint64_t start_gen = 0;             // its value when the query started; a change => kInterrupted
  std::optional<int64_t> timeout_ms;  // from QueryOptions; the query's :timeout also applies
  // From QueryOptions::interrupted: polled on the query's thread; true stops the query.
  std::function<bool()> stop;
  bool use_planner = true;  // false: keep the written clause order
  bool analyze = false;     // QueryOptions::analyze: explain runs the query too
  // The SQL dialect of `conn`'s engine (query/dialect.h); null: SQLite's.
  const Dialect* dialect = nullptr;
  // From QueryOptions::disabled_passes: optimizer passes left out (passes.h), by name.
  std::vector<std::string> disabled_passes;
  // Attribute caches (Store::cache): attributes whose current values this connection can
  // read through mentat_cached(a, e), sorted; nullptr or empty for none. `cache_gen`
  // identifies the set in plan keys. Before a plan that reads any of them runs,
  // `prepare_cache` is called with those it reads (it brings them to the snapshot).
  std::shared_ptr<const std::vector<Entid>> cached_attrs;
  uint64_t cache_gen = 0;
  std::function<Status(const std::vector<Entid>&)> prepare_cache;
  // Pull hook for (pull ?e pattern) find elements; nullptr => "pull is not supported yet".
  std::function<Result<edn::Value>(const DbView&, const edn::Value& pattern, Entid e)> pull;
  // Optional batched form, preferred when set: one value per entity id, in order (a
  // bounded number of SQL statements per pattern level, whatever the number of rows).
  // `check` returns non-OK once the query is interrupted or timed out; the hook calls it
  // now and then and stops with its status.
  // `datoms`, when not null: every datom of the entities (in (e, a, v) order), which the
  // query's statement read (pass pull_in_query), for the pull's first level.
  std::function<Result<std::vector<edn::Value>>(
      const DbView&, const edn::Value& pattern, const std::vector<Entid>& eids,
      const std::function<Status()>& check, const std::vector<PulledDatom>* datoms)>
      pull_many;
};

struct ParsedQuery;  // query/ast.h
class PlanCache;     // query/prepared.cc
struct Compiled;     // query/analyze.h

// A parsed query, ready to run many times. Plans (analysis, join order, SQL) are cached
// inside, keyed by schema, the shape of the database views, the rules input and a coarse
// size of collection inputs; they are rebuilt when older than a second so that join
// orders follow the statistics. Prepared statements are cached by the connection
// (Connection::Cached, keyed by SQL text).
class Prepared {
 public:
  // Parses `query` (EDN text of a vector, a map, or a string holding either).
  // Errors: kParse with line:column.
  static Result<std::shared_ptr<const Prepared>> Parse(std::string_view query);
  // Same with an already-read value.
  static Result<std::shared_ptr<const Prepared>> FromValue(const edn::Value& query);
  ~Prepared();

  // Runs the query. `inputs` are positional for the :in items after an optional leading
  // `$`; entries for `$name` sources (Input::db) are skipped here (the caller put them
  // into ctx.sources under the :in symbol).
  Result<QueryResult> Execute(const ExecContext& ctx, const std::vector<Input>& inputs) const;
  // The parsed query, the chosen join order, the SQL and SQLite's EXPLAIN QUERY PLAN.
  Result<std::string> Explain(const ExecContext& ctx, const std::vector<Input>& inputs) const;

  const ParsedQuery& parsed() const { return *parsed_; }

 private:
  // explain analyze (ExecContext::analyze): runs the plan and counts each step's rows.
  Result<std::string> Analyze(const ExecContext& ctx, const Compiled& c,
                              std::vector<const edn::Value*> inputs) const;
  Prepared();
  std::unique_ptr<ParsedQuery> parsed_;
  std::unique_ptr<PlanCache> cache_;
};

// Parses and runs `query` (EDN text) once.
Result<QueryResult> Run(const ExecContext& ctx, std::string_view query,
                        const std::vector<Input>& inputs);
// Same with an already-parsed query value (Store::q with an edn::Value).
Result<QueryResult> Run(const ExecContext& ctx, const edn::Value& query,
                        const std::vector<Input>& inputs);
// q_explain.
Result<std::string> Explain(const ExecContext& ctx, std::string_view query,
                            const std::vector<Input>& inputs);

// A result with no rows: the shape, columns (the find elements as written) and map keys
// of `q`'s results (also mentat::describe_query, defined in describe.cc).
QueryResult Describe(const ParsedQuery& q);

// mentat::options_from_json (include/mentat/store.h) is defined in options_json.cc.

}  // namespace mentat::query
