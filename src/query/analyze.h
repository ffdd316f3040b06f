// Pass 2: clauses -> SQL building blocks (items, conditions, bindings, types).
//
// The Analyzer walks a conjunction of clauses and adds to a Unit: one item per pattern
// (a datoms alias, with one variant per table its view reads), input relations,
// or/rule subqueries and conditions. Variables are bound by their first producer; later
// occurrences become equality conditions. Types come from the schema (attribute value
// types) and are checked where two uses meet; constants are encoded for the place they
// are used (a keyword constant is ':ns/name' text for a keyword attribute and an entity
// id for a ref attribute).
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "query/compile.h"
#include "query/passes.h"

namespace mentat::query {

struct AttrStats {
  double datoms = 0;
  double distinct_values = 0;
  double distinct_entities = 0;  // 0 when not counted yet
  // The most common values (attr_values, format 5) and their datoms.
  std::vector<std::pair<schema::DbVal, double>> common;
};

// Statistics read once per plan.
struct Stats {
  // An attribute's datoms and distinct values, at least 1 (1 when unknown).
  double Datoms(Entid a) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? 1 : std::max(1.0, it->second.datoms);
  }
  double Distinct(Entid a) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? 1 : std::max(1.0, it->second.distinct_values);
  }
  // Values per entity: datoms / distinct entities; std::nullopt when not counted.
  std::optional<double> FanOut(Entid a) const {
    auto it = attrs.find(a);
    if (it == attrs.end() || it->second.distinct_entities <= 0) return std::nullopt;
    return std::max(1.0, it->second.datoms / it->second.distinct_entities);
  }
  // The datoms holding value `v`: its count when it is a common value, else an even share
  // of the datoms the common values leave (at least 1).
  double ValueDatoms(Entid a, const schema::DbVal& v) const {
    auto it = attrs.find(a);
    if (it == attrs.end()) return 1;
    const AttrStats& s = it->second;
    double common = 0;
    for (const auto& [cv, n] : s.common) {
      if (cv == v) return n;
      common += n;
    }
    double rest_values = std::max(1.0, s.distinct_values - static_cast<double>(s.common.size()));
    return std::max(1.0, (s.datoms - common) / rest_values);
  }
  std::map<Entid, AttrStats> attrs;
  double total_datoms = 0;
  Entid last_tx = 0;
  // Per source with a since view: current datoms after its since point (counted up to a
  // cap through the datoms_tx index).
  std::map<std::string, double> since_datoms;
};

// A rule clause compiled for semi-naive evaluation.
struct RuleClauseUnit {
  int head_rel = -1;      // the rule relation this clause derives into (Compiled::rule_rels)
  std::vector<int> rels;  // RelSpecs (Compiled::rels) of this unit that read rule relations
  Unit unit;
  std::string sql;
  std::vector<OutCol> cols;  // how to read each head column
  edn::Value form;
};

// A value known before rules run: a constant, or a scalar input (slot).
struct SeedVal {
  std::optional<edn::Value> constant;
  int slot = -1;
};

// A derived relation of a recursive rule, per source.
struct RuleRel {
  std::string rule;
  std::string source = "$";
  int arity = 0;
  std::vector<VT> types;  // per column
  int stratum = 0;
  // A magic relation of the demand rewrite (demand.cc): its seed row.
  bool magic = false;
  std::vector<SeedVal> seed;
};

struct Stratum {
  std::vector<int> rule_rels;  // evaluated together to a fixpoint
  std::vector<int> units;      // Compiled::rule_units deriving them
  // The recursive_cte pass: the whole stratum as one WITH RECURSIVE statement whose rows
  // are (rule relation, columns...); empty when it is evaluated by the engine's loop.
  std::string cte_sql;
  std::string cte_def;            // cte_sql's `mentat_rec(k, c0, ...) AS (...)`
  int cte_params = 0;             // the parameters it numbers (?1 .. ?cte_params)
  std::vector<int> unit_offsets;  // per unit: where its parameters start (?offset+1)
  // The rules_in_query pass: the query's statement (Compiled::sql) reads it from its WITH
  // clause, its parameters from ?(query_offset + 1); not evaluated before the query. There
  // its units read fewer parameters (relations of strata also in the statement): per unit,
  // those it does.
  bool in_query = false;
  int query_offset = 0;
  std::vector<std::vector<bool>> query_used;
  // Magic relations seeded in the statement: (rule relation, first parameter); the
  // parameters are the seed's columns, then 1 or 0 (whether the seed encodes).
  std::vector<std::pair<int, int>> seeds;
};

// Find element projection.
struct ProjElem {
  FindElem::Kind kind = FindElem::Kind::kVar;
  OutCol out;          // SQL mode: the element's column(s)
  int var_index = -1;  // C++ mode: the variable's index in Compiled::row_vars
  std::string fn;      // aggregate
  int64_t n = -1;      // (min n ?x), (max n ?x), (sample n ?x)
  int n_slot = -1;     // n from a scalar input: (max ?n ?x) with ?n in :in
  std::string pull_src = "$";
  edn::Value pattern;
  int pattern_slot = -1;  // pull pattern from an input
  std::string name;       // column name
  bool summed = false;    // agg_pushdown: a count read as the sum of partial counts
};

// Everything needed to run a query for one schema, view shape and rule set.
struct Compiled {
  std::vector<Slot> slots;
  std::vector<RelSpec> rels;
  std::map<std::string, int> input_var_slot;  // scalar input var -> slot
  std::vector<int> input_rel;                 // per positional input: its RelSpec or -1
  int input_count = 0;                        // positional inputs expected
  std::vector<RuleRel> rule_rels;
  std::vector<RuleClauseUnit> rule_units;
  std::vector<Stratum> strata;  // in evaluation order

  Unit main;
  std::string sql;
  // Projection.
  std::vector<ProjElem> find;
  bool cpp_mode = false;                    // aggregates, ordering and limits done in C++
  bool limit_after_decode = false;          // :offset/:limit after decoded duplicates go
  std::vector<OutCol> row_vars;             // C++ mode: the decoded variables of each SQL row
  std::vector<int> group_elems;             // C++ mode: find elements that group
  std::vector<std::pair<int, bool>> order;  // C++ mode: (find element, desc)
  bool distinct = true;                     // the SQL removes duplicate rows
  int limit_slot = -1, offset_slot = -1;
  std::optional<int64_t> limit, offset;
  // pull_in_query: the find element whose entity's datoms the statement reads too, each
  // of its rows one datom (a, v) in columns pull_col and pull_col + 1 (NULL when the
  // entity has none); -1 when the statement does not.
  int pull_elem = -1;
  int pull_col = -1;
  std::vector<std::string> order_text;   // explain: the chosen join order
  std::vector<Entid> cached_attrs;       // read through mentat_cached (ExecContext)
  std::vector<PassReport> pass_reports;  // explain: what each optimizer pass did to main
  std::chrono::steady_clock::time_point built;
};

struct AnalyzeEnv {
  const Dialect* dialect = &SqliteDialect();  // the SQL the units are written in
  const Schema* schema = nullptr;
  std::map<std::string, ViewShape> sources;  // "$" and named sources
  const RuleSet* rules = nullptr;
  // Attributes the connection caches (ExecContext::cached_attrs), sorted; may be null.
  const std::vector<Entid>* cached_attrs = nullptr;
  std::set<std::string> recursive;  // rule names evaluated bottom-up
  // Column types of rule relations ("$src name"), settled over compile rounds.
  std::map<std::string, std::vector<VT>> rule_types;
  const Stats* stats = nullptr;
  const std::map<std::string, DbView>* views = nullptr;
  bool use_planner = true;
  std::vector<std::string> disabled_passes;  // ExecContext::disabled_passes (passes.h)
  bool pass_through = true;                  // the pass_through rule rewrite (demand.cc)
  bool seed_recursion = true;                // the seed_recursion rewrite (demand.cc)
  // What the analysis-time passes rewrote, for explain: (pass name, line).
  std::vector<std::pair<std::string, std::string>> rewrites;
  Compiled* out = nullptr;

  // The demand rewrite (demand.cc): generated rules, and per magic rule its adorned rule,
  // bound argument positions and seed.
  struct Demand {
    std::string adorned;
    std::vector<int> bound;
    std::vector<SeedVal> seed;
  };
  RuleSet extra;
  std::map<std::string, Demand> demand;
  int demand_count = 0;
  // The definitions of rule `name` (given or generated); nullptr when unknown.
  const std::vector<RuleDef>* FindRule(const std::string& name) const;
};

// ---- rules.cc ----
// Names of the rules that call themselves, directly or through other rules.
std::set<std::string> RecursiveRules(const RuleSet& rules);
// Column types of the rule relations from their clauses; true when they changed from
// env->rule_types (which is updated; compile again then).
Result<bool> SettleRuleTypes(AnalyzeEnv* env);
// The clause [(fn arg) var]: a generated `ground` of a constant or `identity` of a
// variable that binds `var` (rule expansion and the demand rewrites).
Clause BindingClause(const std::string& fn, const Term& arg, const std::string& var,
                     const edn::Value& form);
// Groups rule relations into strata (dependencies first); checks stratified negation.
Status BuildStrata(Compiled* out);

class Analyzer {
 public:
  struct Scope {
    int block = 0;
    const Scope* parent = nullptr;
    bool correlated = false;  // may use the parent's non-constant bindings
    std::map<std::string, VarBind> vars;
    std::map<std::string, std::vector<int>> providers;  // var -> items binding it
    std::string src = "$";                              // default source (rules)
    // When set, only these variables are visible from the parent scopes (not-join,
    // or-join and rule bodies).
    std::optional<std::set<std::string>> import;
  };

  Analyzer(AnalyzeEnv* env, Unit* unit) : env_(env), unit_(unit) { unit_->dialect = env_->dialect; }

  // Analyzes `clauses` into the scope's block.
  Status Conjunction(const Clauses& clauses, Scope* scope);

  // Finds a variable's binding in the scope chain; nullptr when unbound.
  const VarBind* Lookup(const Scope& s, const std::string& var) const;
  // Binds `var` to `b`, or adds "existing = b" when already bound. `form` for errors.
  Status BindOrConstrain(Scope* s, const std::string& var, VarBind b, int item,
                         const edn::Value& form);
  // Encodes a constant for a place of type `t` (kAny: natural encoding).
  Result<Expr> ConstExpr(const edn::Value& v, VT t, const std::string& src, const edn::Value& form);
  // The binding of an argument term (a bound variable or a constant), encoded for a
  // place of type `want` (kAny: as it is).
  Result<VarBind> ArgBind(const Scope& s, const Term& t, VT want, const edn::Value& form);
  // The SQL of a source's view as a table: "datoms" or a UNION ALL subquery.
  std::string ViewTable(const std::string& src, bool with_added);
  Result<ViewShape> SourceShape(const std::string& src, const edn::Value& form) const;
  // A pattern's constant value as `attr` stores it, for the statistics' common values;
  // std::nullopt when it is not known before the query runs (a lookup ref).
  std::optional<schema::DbVal> StoredConstant(const edn::Value& v, const Attribute& attr) const;

  Unit* unit() { return unit_; }
  AnalyzeEnv* env() { return env_; }
  int NewItem(Item::Kind kind, const edn::Value& form, Scope* s);
  // A pattern item reading the view of `src` (no conditions yet).
  int ViewItem(const std::string& src, const ViewShape& shape, const edn::Value& form, Scope* s);
  // An item reading relation `rel` (mentat_rel), binding `vars` to its columns.
  Status RelItem(int rel, const std::vector<std::string>& vars, const edn::Value& form, Scope* s);
  // ground of a scalar input bound as a tuple, a collection or a relation.
  Status GroundInput(const Clause& c, Scope* s, int slot);
  int NewBlock(bool correlated);
  void AddWhere(Scope* s, Expr e) { unit_->blocks[s->block].where.push_back(std::move(e)); }

 private:
  struct FnValue {
    std::vector<VarBind> values;  // one, or the parts of a tuple
    bool nullable = false;        // drop rows where it is NULL
    int required_part = -1;       // drop rows where this part is NULL (re-find's match)
    Expr test;                    // when not empty: the function as a predicate (re-find)
  };
  Status Pattern(const Clause& c, Scope* s);
  Result<FnValue> ScalarFunction(const Clause& c, const Scope& s);
  Result<FnValue> UntupleStored(const Clause& c, const VarBind& t);  // functions.cc
  // Functions (functions.cc): returns false (in *done) when arguments are not bound yet.
  Status Function(const Clause& c, Scope* s, bool* done);
  Status Predicate(const Clause& c, Scope* s);
  Status BindResult(const Clause& c, Scope* s, const BindingForm& b, std::vector<VarBind> vals,
                    bool nullable);
  Status SpecialFunction(const Clause& c, Scope* s, bool* handled);
  Status Ground(const Clause& c, Scope* s);
  Status TxIds(const Clause& c, Scope* s);
  Status TxData(const Clause& c, Scope* s);
  Status Fulltext(const Clause& c, Scope* s);
  Status ConstRelation(const Clause& c, Scope* s, const edn::Value& value);
  // or / not / rules (clauses.cc).
  bool AllBound(const Scope& s, const std::vector<std::string>& vars) const;
  Status OrClause(const Clause& c, Scope* s, bool as_filter);
  Status NotClause(const Clause& c, Scope* s);
  Status RuleCall(const Clause& c, Scope* s, bool as_filter);
  Result<Clause> ExpandRule(const Clause& call, const Scope& s);
  Status RecursiveRuleCall(const Clause& c, Scope* s);
  // Rewrites a call of recursive rule `name` with arguments bound to values known before
  // evaluation (positions `bound`) into a call of a generated rule that derives only
  // what the call can use (magic sets). nullopt when the rule does not qualify.
  std::optional<std::string> DemandRewrite(const std::string& name, const std::vector<int>& bound,
                                           const std::vector<SeedVal>& seed,
                                           const Clauses* seed_body = nullptr,
                                           const std::vector<std::string>& seed_vars = {});
  // The pass-through rewrite of a right-linear call (demand.cc): the generated answer
  // rule, which takes the call's free arguments (their positions returned with it).
  // With `seed_body`, the bound values are those the clauses find (SeedClauses) for the
  // call's variables `seed_vars` (one per bound position), and the answer rule takes the
  // bound arguments first, then the free ones.
  std::optional<std::pair<std::string, std::vector<int>>> PassThroughRewrite(
      const std::string& name, const std::vector<int>& bound, const std::vector<SeedVal>& seed,
      const Clauses* seed_body = nullptr, const std::vector<std::string>& seed_vars = {});
  // The clauses of the enclosing conjunction that find the values of `var` for a recursive
  // call (sideways information passing): patterns and predicates connected to it through
  // variables other than `others` (the call's other arguments), reading only their own
  // variables and the query's scalar inputs, at least one with a constant or an input.
  std::optional<Clauses> SeedClauses(const Scope& s, const std::string& var,
                                     const std::set<std::string>& others) const;
  Status OrGenerator(const Clause& c, Scope* s, const std::vector<std::string>& join);
  // An `or` as a filter on bound variables: (EXISTS branch OR ...).
  Status OrExists(const Clause& c, Scope* s, const std::vector<std::string>& join);
  // An `or` as a composite item whose branches are spliced into the arms of the block;
  // false (nothing added) when that would make too many arms or the branch types differ.
  // `all_bound`: every variable is bound already (filter_ok, see compile.h).
  Result<bool> OrComposite(const Clause& c, Scope* s, const std::vector<std::string>& join,
                           bool all_bound);
  // The scope of an `or` branch: spliced into the enclosing block's arms, an EXISTS test,
  // or a self-contained UNION subquery (OrGenerator).
  enum class BranchKind : uint8_t { kSpliced, kExists, kUnion };
  Scope BranchScope(Scope* s, int block, const std::vector<std::string>& join,
                    const std::string& src, BranchKind kind);
  // Bound before any item of the scope's own block (constant, input, enclosing block).
  bool BoundOutside(const Scope& s, const std::string& v) const;
  int ArmCount(int block) const;

 public:
  // Copies a finished scope's providers into its block (for the planner).
  void FinishBlock(const Scope& sub);
  // The derived relation of recursive rule `name` read from `src`; compiles its clauses
  // on first use (rules.cc).
  Result<int> EnsureRuleRel(const std::string& name, const std::string& src);
  const std::vector<int>& rule_rels_used() const { return rule_rels_used_; }

 private:
  Status OrBranch(const Clause& branch, const std::vector<std::string>& join_vars, Scope* sub);
  std::vector<std::string> OrJoinVars(const Clause& c) const;
  // The variables an or-join or a rule call requires bound by other clauses ([[?a] ...]).
  std::vector<std::string> RequiredVars(const Clause& c) const;

  VarBind ViewColumn(int item, const std::string& col, VT t);

  AnalyzeEnv* env_;
  Unit* unit_;
  int fresh_ = 0;
  int negation_ = 0;
  int rule_depth_ = 0;
  std::vector<int> rule_rels_used_;  // RelSpecs of rule relations read by this unit
  const std::vector<const Clause*>* conj_ = nullptr;  // the conjunction being analyzed
};

// Builds a Compiled for `q` (analysis, planning and SQL). `input_sizes` are the sizes
// of the positional inputs that are collections or relations (planner hints).
Result<std::unique_ptr<Compiled>> Compile(const ParsedQuery& q, AnalyzeEnv env,
                                          const std::vector<size_t>& input_sizes);

// ---- plan.cc ----
// Orders the items of every block of `unit` (join order), sets index hints.
void PlanUnit(Unit* unit, const Schema& schema, const Stats& stats,
              const std::map<std::string, ViewShape>& shapes,
              const std::map<std::string, DbView>& views, const std::vector<RelSpec>& rels,
              bool use_planner);
// Reads cached attributes through mentat_cached(a, e) where a pattern's entity is already
// found by an earlier pattern of its block (plan.cc); returns the attributes so read.
std::vector<Entid> UseAttributeCache(Unit* unit);
// Reads an as-of pattern [?e :attr ?v] of a cardinality-one attribute, whose entity an
// earlier pattern of its block found, as one scalar subquery over datoms and history
// instead of one UNION arm per table (plan.cc).
void UseAsOfProbes(Unit* unit, const Schema& schema);
// ---- entity_sets.cc ----
// Turns a block's first pattern into an entity-set filter on the second where scanning the
// second's value index costs less than probing it once per entity of the first.
void UseEntitySets(Unit* unit, const Schema& schema, const Stats& stats);
// The first item before position k of `block`'s order that reads the entity of the
// pattern at k from a table of its own; -1 when there is none (attribute_cache.cc).
int EntityReader(const Unit& unit, const Block& block, size_t k);
// Reads attr_stats and meta, and probes the size of since windows.
Result<Stats> ReadStats(storage::Connection* conn, const std::map<std::string, DbView>& views);

// ---- sql.cc ----
// The SQL text of block `block` with the given SELECT list builder.
struct SelectSpec {
  std::vector<Expr> columns;
  bool distinct = false;
  std::string tail;           // GROUP BY / ORDER BY / LIMIT text after the arms (may use c0..)
  std::string group_by_cols;  // when set: SELECT <this> FROM (arms) <tail>
  // A term of a UNION that removes the duplicates (a WITH RECURSIVE statement's): no
  // DISTINCT of its own on one arm (PostgreSQL would sort each step's rows for it).
  bool in_union = false;
};
std::string EmitSelect(const Unit& unit, int block, const SelectSpec& spec, bool pin);
// explain analyze: SQL counting the rows after the first `k` items of block 0's join
// order (the conditions that read later items left out); nullopt when a kept item reads a
// later one's columns.
std::optional<std::string> EmitPrefixCount(const Unit& unit, size_t k);
// `sql` with every parameter ?N written ?(N + offset) (quoted text left alone).
std::string ShiftParams(const std::string& sql, int offset);
// The recursive_cte pass (compile.cc): whether stratum `st` of `out` can be one WITH
// RECURSIVE statement: every clause reads at most one relation of the stratum, from the
// top block of its unit, and something (a clause without one, or a seed) starts it.
bool CteEligible(const Compiled& out, const Stratum& st);
// The agg_pushdown pass (agg_pushdown.cc): when `var`, counted by the query, is the
// entity of one cardinality-one pattern of block 0 and read nowhere else, that pattern
// becomes a per-value count; *count_col is then the column to sum and *extra_col the value
// column to project too. Returns what it did, or nullopt (unit unchanged).
std::optional<std::string> PushCountBelowJoin(Unit* unit, const AnalyzeEnv& env,
                                              const std::string& var, Expr* count_col,
                                              Expr* extra_col);
// `oc` as read by an outer SELECT from a subquery whose columns are named c0, c1, ...
// (`qualifier` before each name, "" or "alias."): their names appended to `outer`, the
// result's columns numbered in it.
OutCol ReadByName(const OutCol& oc, const std::string& qualifier, std::vector<std::string>* outer);
// Writes Stratum::cte_sql and its parameter layout from the units' SQL.
void BuildCte(Compiled* out, Stratum* st, int width);
// The rules_in_query pass (rules_in_query.cc): when the dialect wants it
// (Dialect::RulesInQuery), the strata that are each one WITH RECURSIVE statement and that
// only the query and other such strata read become the WITH clause of the query's own
// statement, out->sql reading their relations from there. Returns what it did, or nullopt
// (nothing changed).
std::optional<std::string> ReadRulesInQuery(Compiled* out);
// The pull_in_query pass (pull_in_query.cc): when the dialect wants it
// (Dialect::PullInQuery), a scalar or tuple find that pulls one entity reads the entity's
// datoms in out->sql too (Compiled::pull_elem). Returns what it did, or nullopt.
std::optional<std::string> ReadPullInQuery(Compiled* out, const ParsedQuery& q,
                                           const AnalyzeEnv& env);
int CountArms(const Unit& unit, int block);
// Describes the join order of a block for explain.
std::vector<std::string> DescribeOrder(const Unit& unit, int block);

}  // namespace mentat::query
