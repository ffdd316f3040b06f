// The transaction log (Store::tx_range), read from the datoms and history tables: a
// transaction's assertions are the datoms and history rows with its tx, its retractions
// the history rows with its rtx (doc/format.md).
#pragma once

#include <optional>
#include <vector>

#include "mentat/store.h"
#include "storage/sqlite.h"

namespace mentat {

// The transactions with from <= tx < to (to: std::nullopt for open), in commit order, at
// most `limit`, each as a TxReport without tempids. REQUIRES: inside a read transaction.
Result<std::vector<TxReport>> ReadLog(storage::Connection* c, const Schema& schema, Entid from,
                                      std::optional<Entid> to, std::optional<size_t> limit);

// A log bound: a tx id, a t (below kTxStart), or an instant (the first transaction at or
// after it; std::nullopt when there is none).
Result<std::optional<Entid>> ResolveLogBound(storage::Connection* c, const TxPoint& p);

}  // namespace mentat
