// Database views: which datoms a Db value sees (current, as-of, since, history) and the
// SQL that reads them (doc/format.md, the `history` table). The one module that knows how the
// datoms and history tables make up each view; pull, query, the log and the store's index reads all
// build their SQL from the branches below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mentat/schema.h"
#include "mentat/store.h"
#include "storage/sqlite.h"

namespace mentat {

namespace views {

// The filters of a view, without their time points.
struct Shape {
  bool as_of = false, since = false, history = false;
  bool operator==(const Shape&) const = default;
  // False for the current database (one branch, the datoms table as it is).
  bool filtered() const { return as_of || since || history; }
};

// What a branch's condition compares a transaction column with.
enum class Bound : uint8_t { kAsOf, kSince, kTx };

// One condition of a branch: `column op bound`, column "tx" or "rtx" of its table.
struct Cond {
  const char* column;
  const char* op;
  Bound bound;
};

// One branch of a view: the rows of `table` ("datoms" or "history") meeting every cond,
// read as datoms whose tx is the table's `tx_column` and whose added flag is `added`.
// Only the datoms table has the attribute-index column ix (storage::IndexTerm).
struct Branch {
  const char* table;
  std::vector<Cond> conds;
  bool added = true;
  const char* tx_column = "tx";
  bool current() const { return table[0] == 'd'; }
};

// The branches of `shape`, current datoms first; their UNION ALL is the view and each
// datom of the view is in exactly one of them.
std::vector<Branch> Branches(const Shape& shape);

// The branches of one transaction's log entry (Bound::kTx): the datoms it asserted,
// current or since retracted, and those it retracted.
std::vector<Branch> TxBranches();

// The SQL of each bound: literals or parameter references; "" for a bound not used.
struct BoundSql {
  std::string as_of, since, tx;
};

// `cond` as SQL, its column written as `column_sql` (cond.column, qualified or not).
std::string CondSql(const Cond& cond, const std::string& column_sql, const BoundSql& bounds);
// What follows the column in CondSql: "<= 268435460".
std::string CondTest(const Cond& cond, const BoundSql& bounds);

// Every cond of `branch` joined with AND ("" when it has none).
std::string CondsSql(const Branch& branch, const std::string& qualifier, const BoundSql& bounds);

}  // namespace views

// A view with its time points resolved to transaction ids.
struct ResolvedView {
  std::optional<Entid> as_of;
  std::optional<Entid> since;
  bool history = false;
  views::Shape shape() const { return {as_of.has_value(), since.has_value(), history}; }
  // The resolved points as SQL literals.
  views::BoundSql bounds() const;
};

// Resolves a TxPoint: a tx id as is; an instant to the last transaction at or before it
// (0 when there is none).
Result<Entid> ResolveTxPoint(storage::Connection* c, const TxPoint& p);

// Resolves the Db's basis and filters. A Db whose basis is older than the last
// transaction reads as of its basis. With `known_last_tx`, that is the snapshot's last
// transaction (no statement reads it): a caller that assumes it checks the assumption
// afterwards (StoreImpl::ResolveViewOn).
Result<ResolvedView> ResolveView(storage::Connection* c, const Db& db,
                                 std::optional<Entid> known_last_tx = std::nullopt);

// Which of the current datoms' attribute indexes a read by attribute names (format 3,
// doc/format.md "Attribute indexes"): none (a read by entity or transaction), the value
// index (datoms_avet), the entity index (datoms_aevt), or both when the read spans
// attributes of either kind.
enum class AttrIndex { kNone, kAvet, kAevt, kBoth };
inline AttrIndex IndexOf(const Attribute& a) {
  return a.value_indexed() ? AttrIndex::kAvet : AttrIndex::kAevt;
}

// A SELECT yielding columns (e, a, v, tx[, ix], added) of every datom of a view of
// `shape` with bounds `bounds`, with `where` applied inside each branch, and the current
// datoms read through `index`. `where` may name columns e, a and v only (tx is another
// column in a retraction branch); `with_ix` adds the ix column (NULL in history branches).
std::string ViewSelect(const views::Shape& shape, const views::BoundSql& bounds,
                       const std::string& where, AttrIndex index = AttrIndex::kNone,
                       bool with_ix = false);

// A SELECT yielding columns (e, a, v[, extra]) of the current datoms of the entities in the
// JSON array of integers bound at `json_param` ("?1"), driven by the array (SQLite only: a
// CROSS JOIN from json_each, whose loop order SQLite keeps): rows come entity by entity in
// the array's order, one entity's rows grouped by attribute, values in index order, with
// no sort and no temporary index of the entities. `attr_test` restricts column a ("" or
// e.g. " IN (1, 2)"); `extra` is one more column's SQL ("" for none).
std::string CurrentOfEntities(const std::string& json_param, const std::string& attr_test,
                              const std::string& extra = "");

// ViewSelect of a resolved view: columns (e, a, v, tx, added).
inline std::string ViewSql(const ResolvedView& view, const std::string& where,
                           AttrIndex index = AttrIndex::kNone) {
  return ViewSelect(view.shape(), view.bounds(), where, index);
}

}  // namespace mentat
