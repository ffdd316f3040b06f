// Database views in SQL: the datoms a Db value sees (doc/format.md, "views").
#pragma once

#include <optional>
#include <string>

#include "mentat/schema.h"
#include "mentat/store.h"
#include "storage/sqlite.h"

namespace mentat {

// A view with its time points resolved to transaction ids.
struct ResolvedView {
  std::optional<Entid> as_of;
  std::optional<Entid> since;
  bool history = false;
};

// Resolves a TxPoint: a tx id as is; an instant to the last transaction at or before it
// (0 when there is none).
Result<Entid> ResolveTxPoint(storage::Connection* c, const TxPoint& p);

// Resolves the Db's basis and filters. A Db whose basis is older than the last
// transaction reads as of its basis.
Result<ResolvedView> ResolveView(storage::Connection* c, const Db& db);

// Which of the current datoms' attribute indexes a read by attribute names (format 3,
// doc/format.md "Attribute indexes"): none (a read by entity or transaction), the value
// index (datoms_avet), the entity index (datoms_aevt), or both when the read spans
// attributes of either kind.
enum class AttrIndex { kNone, kAvet, kAevt, kBoth };
inline AttrIndex IndexOf(const Attribute& a) {
  return a.value_indexed() ? AttrIndex::kAvet : AttrIndex::kAevt;
}

// A SELECT yielding columns (e, a, v, tx, added) of every datom in `view`, with `where`
// (over columns e, a, v, tx) applied inside each branch, and the current datoms read
// through `index`.
std::string ViewSql(const ResolvedView& view, const std::string& where,
                    AttrIndex index = AttrIndex::kNone);

}  // namespace mentat
