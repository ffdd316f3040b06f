// The SQL dialect a compiled query is written in (private to src/query). What the
// compiler writes that is not portable SQL goes through a Dialect: the engine's index
// selection terms, its order-pinning join, index hints, the affinity-free comparison of
// the untyped value column, and the table form of in-memory relations. The rest of the
// compiler (items, blocks, expressions, passes: compile.h, passes.h) is the same for every
// engine; another engine (PostgreSQL, the scale-out issue) is another Dialect.
#pragma once

#include <string>
#include <vector>

#include "query/expr.h"

namespace mentat::query {

class Dialect {
 public:
  virtual ~Dialect() = default;
  virtual const char* name() const = 0;
  // What follows a pattern's `ix` column to select the datoms of one attribute index
  // (doc/format.md "Attribute indexes"): "IS NOT 0" (by value) or "IS NOT 1" (by entity).
  virtual std::string IndexTest(bool value_indexed) const = 0;
  // `v = x` for the untyped value column `v` and an expression `x` of a typed column,
  // written so that an index on either side can drive the lookup and the comparison stays
  // exact.
  virtual Expr EqValue(const Expr& v, const Expr& x) const = 0;
  // The same where `v` holds only integers (its pattern's attribute is a ref, long or
  // instant) and `x` is an integer column, which lets an engine whose value column is not
  // an integer column (PostgreSQL's jsonb) convert it without the checks EqValue needs.
  virtual Expr EqIntegerValue(const Expr& v, const Expr& x) const { return EqValue(v, x); }
  // `x` as an expression without column affinity (so comparing it with `v` may use v's
  // index).
  virtual Expr NoAffinity(const Expr& x) const = 0;
  // An element of a row value that another row value is compared with (tuples of parts
  // compare elementwise): the engine must find an ordering for each pair of elements.
  virtual Expr RowElement(const Expr& x) const { return x; }
  // A column of a UNION of arms that may read it from columns of different types.
  virtual std::string UnionColumn(const std::string& x) const { return x; }
  // NULL as such a column (typed where the engine types a UNION's columns by its arms).
  virtual std::string UnionNull() const { return "NULL"; }
  // The join operator that keeps its operands in the written order (the planner's order).
  virtual const char* PinnedJoin() const = 0;
  // An index hint after a table reference's alias; "" for an engine without hints.
  virtual std::string IndexHint(const std::string& index) const = 0;
  // An in-memory relation (Plan::rels) read as a table, its pointer in parameter `param`.
  virtual std::string RelationTable(const std::string& param) const = 0;
  // The SQL of operator or function `fn` (expr.h) over its arguments' SQL. Every call node
  // of an expression is written here, so the rest of the compiler names no engine's
  // functions.
  virtual std::string Call(Fn fn, const std::vector<std::string>& args) const = 0;
  // An ORDER BY term (or an aggregate's argument) `x` of keywords or symbols, written so
  // that they sort by namespace, then name (edn::Compare's order).
  virtual std::string NamedOrder(const std::string& x) const = 0;
  // Whether NamedOrder is an expression over `x` (so `x` must be a column's name, not its
  // position, and min/max cannot take it: they would return the sort key).
  virtual bool NamedOrderIsExpression() const { return false; }
  // Whether a WITH RECURSIVE statement's recursive term may read the recursive table only
  // once (PostgreSQL: one recursive term, one reference to it, not in a subquery), so that
  // several recursive SELECTs must become one (compile.cc BuildCte); SQLite 3.34 takes
  // several.
  virtual bool SingleRecursiveReference() const { return false; }
  // Whether the query's statement should read a stratum's WITH RECURSIVE statement itself
  // (the rules_in_query pass) rather than take its rows back as a relation parameter: for
  // an engine where each statement is a round trip and a relation goes back as text
  // (PostgreSQL's JSON). SQLite's relations stay in process, and its relation table tells
  // its planner their exact size.
  virtual bool RulesInQuery() const { return false; }
  // Whether a scalar or tuple find that pulls should read the pulled entity's datoms in
  // its own statement (the pull_in_query pass), for the same engine: the pull's first
  // level is then no statement of its own.
  virtual bool PullInQuery() const { return false; }
  // sum or avg (`fn`) of numbers `x` (a long, double or float column) in SQL: avg a
  // double, sum the engine's exact number.
  virtual std::string NumberAggregate(const std::string& fn, const std::string& x) const {
    return fn + "(" + x + ")";
  }
  // min or max (`fn`) of keywords or symbols `x` in that order.
  virtual std::string NamedAggregate(const std::string& fn, const std::string& x) const {
    return fn + "(" + NamedOrder(x) + ")";
  }

 protected:
  // `a op b op ...`, and `name(a, b, ...)`: the two shapes most calls take.
  static std::string Infix(const char* op, const std::vector<std::string>& args);
  static std::string Function(const char* name, const std::vector<std::string>& args);
};

// SQLite's: partial indexes selected by `ix IS NOT n`, CROSS JOIN (which SQLite's planner
// keeps in order), INDEXED BY, `+x` for no affinity, the mentat_rel table-valued function
// (relation.cc), the mentat_* functions and collation (sql_functions.cc, FTS5's bm25).
const Dialect& SqliteDialect();

// PostgreSQL's (dialect_pg.cc): for a store whose connection is PostgreSQL's.
const Dialect& PgDialect();

}  // namespace mentat::query
