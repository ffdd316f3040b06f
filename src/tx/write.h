// Pass 5: writes the changes of one transaction: datoms, history intervals, full-text
// rows, attribute statistics, partition marks and the meta rows.
#pragma once

#include "mentat/schema.h"
#include "storage/sqlite.h"
#include "tx/apply.h"
#include "tx/resolve.h"

namespace mentat::tx {

// REQUIRES: inside the write transaction. `schema` is the schema after the transaction
// (for :db/noHistory and :db/fulltext). On PostgreSQL most of its statements wait and go
// out with the next that needs an answer (storage::Statement::RunLater), so an error of
// theirs may come from the transaction's COMMIT instead.
Status Write(storage::Connection* c, const Schema& before, const Schema& after,
             const Changes& changes, Entid tx_id, int64_t tx_instant, bool schema_changed,
             const Partitions& parts);

// Moves attribute `a`'s current datoms to datoms_avet (`value_indexed`) or datoms_aevt
// (doc/format.md "Attribute indexes"). REQUIRES: inside the write transaction that also
// changes what Attribute::value_indexed() says for `a` (and bumps schema_gen).
Status MoveAttributeIndex(storage::Connection* c, Entid a, bool value_indexed);

}  // namespace mentat::tx
