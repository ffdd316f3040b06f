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

// A SELECT yielding columns (e, a, v, tx, added) of every datom in `view`, with `where`
// (over columns e, a, v, tx) applied inside each branch.
std::string ViewSql(const ResolvedView& view, const std::string& where);

}  // namespace mentat
