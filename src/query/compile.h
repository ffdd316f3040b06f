// The compiled form of a query (private to src/query): SQL building blocks made by
// analyze.cc, ordered by plan.cc and turned into text by sql.cc. Expressions are Exprs
// (expr.h): SQL text with typed references to items' columns and blocks' subqueries.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mentat/edn.h"
#include "mentat/schema.h"
#include "query/ast.h"
#include "query/dialect.h"
#include "query/expr.h"
#include "query/query.h"
#include "schema/codec.h"
#include "views/views.h"

namespace mentat::query {

// Value types known at compile time. The first nine follow mentat::ValueType.
enum class VT : uint8_t {
  kRef,
  kKeyword,
  kLong,
  kDouble,
  kString,
  kBoolean,
  kInstant,
  kUuid,
  kBytes,
  kBigInt,
  kBigDec,
  kFloat,
  kUri,
  kSymbol,
  kTupleValue,  // a stored tuple (:db.type/tuple): one BLOB column
  kDynamic,     // decoded per row by VarBind::attr: an attribute id, or TypeCode(type)
  kNumeric,     // a number: INTEGER decodes as a long, REAL as a double
  kAny,         // an input or constant, typed at run time by its EDN kind (VarBind::slot)
  kTuple,       // a tuple of parts, one SQL column each (tuple/untuple, vector constants)
};
inline VT FromValueType(ValueType t) { return static_cast<VT>(t); }
inline bool IsStatic(VT t) { return static_cast<int>(t) <= static_cast<int>(VT::kTupleValue); }
static_assert(static_cast<int>(VT::kTupleValue) == static_cast<int>(ValueType::kTuple));
inline ValueType ToValueType(VT t) { return static_cast<ValueType>(t); }
const char* VTName(VT t);
// The natural type of an EDN constant (int -> long, keyword -> keyword, [a v] -> ref...).
std::optional<VT> NaturalType(const edn::Value& v);

// A negative code standing for a value type where kDynamic expects an attribute id.
inline int64_t TypeCode(ValueType t) { return -1 - static_cast<int64_t>(t); }

Expr Col(int item, const std::string& col);
Expr ExistsOf(int block);
// "a = b", written so that an index on either side can serve it (Dialect::EqValue when
// one side is the untyped value column and the other a typed column; EqIntegerValue when
// that value column's binding is of a type stored as integers, `ta` for a, `tb` for b).
Expr EqCond(const Dialect& d, const Expr& a, const Expr& b, VT ta = VT::kAny, VT tb = VT::kAny);
Expr GeneratorOf(int block);
// A SQL literal for an integer.
std::string IntLit(int64_t i);

// A runtime-filled SQL parameter (?N).
struct Param {
  enum class Kind : uint8_t {
    kValue,      // a constant DbVal (strings and blobs of the query text)
    kNull,       // NULL (an ident or lookup ref that resolves to nothing)
    kInput,      // an input value (slot), encoded as `encode`
    kViewTx,     // the as-of or since tx of a source
    kRel,        // a relation pointer (mentat_rel), slot in Plan::rels
    kLookupRef,  // a constant lookup ref, resolved at run time against `source`
    // A tuple constant (edn) of the attribute whose id is `value`, whose ref elements
    // include lookup refs: resolved against `source`, then encoded, at run time.
    kTupleLookups,
  };
  Kind kind = Kind::kValue;
  schema::DbVal value;
  int slot = -1;
  VT encode = VT::kAny;
  std::string source = "$";
  bool since = false;
  edn::Value edn;  // kLookupRef
};

struct Variant {
  Expr table;                        // FROM text without alias; "" for composites
  std::vector<Expr> conds;           // extra conditions of this variant
  std::map<std::string, Expr> cols;  // column overrides (default: t<item>.<col>)
  int branch = -1;                   // composite: the block spliced in
};

// What the planner needs to know about an item.
struct PlanInfo {
  enum class Pos : uint8_t { kFree, kConst, kVar };
  Entid attr = -1;  // a pattern's attribute, -1 when a variable
  std::string src = "$";
  Pos e = Pos::kFree, v = Pos::kFree, a = Pos::kFree;
  std::string e_var, v_var, a_var;
  bool v_range = false;  // a comparison predicate constrains v
  // A constant value, encoded as stored (for the common values of the statistics);
  // std::nullopt for variables, inputs and values the analysis could not encode.
  std::optional<schema::DbVal> v_value;
  double fixed_rows = -1;          // non-pattern items: the estimate (rows), < 0 if not set
  std::vector<std::string> binds;  // variables the item binds
  std::vector<std::string> needs;  // variables that must be bound before it
  std::vector<int> after;          // items that must come before it
};

struct Item {
  enum class Kind : uint8_t { kPattern, kRel, kGenerator, kComposite, kFts, kOther };
  int id = 0;
  Kind kind = Kind::kPattern;
  std::vector<Variant> variants;
  // For view patterns: one variant reading the whole view as a UNION ALL subquery, used
  // when the arms of a block would exceed the budget.
  std::optional<Variant> collapsed;
  std::vector<Expr> conds;
  PlanInfo plan;
  std::string index_hint;  // set by the planner: the index to read ("datoms_tx")
  // A pattern's attribute-index term (`ix IS NOT 0|1`, doc/format.md "Attribute indexes"):
  // lets SQLite use datoms_avet or datoms_aevt; left out under an index hint, where it would
  // only cost a table lookup per row.
  Expr index_term;
  Expr index_term_written;  // as analysis wrote it (the planner drops it or keeps it)
  edn::Value form;          // the clause, for explain
  bool use_collapsed = false;
  double est = 0;  // the planner's row estimate when it was placed
  // A pattern [?e :attr ?v] of a cached cardinality-one attribute on the current database
  // (no tx or added place): the attribute; UseAttributeCache may then read it from memory.
  Entid cache_attr = -1;
  int cached_from = -1;  // when it does: the earlier item whose e column it reads by
  int rel = -1;          // kRel: its RelSpec
  // Read as an in-memory set of entity ids that filters this later item (entity_sets.cc);
  // the item then has no table of its own and its e column is that item's.
  int set_for = -1;
  // An as-of pattern (not since, not history): the SQL parameter holding its t.
  std::string as_of_param;
  // Read as a scalar subquery by the entity of this earlier item (UseAsOfProbes).
  int probe_from = -1;
  // A composite (a distributed `or`, `or-join` or rule call) each of whose variables is
  // also bound by other items: placed after them it tests each row (EXISTS per branch),
  // placed before them it produces the rows its branches find (or_joins pass).
  bool filter_ok = false;
  std::vector<std::string> filter_needs;  // its variables, while it may only be a filter
  // Set by the planner: placed where all its variables are bound, it is emitted as
  // (EXISTS branch1 OR EXISTS branch2 ...) instead of splicing the branches into arms.
  bool exists_filter = false;
};

struct Block {
  std::vector<int> items;  // analysis order
  std::vector<int> order;  // join order (plan.cc)
  std::vector<Expr> where;
  std::vector<std::pair<std::string, Expr>> outputs;  // generator columns
  // For the planner: variables bound before any item (constants, inputs, outer scope),
  // the items that bind each variable, and the items function results depend on.
  std::set<std::string> bound_on_entry;
  std::map<std::string, std::vector<int>> providers;
  std::map<std::string, std::set<int>> expr_deps;
  bool correlated = false;  // may reference items of enclosing blocks
  double estimate = 1;      // rows (plan.cc)
};

// A variable's binding inside a block.
struct VarBind {
  Expr sql;
  VT type = VT::kAny;
  Expr attr;                           // kDynamic: the attribute id
  int slot = -1;                       // kAny from an input: its slot in Plan::slots
  std::optional<edn::Value> constant;  // a compile-time constant (ground, query text)
  std::vector<VarBind> parts;          // kTuple
  std::set<int> deps;                  // items referenced by sql/attr
  Entid tuple_attr = -1;               // kTupleValue read from this attribute's datoms
};

// A tuple of parts (tuple, a vector literal) as the stored tuple it is (the SQL function
// mentat_tuple over each part's type and value), to compare with a stored one. Errors
// (kInvalidArgument, naming `what`) for a part of no known type.
Result<Expr> StoredTupleSql(const VarBind& parts, const edn::Value& form, const std::string& what);

// One SQL statement's worth of compiled query.
struct Unit {
  const Dialect* dialect = &SqliteDialect();  // the SQL it is written in (AnalyzeEnv::dialect)
  std::vector<Item> items;
  std::vector<Block> blocks;  // block 0 is the top
  std::vector<Param> params;  // ?1 is params[0]
  std::vector<bool> used;     // params that the final SQL text refers to (MarkUsed)
  void MarkUsed(const std::string& sql);
  int AddParam(Param p);  // returns N for "?N"
  std::string ParamRef(Param p) { return "?" + std::to_string(AddParam(std::move(p))); }
};

// An input value slot: an :in scalar, a tuple component, a collection or a relation column.
struct Slot {
  int input = -1;         // index into the positional inputs (after the leading $)
  std::vector<int> path;  // tuple component
  int rel = -1;           // collection/relation input: index in Plan::rels
  int column = 0;         // its column
  VT encode = VT::kAny;   // how values are encoded (the var's use)
  std::string var;
  edn::Value form;
};

// A relation read through mentat_rel: an input collection/relation, a ground constant or
// a recursive rule's derived relation.
struct RelSpec {
  enum class Kind : uint8_t { kInput, kConst, kRule };
  Kind kind = Kind::kInput;
  int input = -1;  // kInput
  bool coll = false;
  std::vector<int> slots;              // kInput, kConst: the slot of each column
  std::vector<edn::Value> const_rows;  // kConst: rows (vectors), encoded at run time
  int rule_rel = -1;                   // kRule: index in Compiled::rule_rels
  bool negated = false;                // kRule: read under not (stratification)
  int arity = 1;
  double size_hint = 100;
};

// The filters of a source's view (views/views.h owns which tables make it up).
using ViewShape = views::Shape;

struct RuleInfo;  // rules.cc

// How one output column of the main SELECT decodes.
struct OutCol {
  int col = -1;  // SQL column
  VT type = VT::kAny;
  int attr_col = -1;  // kDynamic
  int slot = -1;      // kAny
  std::vector<OutCol> parts;
};

// Whether a value of `oc` is typed per row by an attribute column: SQL's DISTINCT then
// sees that column too, so equal decoded values of two attributes stay two rows until
// the executor folds them (project.cc), and a limit must wait for that (compile.cc).
inline bool TypedByAttrColumn(const OutCol& oc) {
  if (oc.attr_col >= 0) return true;
  for (const OutCol& p : oc.parts)
    if (TypedByAttrColumn(p)) return true;
  return false;
}

}  // namespace mentat::query
