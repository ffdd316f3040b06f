// Excision ({:db/excise e}, Datomic's): removing an entity's datoms, current and past, for
// good (privacy requests). doc/transactions.md "Excision".
#pragma once

#include <vector>

#include "mentat/schema.h"
#include "storage/sqlite.h"
#include "tx/apply.h"

namespace mentat::tx {

struct Excision {
  Entid record;              // the entity asserting :db/excise (it stays, as the record)
  Entid target;              // the entity whose datoms go
  std::vector<Entid> attrs;  // :db.excise/attrs: only these attributes (empty: all)
};

// The excisions `changes` asks for. Errors (kSchema) for a target that is not an entity
// of :db.part/user (schema entities and transactions hold the store together) and for a
// transaction that also changes, or excises twice, the entity it excises.
Result<std::vector<Excision>> FindExcisions(const Schema& schema, const Changes& changes);

// Deletes the target's datoms from `datoms` and `history`, its fulltext documents and
// their statistics, with SQLite's secure_delete on so that the freed bytes are zeroed
// (the WAL and free pages keep nothing once the store is vacuumed: Store::vacuum).
// Bumps schema_gen, so every connection's caches re-read the attributes they hold.
// REQUIRES: inside the write transaction, after Write.
Status Excise(storage::Connection* c, const Schema& schema, const std::vector<Excision>& ex);

}  // namespace mentat::tx
