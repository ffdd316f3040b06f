// Pass 4: schema datoms in a transaction. Builds the schema after the transaction and
// enforces the alteration rules: :db/valueType never changes, cardinality many -> one
// only when no entity has two values, adding :db/unique only when no value is
// duplicated, every attribute has a value type and a cardinality, idents are unique.
#pragma once

#include <memory>

#include "mentat/schema.h"
#include "storage/sqlite.h"
#include "tx/apply.h"

namespace mentat::tx {

// Returns the new schema when `changes` touch the schema, nullptr otherwise.
Result<std::shared_ptr<Schema>> ApplySchemaChanges(storage::Connection* c, const Schema& schema,
                                                   const Changes& changes);

}  // namespace mentat::tx
