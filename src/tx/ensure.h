// Entity specs (Datomic's :db/ensure): an entity holding :db.entity/attrs names the
// attributes an entity must have; asserting [e :db/ensure spec] in a transaction checks e
// against the spec once the transaction's datoms are written, and fails the transaction
// when e lacks one of them or fails one of its predicates. The :db/ensure datom itself is not
// stored. doc/transactions.md "Entity specs".
#pragma once

#include <utility>
#include <vector>

#include "mentat/schema.h"
#include "storage/sqlite.h"
#include "tx/apply.h"
#include "tx/functions.h"

namespace mentat::tx {

// (entity, spec) pairs: the checks `changes` asks for, taken out of `changes` (they are
// not datoms to store, so a retraction of one retracts nothing).
std::vector<std::pair<Entid, Entid>> TakeEnsures(Changes* changes);

// Checks each entity against its spec in the store as the transaction left it: it has
// every attribute of :db.entity/attrs, and each predicate of :db.entity/preds, applied to
// that database and the entity id, returns a true value. Errors: kSchema naming the entity,
// the spec and the attributes it lacks or the predicate that failed; the predicate's own
// errors, prefixed; kSchema for a :db/ensure value that is not a spec; kUnsupported for
// predicates when `fns` is null. REQUIRES: inside the write transaction, after Write.
Status CheckEnsures(storage::Connection* c, const Schema& schema,
                    const std::vector<std::pair<Entid, Entid>>& ensures, Functions* fns);

}  // namespace mentat::tx
