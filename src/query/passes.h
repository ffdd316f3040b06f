// The query optimizer as one ordered list of named passes (after DuckDB's
// Optimizer::RunBuiltInOptimizers): each pass rewrites a compiled unit (compile.h) and
// says what it changed; `QueryOptions::disabled_passes` (options JSON `disabledPasses`)
// leaves any of them out, for side-by-side measurements and for differential tests
// against the unoptimized path. `use_planner = false` leaves out every pass that needs the
// planner (join_order and those after it that read its order).
//
// The list, in order (src/query/README.md "Passes"):
//   value_counts    [:find ?v (count ?e) :where [?e :a ?v]] on the current database
//                   read from maintained per-value counts (store/value_counts.h); runs
//                   before compilation, in the store layer, so it has no unit to rewrite
//   seed_recursion  a recursive call whose argument the other clauses of its conjunction
//                   find (not an input) is seeded by those clauses: sideways information
//                   passing into pass_through or the demand rewrite (demand.cc; runs
//                   during analysis); disabled, the rule's whole relation bottom-up
//   pass_through    a call of a right-linear recursive rule (also mutually recursive)
//                   with bound arguments derives only the bound values it reaches, then
//                   the exit clauses over them (demand.cc; runs during analysis);
//                   disabled, the demand (magic sets) rewrite
//   agg_pushdown    (count ?x) where ?x is the entity of one cardinality-one pattern
//                   [?x :a ?u] and read nowhere else: that pattern becomes a per-value
//                   count (GROUP BY v over its index) and the count the sum of those
//                   (agg_pushdown.cc; before join_order); disabled, the join then the count
//   or_joins        an `or`, `or-join` or rule call whose variables other items also
//                   bind may be placed before them and produce the rows (clauses.cc,
//                   plan.cc); disabled, it tests the rows of those items (EXISTS)
//   join_order      the block's items ordered by estimated rows (plan.cc); disabled, the
//                   written order (Datomic's), with the same arm budget
//   recursive_cte   a stratum of recursive rules whose every clause reads at most one of
//                   its relations becomes one SQLite WITH RECURSIVE statement (compile.cc,
//                   execute_rules.cc); disabled, the engine's semi-naive loop
//   rules_in_query  on an engine where each statement is a round trip (PostgreSQL), such
//                   statements that only the query and others of them read become the
//                   WITH clause of the query's statement, which reads their relations
//                   there (rules_in_query.cc); disabled, their rows come back to the
//                   client and go out again as relation parameters
//   pull_in_query   on such an engine, a scalar or tuple find that pulls one entity reads
//                   that entity's datoms in the query's statement (LEFT JOIN LATERAL),
//                   and the pull's first level takes them (pull_in_query.cc); disabled,
//                   the first level is a statement of its own
//   as_of_probes    an as-of pattern of a cardinality-one attribute whose entity is found
//                   reads its value at t as one scalar subquery (plan.cc)
//   attribute_cache a pattern whose entity is found reads a cached attribute from memory
//                   (plan.cc; only when the connection caches it)
//   entity_sets     a first pattern that only finds entities becomes an in-memory set
//                   filtering the second pattern's value-index scan (entity_sets.cc)
//   distinct_elimination  no DISTINCT when the found variables (and inputs) determine
//                   every row: through cardinality-one and unique attributes, with or /
//                   rule calls placed as tests adding no row (compile.cc NeedsDistinct);
//                   disabled, the SQL always removes duplicates
// Rule bodies of recursive rules get or_joins and join_order only, so far.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mentat/status.h"
#include "query/compile.h"

namespace mentat::query {

struct AnalyzeEnv;  // analyze.h

// What a pass rewrites.
struct PassTarget {
  Unit* unit = nullptr;
  const AnalyzeEnv* env = nullptr;
  const std::vector<RelSpec>* rels = nullptr;
  bool rule_body = false;                      // a recursive rule's clause
  std::vector<Entid>* cached_attrs = nullptr;  // attribute_cache: the attributes it reads
};

struct Pass {
  const char* name;
  const char* what;  // one line, for explain
  bool needs_planner;
  bool in_rule_bodies;
  // Runs the pass (`enabled`), or its unoptimized form where the unit needs one
  // (join_order's written order); appends a line per change to `changes`.
  void (*run)(PassTarget& t, bool enabled, std::vector<std::string>* changes);
};

// The passes in the order they run.
const std::vector<Pass>& OptimizerPasses();
// kInvalidArgument naming the first of `names` that is no pass, with the list of passes.
Status CheckPassNames(const std::vector<std::string>& names);
// Whether pass `name` runs under these options.
bool PassEnabled(std::string_view name, bool use_planner, const std::vector<std::string>& disabled);

// What one pass did to one unit, for explain.
struct PassReport {
  std::string name;
  bool ran = false;
  std::vector<std::string> changes;
};

// Runs every pass that has something to rewrite in `t` (value_counts has not) and
// returns their reports in order.
std::vector<PassReport> RunPasses(PassTarget& t, bool use_planner,
                                  const std::vector<std::string>& disabled);

}  // namespace mentat::query
