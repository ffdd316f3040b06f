// In-memory relations (sets of tuples of SQLite values) and the `mentat_rel` table-valued
// function that lets SQL read them: `SELECT ... FROM mentat_rel(?1) AS r` with a
// Relation* bound to ?1 by sqlite3_bind_pointer. Used for collection and relation
// inputs, ground constants and the derived relations of recursive rules.
//
// Equality constraints on columns (r.c0 = ?) are answered from a hash index built on
// first use, so a relation joined as the inner loop costs one probe per outer row.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mentat/status.h"
#include "schema/codec.h"
#include "storage/sqlite_api.h"

namespace mentat::query {

inline constexpr int kMaxRelArity = 32;
inline constexpr const char* kRelPointerType = "mentat_rel";

class Relation {
 public:
  explicit Relation(int arity);
  Relation(const Relation&) = delete;
  Relation& operator=(const Relation&) = delete;

  int arity() const { return arity_; }
  size_t size() const { return arity_ ? cells_.size() / arity_ : rows_; }
  bool empty() const { return size() == 0; }
  const schema::DbVal& at(size_t row, int col) const { return cells_[row * arity_ + col]; }

  // Adds `row` (arity values) unless an equal row is present; true when added.
  bool Insert(const schema::DbVal* row);
  bool Contains(const schema::DbVal* row);

  // Candidate rows whose columns in `mask` may equal `key` (in column order); callers
  // check equality (hash collisions).
  const std::vector<uint32_t>& Candidates(uint32_t mask,
                                          const std::vector<schema::DbVal>& key) const;

 private:
  size_t RowHash(const schema::DbVal* row, uint32_t mask) const;
  struct Hash {
    const Relation* r;
    size_t operator()(uint32_t row) const;
  };
  struct Eq {
    const Relation* r;
    bool operator()(uint32_t a, uint32_t b) const;
  };

  int arity_;
  size_t rows_ = 0;  // arity 0: at most one (empty) row
  std::vector<schema::DbVal> cells_;
  std::unordered_set<uint32_t, Hash, Eq> set_;
  mutable std::map<uint32_t, std::unordered_map<size_t, std::vector<uint32_t>>> indexes_;
};

// SQLite's equality on stored values: integers and reals compare numerically.
bool CellEq(const schema::DbVal& a, const schema::DbVal& b);
size_t CellHash(const schema::DbVal& v);
// Reads a sqlite3_value.
schema::DbVal CellOf(sqlite3_value* v);

// The rows of `r` as a JSON array of arrays of stored values (doc/postgres.md "Values"):
// how a relation reaches a PostgreSQL statement (PgDialect::RelationTable).
std::string RelationJson(const Relation& r);

// Registers mentat_rel and the scalar functions the compiled SQL uses (mentat_str,
// mentat_fmt_inst, mentat_fmt_uuid, mentat_div, mentat_subs, mentat_re_find,
// mentat_re_matches, mentat_eset, mentat_in_eset) on `db`, once per connection.
// Thread-safe.
Status EnsureRegistered(sqlite3* db);
// True once a registered connection has shown that an SQLite pointer value made by an
// aggregate reaches a function through a scalar subquery (SQLite 3.40 does; a host SQLite
// that drops it would make entity-set plans fail, so the planner then does not use them).
bool EntitySetsUsable();

}  // namespace mentat::query
