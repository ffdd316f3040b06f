// A SQL expression as analysis builds it (private to src/query): a sequence of parts,
// each resolved only when the statement is emitted (sql.cc), because one pattern may read
// different tables in different arms of a UNION (an as-of view reads `datoms` in one arm
// and `history` in another), the planner may move an item's columns (an entity set, an
// attribute cache, a probe), and the engine's dialect spells operators and functions:
//   Call(fn, args)      an operator or function (Fn) over expressions, spelled by the
//                       Dialect (dialect.h) when the statement is emitted
//   Column(item, col)   a column of an item (alias t<item>, or its variant's override)
//   Exists(block)       an EXISTS subquery over a block (all its arms)
//   Generator(block)    a generator subquery: SELECT DISTINCT <outputs> of a block
//   text                portable SQL: literals, parameters, parentheses, the structure of
//                       the scalar subqueries get-else and missing? read
// Text converts implicitly and parts concatenate, so structure is written as strings are:
// "(" + Expr::Call(Fn::kEq, {a, b}) + ")".
#pragma once

#include <set>
#include <string>
#include <vector>

namespace mentat::query {

// The operators and functions of query expressions. Comparison, logic and arithmetic
// operators take two or more arguments where SQL chains them (a = b, a AND b AND c);
// the rest take the arguments their comment gives.
enum class Fn : unsigned char {
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,     // a op b
  kIsNot,  // a IS NOT b: unequal, NULL equal to NULL
  kAnd,
  kOr,   // a op b op ...
  kNot,  // NOT (a)
  kIsNull,
  kIsNotNull,  // a IS [NOT] NULL
  kIn,         // a IN (b, c, ...)
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,       // a op b op ...; kDiv of integers truncates
  kNeg,       // - a
  kConcat,    // a || b || ...
  kCastText,  // a as text (a number's decimal digits)
  kCastReal,  // a as a double
  kBoolText,  // 'true' or 'false'
  kIsInteger,
  kIsReal,  // whether a dynamic value is stored as an integer / real
  kAbs,
  kMax,
  kMin,         // abs(a); the largest / smallest of a, b, ...
  kLength,      // characters of a string
  kSubstr,      // substr(s, from 1-based [, count]); negative from counts back
  kInstr,       // 1-based position of b in a, 0 when absent
  kStartsWith,  // whether a begins with b; a third argument, when given, is b's length
  kReTest,      // whether pattern a matches somewhere in b (re-find as a predicate)
  kTrim,        // a without leading and trailing spaces
  kCoalesce,    // the first non-NULL of a, b, ...
  // The engine's own functions (query/sql_functions.cc for SQLite):
  kStr,             // a value as Clojure's str prints it
  kFmtInst,         // an instant as its ISO-8601 text
  kFmtUuid,         // a uuid's text
  kFmtDecimal,      // a bigint (b = 1) or bigdec (b = 0) key as its text
  kDecimalKey,      // a number as an order-preserving decimal key
  kReFind,          // (re-find a b); NULL when no match
  kReMatches,       // (re-matches a b)
  kReFindGroup,     // group c of (re-find a b)
  kReMatchesGroup,  // group c of (re-matches a b)
  kSubs,            // Clojure's subs (s, start [, end]); NULL when out of range
  kLower,
  kUpper,        // Unicode case mapping
  kExactDiv,     // a / b: a long when exact, else a double; NULL for zero
  kTuple,        // a stored tuple key from (kind, value) pairs
  kTupleGet,     // element b of stored tuple a
  kTupleType,    // element b's value type code
  kCached,       // the cached value of attribute a for entity b
  kEntitySet,    // aggregate: the set of the entities a (a scalar subquery reads it)
  kInEntitySet,  // whether entity b is in set a
  kMatch,        // fulltext: whether the row of index a matches search b
  kRank,         // fulltext: a match's rank in index a for search b, larger is better
  // a = b for the value column a of a pattern whose values are integers and an integer
  // column b (Dialect::EqIntegerValue on an engine whose value column is not an integer
  // column): written so that either side's index can drive the join. The emitter (sql.cc)
  // may write one of the two forms instead, by the planned order: the later item's index
  // then drives, and the engine's planner does not count the condition twice.
  kEqIntValue,
  kEqIntValueByValue,  // the same, a's item found by its value (a's value index)
  kEqIntValueByB,      // the same, b's item found by b (b's index)
};

// Its name in DebugString and explain ("=", "re-find", ...).
const char* FnName(Fn fn);
// The comparison that SQL operator `op` ("=", "<>", "<", "<=", ">", ">=") names.
Fn CompareFn(const std::string& op);

class Expr {
 public:
  struct Part {
    enum class Kind : unsigned char { kText, kColumn, kExists, kGenerator, kCall };
    Kind kind = Kind::kText;
    std::string text;        // kText: SQL; kColumn: the column's name
    int id = -1;             // kColumn: the item; kExists, kGenerator: the block
    Fn fn = Fn::kEq;         // kCall
    std::vector<Expr> args;  // kCall
    bool operator==(const Part&) const = default;
  };

  Expr() = default;
  Expr(std::string text) { Append(std::move(text)); }  // NOLINT: SQL text is an Expr
  Expr(const char* text) : Expr(std::string(text)) {}  // NOLINT

  static Expr Column(int item, std::string col);
  static Expr Exists(int block);
  static Expr Generator(int block);
  static Expr Call(Fn fn, std::vector<Expr> args);

  bool empty() const { return parts_.empty(); }
  void clear() { parts_.clear(); }
  const std::vector<Part>& parts() const { return parts_; }
  // The one column this expression is (nullptr when it is anything else).
  const Part* AsColumn() const {
    return parts_.size() == 1 && parts_[0].kind == Part::Kind::kColumn ? &parts_[0] : nullptr;
  }
  // Whether it reads a column of `item` (any column when `col` is empty), directly or
  // through a call's arguments (not through a subquery).
  bool Reads(int item, const std::string& col = "") const;
  // The items whose columns it reads (directly or through calls), and the blocks of its
  // subqueries.
  void Items(std::set<int>* out) const;
  void Blocks(std::set<int>* out) const;
  // A readable form for tests and explain: columns as t<item>.<col>, subqueries as
  // EXISTS(b<block>) / GENERATOR(b<block>), calls as name(arg, ...).
  std::string DebugString() const;

  Expr& operator+=(const Expr& o);
  friend Expr operator+(Expr a, const Expr& b) {
    a += b;
    return a;
  }
  bool operator==(const Expr&) const = default;

 private:
  void Append(std::string text);
  std::vector<Part> parts_;  // adjacent text parts merged; no empty text part
};

}  // namespace mentat::query
