// A SQL expression as analysis builds it (private to src/query): SQL text with typed
// references that are resolved only when the statement is emitted (sql.cc), because one
// pattern may read different tables in different arms of a UNION (an as-of view reads
// `datoms` in one arm and `history` in another), and the planner may move an item's
// columns (an entity set, an attribute cache, a probe):
//   Column(item, col)   a column of an item (alias t<item>, or its variant's override)
//   Exists(block)       an EXISTS subquery over a block (all its arms)
//   Generator(block)    a generator subquery: SELECT DISTINCT <outputs> of a block
// Text converts implicitly, so expressions are built by concatenation as strings are:
// "(" + a + " = " + b + ")".
#pragma once

#include <set>
#include <string>
#include <vector>

namespace mentat::query {

class Expr {
 public:
  struct Part {
    enum class Kind : unsigned char { kText, kColumn, kExists, kGenerator };
    Kind kind = Kind::kText;
    std::string text;  // kText: SQL; kColumn: the column's name
    int id = -1;       // kColumn: the item; kExists, kGenerator: the block
    bool operator==(const Part&) const = default;
  };

  Expr() = default;
  Expr(std::string text) { Append(std::move(text)); }  // NOLINT: SQL text is an Expr
  Expr(const char* text) : Expr(std::string(text)) {}  // NOLINT

  static Expr Column(int item, std::string col);
  static Expr Exists(int block);
  static Expr Generator(int block);

  bool empty() const { return parts_.empty(); }
  void clear() { parts_.clear(); }
  const std::vector<Part>& parts() const { return parts_; }
  // The one column this expression is (nullptr when it is anything else).
  const Part* AsColumn() const {
    return parts_.size() == 1 && parts_[0].kind == Part::Kind::kColumn ? &parts_[0] : nullptr;
  }
  // Whether it reads a column of `item` (any column when `col` is empty), directly.
  bool Reads(int item, const std::string& col = "") const;
  // The items whose columns it reads directly, and the blocks of its subqueries.
  void Items(std::set<int>* out) const;
  void Blocks(std::set<int>* out) const;
  // A readable form for tests and explain: columns as t<item>.<col>, subqueries as
  // EXISTS(b<block>) / GENERATOR(b<block>).
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
