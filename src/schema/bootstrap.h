// The bootstrap vocabulary (Datomic/Mentat names) and loading the schema from a store.
#pragma once

#include <vector>

#include "mentat/schema.h"
#include "schema/codec.h"
#include "storage/sqlite.h"

namespace mentat::schema {

struct BootDatom {
  Entid e;
  Entid a;
  DbVal v;
};

// Every datom of the bootstrap transaction (idents and attribute definitions), without
// the transaction's own :db/txInstant. With `after_format`, only those of the system
// entities later formats added (what an upgrade from that format installs).
std::vector<BootDatom> BootstrapDatoms(int after_format = 0);

// True for the ids of the system block (ids::kSystemStart ..) that this build defines.
bool IsSystemEntity(Entid e);

// Builds a Schema from the schema datoms (:db/ident, :db/valueType ...) of `datoms`.
// Entities with a :db/valueType are attributes.
Schema BuildSchema(const std::vector<BootDatom>& datoms);

// Reads the schema datoms of the current database, and marks the attributes with an
// adaptive value index (the auto_indexes table). O(schema size): reads only the rows of
// the schema attributes through the attribute indexes.
Result<Schema> LoadSchema(storage::Connection* c);

// Applies one schema datom (assert or retract) to `schema` in place.
void ApplySchemaDatom(Schema* schema, Entid e, Entid a, const DbVal& v, bool added);

}  // namespace mentat::schema
