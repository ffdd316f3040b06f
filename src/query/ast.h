// The parsed form of a query (private to src/query). parse.cc builds it from EDN;
// every node keeps its source form so errors can name the clause and its line:column.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/status.h"

namespace mentat::query {

// A place in a pattern or an argument of a function, predicate or rule.
struct Term {
  enum class Kind : uint8_t { kVar, kBlank, kConst, kSrc };
  Kind kind = Kind::kBlank;
  std::string name;  // "?x" for variables, "$a" for sources
  edn::Value value;  // the constant; for other kinds the original form
  static Term Var(std::string n) { return Term{Kind::kVar, std::move(n), {}}; }
  static Term Blank() { return Term{Kind::kBlank, "_", {}}; }
  static Term Const(edn::Value v) { return Term{Kind::kConst, "", std::move(v)}; }
  bool is_var() const { return kind == Kind::kVar; }
  bool is_blank() const { return kind == Kind::kBlank; }
  bool is_const() const { return kind == Kind::kConst; }
};

// The binding form of a function's result or of an :in item.
struct BindingForm {
  enum class Kind : uint8_t { kScalar, kTuple, kColl, kRel, kBlank };
  Kind kind = Kind::kBlank;
  std::vector<std::string> vars;  // "_" for blanks; one for scalar and coll
  edn::Value form;
};

struct Clause;
using Clauses = std::vector<Clause>;

struct Clause {
  enum class Kind : uint8_t { kPattern, kPred, kFn, kRule, kNot, kNotJoin, kOr, kOrJoin, kAnd };
  Kind kind = Kind::kPattern;
  edn::Value form;
  std::string src = "$";  // data source of patterns, functions, rules, not/or
  // kPattern: 2..5 places [e a v tx added]; missing places are blanks.
  std::vector<Term> places;
  // kPred, kFn, kRule: the function or rule name and its arguments.
  std::string fn;
  std::vector<Term> args;
  BindingForm binding;  // kFn
  // kNotJoin, kOrJoin: the join variables (or-join's required [?a] ones included).
  std::vector<std::string> join_vars;
  // kOrJoin: the required ones ([[?a] ?b]: ?a), which other clauses must bind.
  std::vector<std::string> required_vars;
  // kNot, kNotJoin, kAnd: the clauses. kOr, kOrJoin: the branches (each a clause; `and`
  // branches have kind kAnd).
  Clauses body;
};

struct RuleDef {
  std::string name;
  std::vector<std::string> params;  // required ([?a]) params first, as written
  size_t required = 0;              // how many leading params were in [...]
  Clauses body;
  edn::Value form;
  // A generated seed clause (demand.cc) whose body reads the query's scalar inputs.
  bool sees_inputs = false;
};

struct RuleSet {
  std::map<std::string, std::vector<RuleDef>> rules;  // name -> definitions (a disjunction)
};

struct InSpec {
  enum class Kind : uint8_t { kSrc, kRules, kScalar, kTuple, kColl, kRel, kBlank };
  Kind kind = Kind::kScalar;
  std::string name;               // "$", "$a", "%", or the variable of a scalar
  std::vector<std::string> vars;  // tuple/coll/rel variables ("_" for blanks)
  edn::Value form;
};

struct FindElem {
  enum class Kind : uint8_t { kVar, kAgg, kPull, kThe };
  Kind kind = Kind::kVar;
  std::string var;         // the variable (aggregated, pulled or plain)
  std::string fn;          // aggregate name
  std::vector<Term> args;  // aggregate arguments as written (e.g. 3 ?x for (max 3 ?x))
  std::string src = "$";   // pull source
  edn::Value pattern;      // pull pattern (constant), or nil when pattern_var is set
  std::string pattern_var;
  edn::Value form;
};

struct OrderItem {
  bool desc = false;
  int find_index = -1;  // an element of :find, or -1 for a plain variable
  std::string var;
  edn::Value form;
};

struct ParsedQuery {
  enum class FindKind : uint8_t { kRel, kColl, kTuple, kScalar };
  FindKind find_kind = FindKind::kRel;
  std::vector<FindElem> find;
  // The printed form of each find element (QueryResult::columns), once per Prepared.
  std::vector<std::string> find_names;
  std::vector<edn::Value> keys;  // :keys/:strs/:syms as keywords, strings or symbols
  edn::Value keys_form;
  std::vector<std::string> with;
  std::vector<InSpec> in;
  Clauses where;
  std::vector<OrderItem> order;
  std::optional<int64_t> limit, offset;
  std::string limit_var, offset_var;
  std::optional<int64_t> timeout_ms;
  edn::Value form;  // the whole query
};

// How many leading :in elements take no input because they are the store's database:
// one for a leading `$`, and for a leading source of another name (`:in $db ?x`) when it
// is the query's only source and the first input is not a database (Datomic passes the
// database first; mentat's store is implicit). 0 otherwise: every element takes an input.
inline size_t ImplicitSources(const ParsedQuery& q, bool first_input_is_db) {
  if (q.in.empty() || q.in[0].kind != InSpec::Kind::kSrc) return 0;
  if (q.in[0].name == "$") return 1;
  if (first_input_is_db) return 0;
  for (size_t i = 1; i < q.in.size(); ++i)
    if (q.in[i].kind == InSpec::Kind::kSrc) return 0;
  return 1;
}

// ---- parse.cc ----

// Limits on a query's size, checked as it is parsed, so that a query too large to run is
// refused at once with the limit it passed (before planning, whose work grows faster than
// the query): clauses at every level of :where and of each rule body; nesting of not, or
// and and; data patterns joined in one conjunction (SQLite joins at most 64 tables in one
// SELECT).
inline constexpr size_t kMaxClauses = 500;
inline constexpr int kMaxClauseNesting = 32;
inline constexpr size_t kMaxPatternsPerConjunction = 64;
// Items (patterns, functions, branches...) the analysis may create: rules are expanded at
// every call and or distributes over its context, so a short query can expand far; past
// this it is refused before any more work.
inline constexpr size_t kMaxExpandedItems = 10000;

// Parses a query value (vector, map, or a string holding one).
Result<ParsedQuery> ParseQuery(const edn::Value& query);
// Parses a rule set (a vector of rules, or a string holding one).
Result<RuleSet> ParseRules(const edn::Value& rules);

// "L:C" of `form`, or "" when it has no position.
std::string PosText(const edn::Value& form);
// An error naming `form` (printed, shortened) and its position:
// "<message> in <form> at L:C".
Status ClauseError(Code code, const edn::Value& form, const std::string& message);

// How query text is read: EDN plus Clojure's regex literal #"re" (for re-find and
// re-matches), which reads as (clojure.core/re-pattern "re").
inline edn::ReadOptions QueryReadOptions() {
  edn::ReadOptions o;
  o.script_syntax = true;
  return o;
}

// Every variable (and "_"-free) mentioned in `clauses`, in order of first appearance.
void CollectVars(const Clauses& clauses, std::vector<std::string>* out);
void CollectClauseVars(const Clause& clause, std::vector<std::string>* out);

}  // namespace mentat::query
